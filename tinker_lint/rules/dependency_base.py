"""What a dependency-file rule is (TNK3xx): like a ``Rule``, a class with code, name, summary, docs
and its own examples, but it judges the version decisions in ``pyproject.toml``,
``requirements*.txt``, ``setup.cfg`` and lock files against ``tinker_lint.deps.known_bad``, which
``tinker-lint doctor`` uses too. The checking itself is ``tinker_lint.deps.lint``; these classes
describe and register the codes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tinker_lint.deps.known_bad import BY_CODE, KnownBad


@dataclass(frozen=True)
class DependencyExample:
    """A dependency file for the rule's tests and docs; ``expect`` lists (line, column) of its
    findings. ``code`` is the file's text (the name ``Example`` uses)."""

    filename: str
    code: str
    expect: tuple[tuple[int, int], ...] = ()
    # The project's code names a Qwen VL model (TNK303 needs that).
    qwen_vl: bool = False


class DependencyRule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    why: ClassVar[str] = ""
    fix_description: ClassVar[str] = ""
    VALID: ClassVar[tuple[DependencyExample, ...]] = ()
    INVALID: ClassVar[tuple[DependencyExample, ...]] = ()
    fixable: ClassVar[bool] = False

    @classmethod
    def known_bad(cls) -> KnownBad:
        return BY_CODE[cls.code]

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"
