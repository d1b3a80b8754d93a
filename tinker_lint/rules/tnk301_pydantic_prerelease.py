"""TNK301 pydantic-prerelease."""

from __future__ import annotations

from tinker_lint.deps.known_bad import help_template, message_template
from tinker_lint.rules.base import Example, Rule


class PydanticPrerelease(Rule):
    code = "TNK301"
    name = "pydantic-prerelease"
    level = "error"
    summary = (
        "Require a stable pydantic (`pydantic<2.13` or `pydantic>=2.13.0`), not a 2.13 pre-release"
    )
    message = message_template("TNK301")
    help = help_template("TNK301")
    why = """\
A pydantic 2.13 pre-release makes `model_dump()` very slow on large payloads. The Tinker SDK dumps
every request with pydantic, so `forward_backward` submission stalls for minutes: the training loop
looks hung while the server waits. Step one of a slowness triage is the environment.

A requirement is flagged when it admits a 2.13 pre-release under PEP 440's rules: `pydantic>=2` does
not (a pre-release is admitted only when the specifier names one), `pydantic>=2.13.0b1` does, and
so does any range under pip's `--pre`, uv's `prerelease = "allow"` or Poetry's
`allow-prereleases = true`. A locked 2.13 pre-release (`uv.lock`, `poetry.lock`, `pylock.toml`) is
flagged at its `version` line.
"""
    fix_description = "Require a stable release, then lock again."
    INVALID = (
        Example(filename="requirements.txt", code="pydantic>=2.13.0b1\n", expect=((1, 1),)),
        Example(
            filename="pyproject.toml",
            code='[project]\nname = "trainer"\ndependencies = [\n    "pydantic==2.13.0b2",\n]\n',
            expect=((4, 6),),
        ),
    )
    VALID = (
        Example(filename="requirements.txt", code="pydantic>=2\n"),
        Example(filename="requirements.txt", code="pydantic>=2.13.0\n"),
        Example(filename="requirements.txt", code="pydantic<2.13\n"),
    )
