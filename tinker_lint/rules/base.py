"""What a rule is: a class carrying its code, name, message, docs and its own examples (as in Fixit),
with a ``check`` that asks the semantic model questions and reports findings."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from packaging.version import Version

from tinker_lint.model.semantic import SemanticModel
from tinker_lint.prefilter.mentions import HOT_LOOP, TINKER
from tinker_lint.prefilter.needs import Needs, TextFacts
from tinker_lint.prefilter.sketch import Sketch
from tinker_lint.syntax.positions import NodePositions, statement_starts


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
    # CPython's tree of the same text, if the engine has one: where each statement starts, so that
    # positions are worked out statement by statement (``positions.statement_starts``).
    python_tree: ast.Module | None = field(default=None, repr=False)
    _positions: NodePositions | None = field(default=None, repr=False)

    @property
    def positions(self) -> NodePositions:
        """libcst positions of nodes, as ``PositionProvider`` gives them, each worked out only when
        asked for (syntax/positions.py): the engine asks for the nodes found, at once."""
        if self._positions is None:
            module = self.model.module
            starts = (
                None if self.python_tree is None else statement_starts(self.python_tree, module)
            )
            self._positions = NodePositions(module, starts, self.model.parent)
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line


# Each rule's ``needs()``, made once (and again if a test changes what it is made of).
_NEEDS: dict[type, tuple[Needs, bool, Needs]] = {}


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
    # What a file must contain for this rule to find anything (``prefilter/needs.py``), from the
    # tables its ``check`` matches on. The engine skips the rule on files without it.
    prefilter: ClassVar[Needs] = TINKER
    # True for a rule that reports only what runs in a hot loop: it needs ``HOT_LOOP`` too.
    needs_hot_loop: ClassVar[bool] = False

    @classmethod
    def needs(cls) -> Needs:
        """All the rule needs: its ``prefilter``, and a hot loop's if it reports only in one."""
        made = _NEEDS.get(cls)
        if made is None or made[0] is not cls.prefilter or made[1] is not cls.needs_hot_loop:
            needs = HOT_LOOP & cls.prefilter if cls.needs_hot_loop else cls.prefilter
            made = _NEEDS[cls] = (cls.prefilter, cls.needs_hot_loop, needs)
        return made[2]

    @classmethod
    def applies_to(cls, text: str, hot_loop_calls: bool = False) -> bool:
        """The text test alone: False means this rule cannot find anything in ``text``."""
        return cls.needs().admits_text(TextFacts(text), hot_loop_calls)

    @classmethod
    def may_find(cls, sketch: Sketch) -> bool:
        """The tree test alone, on CPython's tree of the file (``prefilter/sketch.py``)."""
        return cls.needs().admits_tree(sketch)

    def check(self, ctx: Context) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"
