"""TNK303 transformers-vl-below-5."""

from __future__ import annotations

from tinker_lint.deps.known_bad import help_template, message_template
from tinker_lint.rules.base import Example, Rule


class TransformersVlBelow5(Rule):
    code = "TNK303"
    name = "transformers-vl-below-5"
    level = "error"
    summary = "Require `transformers>=5,!=5.3.0` in a project that uses a Qwen VL model"
    message = message_template("TNK303")
    help = help_template("TNK303")
    why = """\
Before 5.0, transformers' `Qwen2VLImageProcessor` miscounts the image tokens of Qwen VL models
(Qwen2-VL, Qwen2.5-VL, Qwen3-VL), so image prompts built with it do not line up with what the model
expects.

Flagged only when the project's Python code (the files under the linted paths) names a Qwen VL model
or `Qwen2VLImageProcessor` (a text scan: `Qwen3-VL`, `qwen3_vl`, `Qwen2_5_VL...`, case-insensitive),
and a requirement admits a 4.x release (`transformers<5`, `transformers>=4.40`, or no version at all)
or a lock holds one.
"""
    fix_description = "Require `transformers>=5,!=5.3.0`, then lock again."
    INVALID = (
        Example(
            filename="requirements.txt", code="transformers<5\n", expect=((1, 1),), qwen_vl=True
        ),
        Example(
            filename="requirements.txt", code="transformers>=4.45\n", expect=((1, 1),), qwen_vl=True
        ),
    )
    VALID = (
        Example(filename="requirements.txt", code="transformers>=5,!=5.3.0\n", qwen_vl=True),
        # Without Qwen VL in the project's code, 4.x is not flagged.
        Example(filename="requirements.txt", code="transformers<5\n"),
    )
