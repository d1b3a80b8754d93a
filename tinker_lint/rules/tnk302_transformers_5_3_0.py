"""TNK302 transformers-5-3-0."""

from __future__ import annotations

from tinker_lint.deps.known_bad import help_template, message_template
from tinker_lint.rules.base import Example, Rule


class Transformers530(Rule):
    code = "TNK302"
    name = "transformers-5-3-0"
    level = "error"
    summary = "Pin `transformers>=5.3.1`: 5.3.0 loads the wrong tokenizer class for DeepSeek V2/V3"
    message = message_template("TNK302")
    help = help_template("TNK302")
    why = """\
`transformers==5.3.0` picks the wrong `tokenizer_class` for DeepSeek V2/V3 checkpoints, so the
tokens a loop sends to Tinker do not match the model's vocabulary. 5.3.1 fixes it.

Only an exact pin (`==5.3.0`, Poetry's `"5.3.0"`) or a locked 5.3.0 is flagged: a range such as
`transformers>=5` resolves to the newest release, not to 5.3.0.
"""
    fix_description = "Pin 5.3.1 or later (or add `!=5.3.0` to the range), then lock again."
    INVALID = (
        Example(filename="requirements.txt", code="transformers==5.3.0\n", expect=((1, 1),)),
        Example(
            filename="pyproject.toml",
            code='[tool.poetry.dependencies]\npython = "^3.11"\ntransformers = "5.3.0"\n',
            expect=((3, 1),),
        ),
    )
    VALID = (
        Example(filename="requirements.txt", code="transformers>=5,!=5.3.0\n"),
        Example(filename="requirements.txt", code="transformers>=5.3.0\n"),
        Example(filename="requirements.txt", code="transformers==5.3.1\n"),
    )
