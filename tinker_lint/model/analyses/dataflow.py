"""Def-use questions on one module's tree, asked by rules and analyses alike: the statement a node
is in, the names a target binds, and the reads of names after a statement in its function (each
``Name`` node of a function or of the module, in source order, indexed once per scope).

The one owner of these concepts: a rule that needs "where is this value used later" asks here,
not a copy of its own (issue 31). Names only, no types: what a read means is the caller's question.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

STATEMENT = (cst.BaseSmallStatement, cst.BaseCompoundStatement)


def target_names(target: cst.CSTNode) -> set[str]:
    """The names an assignment, ``for`` or comprehension target binds: ``x``, ``a, (b, c)``,
    ``[a, b]``, ``first, *rest``. Attributes and subscripts bind none."""
    names: set[str] = set()
    targets = [target]
    while targets:
        node = targets.pop()
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Tuple | cst.List):
            targets.extend(element.value for element in node.elements)
        elif isinstance(node, cst.StarredElement):
            targets.append(node.value)
    return names


def assigned_names(statement: cst.CSTNode) -> set[str]:
    """The names an assignment statement (``=``, annotated, augmented) binds; none for any other
    statement."""
    if isinstance(statement, cst.Assign):
        targets: list[cst.BaseExpression] = [t.target for t in statement.targets]
    elif isinstance(statement, cst.AnnAssign | cst.AugAssign):
        targets = [statement.target]
    else:
        return set()
    return {name for target in targets for name in target_names(target)}


def chain_root(expr: cst.BaseExpression, *, attributes: bool) -> cst.BaseExpression:
    """What a chain of method calls and subscripts starts from: ``x.detach().float()[0]`` ->
    ``x``; with ``attributes`` also through attributes (``batch.x["ids"].cuda()`` -> ``batch``),
    without them to the dotted name (``self.loss.item()`` -> ``self.loss``)."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, cst.Subscript) or (attributes and isinstance(expr, cst.Attribute)):
            expr = expr.value
        else:
            return expr


@dataclass
class References:
    """Every node of one function (or of the module, nested functions included) by its place in
    source order, and its ``Name`` nodes by name, with their places."""

    order: dict[int, int] = field(default_factory=dict)  # id(node) -> place
    names: dict[str, list[tuple[int, cst.Name]]] = field(default_factory=dict)


class Dataflow:
    """The def-use questions of one model (``ModelView.dataflow``)."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        self._references: dict[int, References] = {}

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement strictly around ``node`` (None at the module)."""
        parent = self.model.parent(node)
        while parent is not None and not isinstance(parent, STATEMENT):
            parent = self.model.parent(parent)
        return parent

    def up_to_statement(self, node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
        """Each (child, parent) from ``node`` up to, not including, its statement: the
        expressions a value goes through inside the statement that holds it."""
        child = node
        parent = self.model.parent(node)
        while parent is not None and not isinstance(parent, STATEMENT):
            yield child, parent
            child, parent = parent, self.model.parent(parent)

    def references(self, scope_node: cst.CSTNode) -> References:
        """The nodes of ``scope_node`` (a function, or the module) in source order: walked once."""
        key = id(scope_node)
        found = self._references.get(key)
        if found is None:
            found = self._references[key] = References()
            for place, node in enumerate(self.model.walk(scope_node)):
                found.order[id(node)] = place
                if isinstance(node, cst.Name):
                    found.names.setdefault(node.value, []).append((place, node))
        return found

    def reads_after(
        self, scope_node: cst.CSTNode, names: set[str], statement: cst.CSTNode
    ) -> list[tuple[cst.Name, cst.CSTNode]]:
        """Each use of ``names`` after the start of ``statement`` in ``scope_node`` (its own
        nodes included: ``total += x`` reads ``total``), in source order, with its parent node:
        every occurrence but a plain assignment's target (``x = ...`` rebinds)."""
        found = self.references(scope_node)
        start = found.order.get(id(statement), -1)
        uses: list[tuple[int, cst.Name, cst.CSTNode]] = []
        for name in sorted(names):
            for place, node in found.names.get(name, ()):
                if place <= start:
                    continue
                parent = self.model.parent(node)
                if parent is not None and not (
                    isinstance(parent, cst.AssignTarget) and parent.target is node
                ):
                    uses.append((place, node, parent))
        uses.sort(key=lambda use: use[0])
        return [(node, parent) for _, node, parent in uses]
