"""What a rule is: a class carrying its code, name, message, docs and its own examples (as in Fixit),
with a ``check`` that asks the semantic model questions and reports findings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from packaging.version import Version

from tinker_lint.model import sdk
from tinker_lint.model.positions import NodePositions
from tinker_lint.model.semantic import SemanticModel

# Text a file must contain for a Tinker rule to find anything in it: a call of a Tinker method, or a
# Tinker type. Files without it are never parsed by libcst (shared/performance-notes.md: only 58 of
# 303 cookbook files submit anything). Measured cheap: one regex scan per file.
TINKER_CALLS = re.compile(
    r"\.(?:forward_backward\w*|optim_step\w*|forward(?:_async)?|sample(?:_async)?"
    r"|compute_logprobs\w*|save_state\w*|save_weights\w*|load_state\w*|create_\w*client\w*"
    r"|get_info\w*|get_tokenizer)\s*\(|ServiceClient|TrainingClient|SamplingClient|APIFuture"
)


def _evidence_terms() -> tuple[str, ...]:
    """Lower-case text one of which a file must contain for the model to take anything in it for
    Tinker's (see ``SemanticModel.sdk_call`` and the type inference): a client class or
    ``APIFuture`` (also what a ``tinker.`` qualified name ends with), a method only Tinker has, a
    receiver name hint, a keyword only Tinker's methods take; and ``get_tokenizer``, a setup call
    of its own (TNK107). A term inside another is enough alone."""
    terms = {
        *(name.lower() for name in sdk.CLIENT_CLASSES),
        "apifuture",
        "get_tokenizer",
        *sdk.DISTINCTIVE,
        *(hint for hint, _ in sdk.RECEIVER_NAME_HINTS),
        *sdk.TINKER_ONLY_KEYWORDS,
    }
    return tuple(sorted(t for t in terms if not any(o != t and o in t for o in terms)))


EVIDENCE_TERMS = _evidence_terms()
_last_scanned: list[tuple[str, bool]] = []
_last_asked: list[tuple[str, bool]] = []


def tinker_call_in(text: str) -> bool:
    """Whether ``TINKER_CALLS`` occurs in ``text``. Every rule asks this of the same file in turn,
    and the scan is most of a pre-filter's cost (0.4 s for CPython's 34 MB standard library), so
    the answer for the last text is kept."""
    if _last_scanned and _last_scanned[0][0] is text:
        return _last_scanned[0][1]
    found = TINKER_CALLS.search(text) is not None
    _last_scanned[:] = [(text, found)]
    return found


def mentions_tinker(text: str) -> bool:
    """Whether a Tinker call (``TINKER_CALLS``) is in ``text``, and the evidence the model needs to
    take one for Tinker's (``EVIDENCE_TERMS``, case-insensitively, as receiver names are matched):
    CPython's standard library has 20 files with the first and none with the second. (A loop made
    hot by ``hot-loop-calls`` needs no such evidence: the hot-loop rules ask ``tinker_call_in``.)"""
    if _last_asked and _last_asked[0][0] is text:
        return _last_asked[0][1]
    found = tinker_call_in(text)
    if found:
        lowered = text.lower()
        found = any(term in lowered for term in EVIDENCE_TERMS)
    _last_asked[:] = [(text, found)]
    return found


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
    # A tinker_lint.fix plan, or a function making one (None: no safe rewrite). Made lazily by
    # the engine, for findings that survive ``noqa``; a failure there never loses the finding.
    fix: object | None = None


@dataclass
class Context:
    """What a rule may ask besides the model: the target SDK version, the file's path, and the
    line of a node (for messages that point elsewhere, e.g. at the submit that makes a loop hot)."""

    model: SemanticModel
    tinker_version: Version
    path: str = "<stdin>"
    extra: dict[str, object] = field(default_factory=dict)
    _positions: NodePositions | None = field(default=None, repr=False)

    @property
    def positions(self) -> NodePositions:
        """libcst positions of nodes, as ``PositionProvider`` gives them, each worked out only when
        asked for (model/positions.py): the engine asks for the nodes found, at once."""
        if self._positions is None:
            self._positions = NodePositions(self.model.module)
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line


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
    # True for a rule that reports only what runs in a hot loop. A loop is hot through a Tinker
    # submit, which the model sees only with the evidence ``mentions_tinker`` looks for, or through
    # ``hot-loop-calls``: without that setting, the engine skips such a rule on files without it.
    needs_hot_loop: ClassVar[bool] = False

    @classmethod
    def applies_to(cls, text: str) -> bool:
        """A cheap text test: False means this rule cannot find anything in ``text``."""
        return mentions_tinker(text)

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"
