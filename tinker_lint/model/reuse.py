"""What of one lint's model may serve the next lint of the same file (an editor's, on each edit).

The language server lints a buffer on every keystroke, and most of a module's function summaries
(``summaries.py``) are what they were: an edit changes one function. ``syntax/parse.py`` hands back
the previous parse's top-level statements, as the same node objects, wherever the text around
them did not change; a summary is taken over only when nothing it may have read changed. What a
summary may read is bounded by names, from above:

- its own top-level statement (the function or class it is in);
- the statements that may bind a name it mentions, in the module scope or in the module-wide
  tables (classes and their methods, ``self.x`` attributes by class name, imports anywhere): a
  ``def`` or ``class`` binds its own name, the classes in it and what it imports; any other
  statement, every name in it; and the statements with a class whose bases mention such a name
  (the overrides of an interface method). Each of those, in turn, by the same rule;
- the rest of the project, and the settings.

So a statement whose closure under "mentions a name bound there" holds no changed statement (one
new to this parse, or one of the last parse gone from it) reads the same things it read last time.
Where the only changed statements in it are edited definitions (a ``def`` or ``class`` replacing
one of the same name, binding nothing else, reaching nothing that depends on an edit), what it
reads of them is their functions' summaries and the types calls of them give: those are made
again and compared with the kept ones first (``Summaries._same_as_before``).
Everything else the summaries read is checked as a whole (``KeptModel``): the same settings, the
same answers from the project, and no recursion cut anywhere while they were made (where a cycle
is cut, what is kept depends on the order things were asked in, and reuse changes that order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from tinker_lint.model.facts.carry import Carry
from tinker_lint.model.facts.tree import child_nodes

if TYPE_CHECKING:
    from tinker_lint.model.analyses.summaries import ProjectView, Summary


@dataclass(frozen=True, eq=False)
class StatementFacts:
    """The names one top-level statement mentions and may bind (see the module's docstring)."""

    mentions: frozenset[str]
    binds: frozenset[str]
    bases: frozenset[str]  # names in the bases (and keywords) of the classes in it
    header: str = ""  # a ``class`` statement's bases and keywords, as written (their order counts)


def statement_facts(statement: cst.CSTNode) -> StatementFacts:
    mentions: set[str] = set()
    binds: set[str] = set()
    bases: set[str] = set()
    for node in _walk(statement):
        kind = type(node)
        if kind is cst.Name:
            mentions.add(node.value)  # type: ignore[attr-defined]
        elif kind is cst.ClassDef:
            binds.add(node.name.value)  # type: ignore[attr-defined]
            for arg in (*node.bases, *node.keywords):  # type: ignore[attr-defined]
                bases.update(_names(arg.value))
        elif kind is cst.Import or kind is cst.ImportFrom:
            binds.update(_names(node))
    header = ""
    if type(statement) is cst.FunctionDef:
        binds.add(statement.name.value)
    elif type(statement) is cst.ClassDef:
        empty = cst.Module([])
        header = ", ".join(
            empty.code_for_node(arg) for arg in (*statement.bases, *statement.keywords)
        )
    else:
        binds |= mentions  # an assignment, an ``if``, a ``try``...: whatever it may bind
    return StatementFacts(frozenset(mentions), frozenset(binds), frozenset(bases), header)


def _names(node: cst.CSTNode) -> Iterator[str]:
    for inner in _walk(node):
        if type(inner) is cst.Name:
            yield inner.value


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (layout left out), lambdas' bodies included: the model's own
    tree index does not enter those, but a name mentioned there is mentioned."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child_nodes(current))


@dataclass
class Plan:
    """Which statements' kept summaries may serve: ``reusable`` maps each to the edited functions
    whose results must be what they were (``Summaries`` checks them when it gets there); an
    edited function pairs with the one it replaces in ``replaced`` (new id -> old id)."""

    reusable: dict[int, frozenset[int]] = field(default_factory=dict)
    replaced: dict[int, int] = field(default_factory=dict)


def plan(
    old: dict[int, tuple[cst.CSTNode, StatementFacts]],
    old_order: list[int],
    body: Iterable[cst.CSTNode],
    facts: dict[int, tuple[cst.CSTNode, StatementFacts]],
) -> Plan:
    """What of the module whose statements were ``old`` (in the order ``old_order``) serves the
    module of ``body`` (whose statements' facts are ``facts``).

    A statement is reusable when it is the same node and no changed statement binds a name in its
    closure; or when the only changed statements there are edited definitions (a top-level
    ``def`` or ``class`` replacing one of the same name, binding nothing else) that cannot reach
    back: what the others read of such a definition is its functions' summaries, the types they
    return and whether they have a body, which are compared then."""
    statements = list(body)
    kept = [s for s in statements if id(s) in old and old[id(s)][0] is s]
    # The statements both have, in the same order (parse.py keeps a prefix and a suffix), or none.
    kept_ids = {id(s) for s in kept}
    if [i for i in old_order if i in kept_ids] != [id(s) for s in kept]:
        return Plan()
    added = {id(s): facts[id(s)] for s in statements if id(s) not in kept_ids}
    gone = {key: entry for key, entry in old.items() if key not in kept_ids}
    mentioned_by: dict[str, list[int]] = {}
    bound_by: dict[str, list[int]] = {}
    for statement in kept:
        found = facts[id(statement)][1]
        for name in found.mentions:
            mentioned_by.setdefault(name, []).append(id(statement))
        for name in found.binds | found.bases:
            bound_by.setdefault(name, []).append(id(statement))

    def dependents(changed: Iterable[StatementFacts]) -> set[int]:
        """The kept statements whose closure holds a name one of ``changed`` binds."""
        reached: set[int] = set()
        pending = list(changed)
        while pending:
            found = pending.pop()
            for name in found.binds | found.bases:
                for key in mentioned_by.get(name, ()):
                    if key not in reached:
                        reached.add(key)
                        pending.append(facts[key][1])
        return reached

    def closure(start: StatementFacts) -> tuple[set[int], set[str]]:
        """The kept statements ``start`` reaches, and every name mentioned on the way."""
        reached: set[int] = set()
        names = set(start.mentions)
        pending = list(names)
        while pending:
            for key in bound_by.get(pending.pop(), ()):
                if key not in reached:
                    reached.add(key)
                    fresh = facts[key][1].mentions - names
                    names |= fresh
                    pending.extend(fresh)
        return reached, names

    edited = _edited_definitions(added, gone)
    # A name bound by a kept statement too (``class C`` nested in a function shares ``C``'s
    # method and ``self.x`` tables, keyed by class name) is read there in ways not compared.
    also_bound = {name for s in kept for name in facts[id(s)][1].binds}
    edited = {
        new_id: old_id
        for new_id, old_id in edited.items()
        if not added[new_id][1].binds & also_bound
    }
    replaced = _checkable(edited, added, gone, dependents, closure)
    soft_dependents = {new_id: dependents([added[new_id][1]]) for new_id in replaced}
    hard = [entry[1] for key, entry in added.items() if key not in replaced]
    hard += [entry[1] for key, entry in gone.items() if key not in replaced.values()]
    tainted = dependents(hard)
    result = Plan(replaced=replaced)
    for key in kept_ids - tainted:
        result.reusable[key] = frozenset(
            new_id for new_id, depending in soft_dependents.items() if key in depending
        )
    return result


def _checkable(
    edited: dict[int, int],
    added: dict[int, tuple[cst.CSTNode, StatementFacts]],
    gone: dict[int, tuple[cst.CSTNode, StatementFacts]],
    dependents: Callable[[Iterable[StatementFacts]], set[int]],
    closure: Callable[[StatementFacts], tuple[set[int], set[str]]],
) -> dict[int, int]:
    """The edited definitions whose results can be compared (new id -> old id): together, what
    they reach never depends on one of them (no cycle through an edit, so each is made as a fresh
    lint makes it, whoever asks first), and none reaches another changed statement but each
    other. Else none: they are edits like any other."""
    if not edited:
        return {}
    reached: set[int] = set()
    names: set[str] = set()
    closures = {new_id: closure(added[new_id][1]) for new_id in edited}
    for found, mentioned in closures.values():
        reached |= found
        names |= mentioned
    depending = dependents(added[new_id][1] for new_id in edited)
    hard = [
        entry[1].binds | entry[1].bases
        for key, entry in (*added.items(), *gone.items())
        if key not in edited and key not in edited.values()
    ]
    if reached & depending or any(names & binds for binds in hard):
        return {}
    # Among themselves: an order, each reaching only those before it.
    reaches = {
        new_id: {
            other
            for other in edited
            if other != new_id and closures[new_id][1] & added[other][1].binds
        }
        for new_id in edited
    }
    done: set[int] = set()
    while len(done) < len(reaches):
        ready = [key for key, those in reaches.items() if key not in done and those <= done]
        if not ready:
            return {}  # a cycle
        done.update(ready)
    return dict(edited)


def _edited_definitions(
    added: dict[int, tuple[cst.CSTNode, StatementFacts]],
    gone: dict[int, tuple[cst.CSTNode, StatementFacts]],
) -> dict[int, int]:
    """New top-level ``def``s and ``class``es that replace one of the same kind and name (new id
    -> old id): each name once on each side, binding nothing but itself (no class, no import in
    it); a class with the same bases, in the same order."""

    def by_name(
        side: dict[int, tuple[cst.CSTNode, StatementFacts]],
    ) -> dict[tuple[str, str, str], list[int]]:
        names: dict[tuple[str, str, str], list[int]] = {}
        for key, (node, found) in side.items():
            if isinstance(node, cst.FunctionDef | cst.ClassDef):
                name = node.name.value
                if found.binds == {name}:
                    names.setdefault((type(node).__name__, name, found.header), []).append(key)
        return names

    new, old = by_name(added), by_name(gone)
    return {
        new[name][0]: old[name][0]
        for name in sorted(new.keys() & old.keys())
        if len(new[name]) == 1 and len(old[name]) == 1
    }


# ==========================================================================================
# The project, as the summaries asked it
# ==========================================================================================
class RecordingView:
    """A ``ProjectView`` that notes every question asked of it and its answer (until ``stop``),
    so that the next lint can ask them again and see whether the project still answers the same."""

    def __init__(self, view: ProjectView) -> None:
        self.view = view
        self.asked: dict[tuple[str, tuple[str, ...]], Any] = {}
        self.recording = True

    @property
    def path(self) -> str:
        return self.view.path

    def __getattr__(self, name: str) -> Any:  # what the view has beyond the protocol
        return getattr(self.view, name)

    def absolute_name(self, name: str) -> str:
        return self.view.absolute_name(name)

    def function(self, qualified: str) -> Summary | None:
        found = self.view.function(qualified)
        if self.recording:
            self.asked[("function", (qualified,))] = _plain(found)
        return found

    def method(self, qualified_class: str, name: str) -> Summary | None:
        found = self.view.method(qualified_class, name)
        if self.recording:
            self.asked[("method", (qualified_class, name))] = _plain(found)
        return found

    def is_class(self, qualified: str) -> bool:
        found = self.view.is_class(qualified)
        if self.recording:
            self.asked[("is_class", (qualified,))] = found
        return found

    def holds(self, qualified: str) -> bool:
        found = self.view.holds(qualified)
        if self.recording:
            self.asked[("holds", (qualified,))] = found
        return found


def _plain(summary: Summary | None) -> Any:
    """A summary as compared across lints: with its wait sites' lines (``Summary`` equality
    leaves them out), which a message may show."""
    return None if summary is None else summary.to_json()


def answers_same(view: ProjectView, asked: dict[tuple[str, tuple[str, ...]], Any]) -> bool:
    """Whether ``view`` answers each question as recorded."""
    for (method, args), answer in asked.items():
        found = getattr(view, method)(*args)
        if (found if method in ("is_class", "holds") else _plain(found)) != answer:
            return False
    return True


# ==========================================================================================
# What is kept, per file
# ==========================================================================================
@dataclass(eq=False)
class KeptModel:
    """One lint's summaries of a file, for the next lint of it."""

    statements: dict[int, tuple[cst.CSTNode, StatementFacts]]  # id -> (statement, its facts)
    order: list[int]  # the statements' ids, in order
    settings: tuple[Any, ...]  # patterns, module name, path: what the model was made with
    consulted: frozenset[str]  # the project files the file's pre-filters had consulted
    asked: dict[tuple[str, tuple[str, ...]], Any]  # the project's answers
    # id(function node) -> (the node, its summary with wait sites pointing at no model)
    summaries: dict[int, tuple[cst.CSTNode, Summary]] = field(default_factory=dict)
    # id(function node) -> the types a call of it gives (None: a cut on the way)
    returns: dict[int, frozenset[Any] | None] = field(default_factory=dict)
    # id(top-level statement) -> its functions' node ids, in order
    functions: dict[int, list[int]] = field(default_factory=dict)


_STAGE = "summaries"  # its name in a buffer's carry-over


def take(carry: Carry) -> KeptModel | None:
    """What the last lint of the buffer kept (it is taken: a lint keeps its own)."""
    return cast(KeptModel | None, carry.pop(_STAGE))


def keep(carry: Carry, kept: KeptModel) -> None:
    carry.put(_STAGE, kept)
