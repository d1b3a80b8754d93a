"""Every occurrence of every name and attribute in a module, with where it sits, and Python's
scoping rules to tell which occurrences are the same variable.

Fix plans ask questions the rules do not: is this variable read anywhere else (a closure, another
function, a class body)? Which names are free for a new variable? The semantic model's tree index
skips lambda bodies, so this is one full libcst pass of its own, made only for files with a
fixable finding and shared by all their plans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:  # the rules import the fixes
    from tinker_lint.model.semantic import SemanticModel
    from tinker_lint.rules.base import Context

# Code with its own local names, run at another time than the statements around it.
Owner = cst.FunctionDef | cst.Lambda | cst.ClassDef
_OWNERS = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


@dataclass(frozen=True, eq=False)
class Occurrence:
    node: cst.Name | cst.Attribute
    parent: cst.CSTNode | None
    grandparent: cst.CSTNode | None
    owner: Owner | None  # innermost function, lambda or class; None at module level


@dataclass
class NameIndex:
    names: dict[str, list[Occurrence]] = field(default_factory=dict)
    attributes: dict[str, list[Occurrence]] = field(default_factory=dict)
    # Per owner (by id): the names it binds, and those it declares ``global``/``nonlocal``.
    binds: dict[int, set[str]] = field(default_factory=dict)
    declares: dict[int, set[str]] = field(default_factory=dict)
    enclosing: dict[int, Owner | None] = field(default_factory=dict)

    def fresh(self, base: str) -> str:
        """``base``, or ``base_2``, ``base_3``...: a name that occurs nowhere in the module."""
        candidate, n = base, 1
        while candidate in self.names or candidate in self.attributes:
            n += 1
            candidate = f"{base}_{n}"
        return candidate

    def is_local(self, name: str, owner: Owner) -> bool:
        return name in self.binds.get(id(owner), ()) and name not in self.declares.get(
            id(owner), ()
        )

    def same_variable(self, name: str, defined_in: Owner | None) -> list[Occurrence]:
        """The occurrences of ``name`` that are the variable a statement directly in
        ``defined_in`` (None: the module) binds. Class scopes are treated as not shadowing,
        which can only add occurrences."""
        if defined_in is not None and (
            isinstance(defined_in, cst.ClassDef) or name in self.declares.get(id(defined_in), ())
        ):
            defined_in = None  # ``global x`` (or ``nonlocal``: taken as wider, never narrower)
        found = []
        for occurrence in self.names.get(name, ()):
            owner = occurrence.owner
            while owner is not None and owner is not defined_in:
                if not isinstance(owner, cst.ClassDef) and self.is_local(name, owner):
                    break  # a local of a function in between shadows it
                owner = self.enclosing.get(id(owner))
            else:
                if owner is defined_in:
                    found.append(occurrence)
        return found


class _Indexer:
    """One iterative walk over the semantic model's tree index (lambda bodies, which the index
    skips, through libcst's own ``children``)."""

    def __init__(self, index: NameIndex, model: SemanticModel) -> None:
        self.index = index
        self.model = model

    def _bind(self, name: str, owner: Owner | None) -> None:
        if owner is not None:
            self.index.binds.setdefault(id(owner), set()).add(name)

    def _bind_target(self, target: cst.CSTNode, owner: Owner | None) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, owner)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._bind_target(element.value, owner)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, owner)

    def run(self, module: cst.Module) -> None:
        names, attributes = self.index.names, self.index.attributes
        children_of = self.model.children_of
        # (node, parent, grandparent, owner, inside a lambda)
        stack: list[
            tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None, Owner | None, bool]
        ] = [(module, None, None, None, False)]
        while stack:
            node, parent, grandparent, owner, in_lambda = stack.pop()
            if isinstance(node, cst.Name):
                if not _is_label(node, parent):
                    found = Occurrence(node, parent, grandparent, owner)
                    names.setdefault(node.value, []).append(found)
            elif isinstance(node, cst.Attribute):
                if not _is_label(node, parent):
                    found = Occurrence(node, parent, grandparent, owner)
                    attributes.setdefault(node.attr.value, []).append(found)
            else:
                self._record_binding(node, owner)
            inner = owner
            if isinstance(node, _OWNERS):
                self.index.enclosing[id(node)] = owner
                inner = node
                in_lambda = in_lambda or isinstance(node, cst.Lambda)
                if isinstance(node, cst.Lambda | cst.FunctionDef):
                    for param in _params(node.params):
                        self._bind(param.name.value, node)
            kids = node.children if in_lambda else children_of.get(id(node), ())
            for child in reversed(kids):
                stack.append((child, node, parent, inner, in_lambda))

    def _record_binding(self, node: cst.CSTNode, owner: Owner | None) -> None:
        targeted = cst.AssignTarget | cst.AnnAssign | cst.AugAssign | cst.For | cst.NamedExpr
        if isinstance(node, targeted):
            self._bind_target(node.target, owner)
        elif isinstance(node, cst.AsName):
            self._bind_target(node.name, owner)
        elif isinstance(node, cst.Del):
            self._bind_target(node.target, owner)
        elif isinstance(node, cst.FunctionDef | cst.ClassDef):
            self._bind(node.name.value, owner)
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            head: cst.BaseExpression = node.name
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                self._bind(head.value, owner)
        elif isinstance(node, cst.Global | cst.Nonlocal) and owner is not None:
            declared = self.index.declares.setdefault(id(owner), set())
            declared.update(item.name.value for item in node.names)


def _params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return found


def _is_label(node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """The ``y`` of ``x.y`` and the ``k`` of ``f(k=v)`` name no variable."""
    if isinstance(parent, cst.Attribute):
        return parent.attr is node
    if isinstance(parent, cst.Arg):
        return parent.keyword is node
    return False


def owner_of(model: SemanticModel, node: cst.CSTNode) -> Owner | None:
    """The function or class whose code ``node`` is part of (None: the module)."""
    current = model.parent(node)
    while current is not None and not isinstance(current, _OWNERS):
        current = model.parent(current)
    return current


def name_index(ctx: Context) -> NameIndex:
    index = ctx.extra.get("fix.names")
    if not isinstance(index, NameIndex):
        index = NameIndex()
        _Indexer(index, ctx.model).run(ctx.model.module)
        ctx.extra["fix.names"] = index
    return index
