"""Python loops that go through a tensor one element (or row) at a time, and the loops among them
that must stay sequential: what TNK203 (in a Tinker step) and TNK404 (in a torch step) both ask.

- ``index_reads``: which of the loop's own variables (``dataflow.loop_targets``) a subscript
  reads (``w[t]``, ``adv[t, k]``);
- ``element_subscripts``: the subscripts of the body that index a value by the loop's variables;
- ``reads_another_element``: TNK203's recurrence test (``adv[t] = ... adv[t + 1]``);
- ``carries_a_value``: the wider one TNK404 uses, by dataflow over the body in source order: an
  element written and another element of the same tensor read (GAE's ``adv[t + 1]``), or a name
  the body reads before it writes it (``lastgaelam``, ``h = cell(x[t], h)``, ``R = r + g * R``):
  each iteration needs the previous one's value, so the loop cannot be vectorized as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.analyses.dataflow import loop_targets, names_in
from tinker_lint.model.analyses.flow import _kept_walk
from tinker_lint.model.facts.scopes import LoopInfo

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView


@dataclass(frozen=True)
class ElementAccess:
    """``w[t]`` in a loop over ``t``: the indexed value's source, the subscript, and whether it is
    written (``t[i] = v``)."""

    name: str
    node: cst.Subscript
    stored: bool


def index_reads(node: cst.Subscript) -> set[str]:
    """The names the index of ``node`` reads (``x[t + 1, k]`` -> ``{t, k}``)."""
    return {name for element in node.slice for name in names_in(element.slice)}


def element_subscripts(
    model: ModelView,
    loop: LoopInfo,
    is_array: Callable[[cst.BaseExpression], bool],
    names: set[str] | None = None,
) -> list[ElementAccess]:
    """The subscripts in ``loop``'s body that index an array (``is_array``) by one of ``names``
    (the loop's own variables by default), in source order."""
    targets = loop_targets(loop, every_name=True) if names is None else names
    if not targets:
        return []
    return [
        ElementAccess(model.module.code_for_node(subscript.value), subscript, stored)
        for subscript, index, stored in _indexed_subscripts(model, loop.node)
        if index & targets and is_array(subscript.value)
    ]


@_kept_walk("indexed subscripts")
def _indexed_subscripts(
    model: ModelView, loop: cst.CSTNode
) -> list[tuple[cst.Subscript, frozenset[str], bool]]:
    """The subscripts in the body of the loop ``loop`` whose index reads a name, in source order:
    each with those names, and whether it is written (``t[i] = v``). Its own subtree only: kept
    from one lint of a buffer for the next (``flow.py``)."""
    body = loop.body if type(loop) is cst.For or type(loop) is cst.While else loop
    stored_nodes: set[int] = set()
    found: list[tuple[cst.Subscript, frozenset[str], bool]] = []
    for node in model.walk(body):
        kind = type(node)  # exact types: ``isinstance`` on libcst's classes is slow
        if kind is cst.AssignTarget or kind is cst.AugAssign:
            target = cast(cst.AssignTarget | cst.AugAssign, node).target
            if type(target) is cst.Subscript:
                stored_nodes.add(id(target))
        elif kind is cst.Subscript:
            subscript = cast(cst.Subscript, node)
            index = frozenset(index_reads(subscript))
            if index:
                found.append((subscript, index, id(subscript) in stored_nodes))
    return found


def reads_another_element(accesses: list[ElementAccess], stored: set[str]) -> bool:
    """TNK203's test: a value written by element (``stored``) is indexed twice in the body."""
    for access in accesses:
        if access.name in stored and any(
            other.name == access.name and other.node is not access.node for other in accesses
        ):
            return True
    return False


def stored_subscript_values(model: ModelView, loop: LoopInfo) -> set[str]:
    """The values the body writes by subscript (``adv[t] = ...`` -> ``adv``)."""
    found: set[str] = set()
    for node in model.walk(loop.body):
        if type(node) is cst.AssignTarget:  # exact types, as above
            target = node.target
            if type(target) is cst.Subscript:
                found.add(model.module.code_for_node(target.value))
    return found


def carries_a_value(model: ModelView, loop: LoopInfo, accesses: list[ElementAccess]) -> bool:
    """Whether an iteration of ``loop`` reads what an earlier one wrote (see the module doc)."""
    code = model.module.code_for_node
    written = {a.name for a in accesses if a.stored}
    for access in accesses:
        if access.name not in written:
            continue
        index = [code(e.slice) for e in access.node.slice]
        for other in accesses:
            if other.name == access.name and [code(e.slice) for e in other.node.slice] != index:
                return True  # ``adv[t] = ... adv[t + 1]``
    return bool(_carried_names(model, loop))


def _carried_names(model: ModelView, loop: LoopInfo) -> set[str]:
    """Names the body reads before (or while) it assigns them, in source order. A pure
    accumulator (``total += x``, read nowhere else in the body) is a reduction, not carried."""
    if not isinstance(loop.node, cst.For | cst.While):
        return set()  # a comprehension assigns nothing (walrus aside)
    targets = loop_targets(loop, every_name=True)
    assigned: set[str] = set()
    read_first: set[str] = set()
    accumulated: dict[str, int] = {}
    reads_count: dict[str, int] = {}
    for statement in _statements(loop.node.body):
        reads, writes, augmented = _reads_writes(statement)
        for name in reads:
            reads_count[name] = reads_count.get(name, 0) + 1
            if name not in assigned:
                read_first.add(name)
        for name in augmented:
            accumulated[name] = accumulated.get(name, 0) + 1
        assigned |= writes | augmented
    carried = (read_first & assigned) - targets
    return {
        name
        for name in carried
        if not (name in accumulated and reads_count.get(name, 0) == accumulated[name])
    }


def _statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The simple statements under ``node`` in source order, a condition or an iterable before
    its block; nested functions and classes left out."""
    if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
        return
    if isinstance(node, cst.BaseSmallStatement):
        yield node
        return
    if isinstance(node, cst.If | cst.While):
        yield node.test
    elif isinstance(node, cst.For):
        yield node.iter
    for child in node.children:
        if not isinstance(child, cst.BaseExpression):
            yield from _statements(child)


def _reads_writes(statement: cst.CSTNode) -> tuple[set[str], set[str], set[str]]:
    """Plain names ``statement`` reads, assigns, and accumulates into (``x += ...``)."""
    writes: set[str] = set()
    augmented: set[str] = set()
    value: cst.CSTNode = statement
    if isinstance(statement, cst.Assign):
        for target in statement.targets:
            if isinstance(target.target, cst.Name | cst.Tuple | cst.List):
                writes |= set(names_in(target.target))
        value = statement.value
    elif isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name):
        writes.add(statement.target.value)
        value = statement.value if statement.value is not None else cst.Name("_")
    elif isinstance(statement, cst.AugAssign) and isinstance(statement.target, cst.Name):
        augmented.add(statement.target.value)
        value = statement.value
    reads = set(_plain_reads(value))
    if isinstance(statement, cst.Assign | cst.AugAssign | cst.AnnAssign):
        # ``adv[t] = ...``: the subscript's index and value are read, not assigned.
        stored: list[cst.BaseExpression] = (
            [each.target for each in statement.targets]
            if isinstance(statement, cst.Assign)
            else [statement.target]
        )
        for place in stored:
            if not isinstance(place, cst.Name | cst.Tuple | cst.List):
                reads |= set(_plain_reads(place))
    return reads, writes, augmented


def _plain_reads(node: cst.CSTNode) -> Iterator[str]:
    """Plain names read (``a.b[c]`` -> ``a``, ``c``); not attribute names, keywords, or names
    inside nested functions."""
    if isinstance(node, cst.Name):
        yield node.value
        return
    if isinstance(node, cst.Attribute):
        yield from _plain_reads(node.value)
        return
    if isinstance(node, cst.Arg):
        yield from _plain_reads(node.value)
        return
    if isinstance(node, cst.Lambda | cst.FunctionDef | cst.ClassDef):
        return
    for child in node.children:
        yield from _plain_reads(child)
