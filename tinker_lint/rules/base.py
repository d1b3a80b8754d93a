"""What a rule is: one declaration, as in Fixit. A class carries its code and name, the message
of its findings, its docs (summary, why, how to fix), the tinker versions it applies to, its own
examples (with what ``--fix`` makes of them) and its fix planner (``rules/fixes/``), with a
``check`` that asks the semantic model questions and reports findings.

Rules on dependency files (TNK3xx) are declared the same way; what differs is what checks them:
``tinker_lint.deps`` judges the files against their ``known_bad()`` entry, not a ``check``.
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst
from packaging.version import Version

from tinker_lint.codes import Level
from tinker_lint.deps.known_bad import BY_CODE, KnownBad
from tinker_lint.fix.plan import FixPlan
from tinker_lint.model.query import SemanticModel
from tinker_lint.prefilter.mentions import HOT_LOOP, TINKER
from tinker_lint.prefilter.needs import Needs, TextFacts
from tinker_lint.prefilter.sketch import Sketch
from tinker_lint.syntax.positions import NodePositions, statement_starts


@dataclass(frozen=True)
class Example:
    """A snippet for the rule's tests and docs; ``expect`` lists (line, column) of its findings.

    ``fixed``: what ``tinker-lint --fix`` makes of an INVALID example (required for a rule with a
    fix; ``tests/test_rule_examples.py`` runs the fix and compares). ``filename``: a dependency
    file's name (TNK3xx); None for Python. ``qwen_vl``: the project's code names a Qwen VL model
    (TNK303 needs that)."""

    code: str
    expect: tuple[tuple[int, int], ...] = ()
    tinker_version: str | None = None
    fixed: str | None = None
    filename: str | None = None
    qwen_vl: bool = False


# A fix planner: from what a rule's ``check`` found to a FixPlan (None: no safe rewrite).
FixPlanner = Callable[..., FixPlan | None]
# What a finding carries for ``--fix``: a plan, a function making one (called only for findings
# that survive ``noqa``), or nothing.
FindingFix = FixPlan | Callable[[], FixPlan | None] | None


@dataclass(frozen=True)
class Autofix:
    """A rule's fix: its title (what ``--fix`` does, in one line) and its planner, the function in
    ``rules/fixes/tnkNNN.py`` that the rule's ``check`` hands each finding to."""

    title: str
    planner: FixPlanner


@dataclass(frozen=True)
class Finding:
    node: cst.CSTNode
    message: str
    # A tinker_lint.fix plan, or a function making one (None: no safe rewrite). Made lazily by
    # the engine, for findings that survive ``noqa``; a failure there never loses the finding.
    fix: FindingFix = None
    # The rule's ``help`` filled in: why, the evidence, what to do (``Diagnostic.help``).
    help: str = ""


@dataclass
class Context:
    """What a rule may ask besides the model: the target SDK version, the file's path, and the
    line of a node (for messages that point elsewhere, e.g. at the submit that makes a loop hot)."""

    model: SemanticModel
    tinker_version: Version
    path: str = "<stdin>"
    extra: dict[str, object] = field(default_factory=dict)
    # The settings' ``preview``: report the less certain cases a rule keeps for preview.
    preview: bool = False
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
            # One set of positions per module: the model's own (its helpers' wait sites) too.
            self._positions = self.model.use_positions(
                NodePositions(module, starts, self.model.parent)
            )
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line


