"""What a rule is: a class carrying its code, name, message, docs and its own examples (as in Fixit),
with a ``check`` that asks the semantic model questions and reports findings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from packaging.version import Version

from tinker_lint.model.semantic import SemanticModel

# Text a file must contain for any Tinker rule to find something in it; files without it are never
# parsed (see shared/performance-notes.md: only 58 of 303 cookbook files submit anything).
TINKER_MARKERS = re.compile(
    r"tinker|forward_backward|optim_step|save_weights|save_state|sampling_client|training_client"
    r"|sampler|sampling_params|num_samples|prompt_logprobs_last_n|loss_fn|ServiceClient"
)


@dataclass(frozen=True)
class Example:
    """A snippet for the rule's tests and docs; ``expect`` lists (line, column) of its findings."""

    code: str
    expect: tuple[tuple[int, int], ...] = ()
    tinker_version: str | None = None


@dataclass(frozen=True)
class Finding:
    node: cst.CSTNode
    message: str
    fix: object | None = None  # a tinker_lint.fix plan, attached by fixable rules


@dataclass
class Context:
    """What a rule may ask besides the model: the target SDK version and the file's path."""

    model: SemanticModel
    tinker_version: Version
    path: str = "<stdin>"
    extra: dict[str, object] = field(default_factory=dict)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    # One line: what is wrong and what to do. Findings may say more (which call, which line).
    summary: ClassVar[str]
    # Markdown for the docs page: why it matters, with evidence.
    why: ClassVar[str] = ""
    fix_description: ClassVar[str] = ""
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    fixable: ClassVar[bool] = False
    prefilter: ClassVar[re.Pattern[str]] = TINKER_MARKERS

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"