# Each rule's ``needs()``, made once (and again if a test changes what it is made of).
_NEEDS: dict[type, tuple[Needs, bool, Needs]] = {}


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    # How serious its findings are (SARIF ``level``; GitHub ``::error``/``::warning``/``::notice``).
    # Written as one line of the class body, ``level = "warning"``: the code registry reads that
    # line without importing the rule (``codes.level_of``). error: the program is wrong or idles
    # the server; warning: likely slow, or deprecated; note: slow only for large payloads.
    level: ClassVar[Level]
    # Off by default (ruff's explicit-preview-rules, bugbear's B9xx): the rule runs only when a
    # selector names its code exactly (``--extend-select TNK403``; flake8's ``--tinker-enable``).
    # Written as one line of the class body, ``opt_in = True``, read without importing the rule
    # (``codes.is_opt_in``), as the level is.
    opt_in: ClassVar[bool] = False
    # One line: what is wrong and what to do (listings, the top of the docs page).
    summary: ClassVar[str]
    # The message of each finding: a ``str.format`` template whose fields the check fills in
    # (``self.finding(node, submit=...)``). What is wrong and where, read in one glance: the
    # concise line stays within ~120 columns (``tests/test_message_length.py``).
    message: ClassVar[str]
    # The finding's help: why it matters, the evidence and the fix; a template filled with the
    # same fields (the ``text`` report's ``= help:`` line, and the docs page's examples).
    help: ClassVar[str] = ""
    # For a rule whose findings say different things (TNK205: a file read again, per-step data
    # dumped), each kind's message and help templates by name: ``self.finding(node,
    # variant="read", ...)``. The prose is declared here, not built by the check: the fields are
    # what the code shows (a call, a name, a line). ``message`` and ``help`` are then the first's.
    variants: ClassVar[Mapping[str, tuple[str, str]]] = {}
    # Markdown for the docs page: why it matters, with evidence, and what is not reported.
    why: ClassVar[str]
    # Markdown for the docs page's "Fix" section: how to fix it by hand (and what ``--fix`` does).
    fix_description: ClassVar[str]
    # The rule's fix, if ``--fix`` has one (its planner lives in ``rules/fixes/tnkNNN.py``).
    autofix: ClassVar[Autofix | None] = None
    # The first tinker version the rule applies to (None: every version); the engine runs the
    # rule only when the project targets this version or a newer one.
    min_tinker_version: ClassVar[Version | None] = None
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    # What a file must contain for this rule to find anything (``prefilter/needs.py``), from the
    # tables its ``check`` matches on. The engine skips the rule on files without it.
    prefilter: ClassVar[Needs] = TINKER
    # True for a rule that reports only what runs in a hot loop: it needs ``HOT_LOOP`` too.
    needs_hot_loop: ClassVar[bool] = False
    # False for a rule that needs no Tinker in the file (the PyTorch rules, TNK4xx): the engine's
    # first gate (the file names Tinker) does not apply to it.
    needs_tinker: ClassVar[bool] = True
    # True for a rule that judges calls of the project's helpers by what they do (their
    # summaries): a file that imports such a helper may hold its findings whatever its own text
    # says, so the pre-filters let it through then.
    sees_helpers: ClassVar[bool] = False
    # Codes whose findings this rule's finding at the same node replaces, being the more specific
    # diagnosis of the same problem (TNK103 "sampling one request at a time" over TNK101 "waiting
    # before the next submit" on one sampling wait): one finding per node (``without_superseded``).
    # Only a rule that ran can supersede: with it deselected or ignored, the other stays.
    supersedes: ClassVar[tuple[str, ...]] = ()

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

    @classmethod
    def applies_at(cls, tinker_version: Version) -> bool:
        """Whether the rule applies to a project targeting ``tinker_version``."""
        return cls.min_tinker_version is None or tinker_version >= cls.min_tinker_version

    @classmethod
    def message_fields(cls) -> tuple[str, ...]:
        """The fields of ``message`` and then ``help``, in order, each once (``{submit}`` ->
        ``submit``)."""
        fields = (
            f
            for pair in cls.templates()
            for template in pair
            for _, f, _, _ in string.Formatter().parse(template)
            if f is not None
        )
        return tuple(dict.fromkeys(fields))

    @classmethod
    def templates(cls) -> list[tuple[str, str]]:
        """Every (message, help) pair a finding of the rule may be made from."""
        return list(cls.variants.values()) or [(cls.message, cls.help)]

    def finding(
        self, node: cst.CSTNode, fix: FindingFix = None, variant: str = "", **fields: object
    ) -> Finding:
        """A finding at ``node``, its message and help the rule's templates (``variant``'s, for
        a rule with ``variants``) filled with ``fields``."""
        message, help = self.variants[variant] if variant else (self.message, self.help)
        return Finding(node, message.format(**fields), fix, help.format(**fields))

    def check(self, ctx: Context) -> Iterator[Finding]:
        """The findings in ``ctx``'s file; dependency-file rules have none here (see the module
        docstring)."""
        raise NotImplementedError

    @classmethod
    def known_bad(cls) -> KnownBad | None:
        """A dependency-file rule's entry in the known-bad table (``tinker_lint.deps``)."""
        return BY_CODE.get(cls.code)

    @classmethod
    def docs_path(cls) -> str:
        return f"docs/rules/{cls.code}.md"


def without_superseded(found: list[tuple[type[Rule], Finding]]) -> list[tuple[type[Rule], Finding]]:
    """``found`` without the findings another finding at the same node supersedes
    (``Rule.supersedes``), in the same order. Applied before ``noqa``: silencing the more specific
    finding silences the wait, it does not bring back the general one."""
    dropped = {(id(finding.node), code) for rule, finding in found for code in rule.supersedes}
    if not dropped:
        return found
    return [(rule, f) for rule, f in found if (id(f.node), rule.code) not in dropped]
