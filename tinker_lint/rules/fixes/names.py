"""Every occurrence of every name and attribute in a module, with where it sits, and Python's
scoping rules to tell which occurrences are the same variable.

Fix plans ask questions the rules do not: is this variable read anywhere else (a closure, another
function, a class body)? Which names are free for a new variable? The semantic model's tree index
skips lambda bodies, so this is one full libcst pass of its own, made only for files with a
fixable finding and shared by all their plans.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import libcst as cst

if TYPE_CHECKING:  # the rules import the fixes
    from tinker_lint.model.query import SemanticModel
    from tinker_lint.rules.base import Context

# Code with its own local names, run at another time than the statements around it.
Owner = cst.FunctionDef | cst.Lambda | cst.ClassDef
_OWNERS = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
# The walk below tests exact node types (a tree holds only libcst's concrete classes): every node
# class is an ``ABCMeta`` class, so an ``isinstance`` that fails goes through
# ``ABCMeta.__instancecheck__``, about a microsecond each, and this walk visits every node.
_OWNER_TYPES = frozenset(_OWNERS)
_TARGETED = frozenset({cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr})
_DECLARATIONS = frozenset({cst.Global, cst.Nonlocal})
_SEQUENCES = frozenset({cst.Tuple, cst.List})
_RECORDED = frozenset({cst.ImportAlias, *_DECLARATIONS})  # the other kinds that bind or declare


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
    # Per name, its occurrences by the owner whose variable each is (``_binders``).
    _binders: dict[str, dict[int | None, list[Occurrence]]] = field(default_factory=dict)

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
        if defined_in is None or self.is_local(name, defined_in):
            # The walk below reaches ``defined_in`` exactly for the occurrences whose first
            # enclosing owner with the name local (not a class) is it (None: none is): grouped
            # once per name, not walked again for each plan (a file with a thousand findings of
            # one rule asked about the same ``result`` a thousand times: quadratic).
            key = id(defined_in) if defined_in is not None else None
            return list(self._binders_of(name).get(key, ()))
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

    def _binders_of(self, name: str) -> dict[int | None, list[Occurrence]]:
        grouped = self._binders.get(name)
        if grouped is None:
            grouped = {}
            for occurrence in self.names.get(name, ()):
                owner = occurrence.owner
                while owner is not None:
                    if not isinstance(owner, cst.ClassDef) and self.is_local(name, owner):
                        break
                    owner = self.enclosing.get(id(owner))
                key = id(owner) if owner is not None else None
                grouped.setdefault(key, []).append(occurrence)
            self._binders[name] = grouped
        return grouped


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
        kind = type(target)
        if kind is cst.Name:
            self._bind(cast(cst.Name, target).value, owner)
        elif kind in _SEQUENCES:
            for element in cast(cst.Tuple | cst.List, target).elements:
                self._bind_target(element.value, owner)
        elif kind is cst.StarredElement:
            self._bind_target(cast(cst.StarredElement, target).value, owner)

    def run(self, module: cst.Module) -> None:
        names, attributes = self.index.names, self.index.attributes
        children_of = self.model.children_of
        # (node, parent, grandparent, owner, inside a lambda)
        stack: list[
            tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None, Owner | None, bool]
        ] = [(module, None, None, None, False)]
        while stack:
            node, parent, grandparent, owner, in_lambda = stack.pop()
            kind = type(node)
            if kind is cst.Name:
                if not _is_label(node, parent):
                    found = Occurrence(cast(cst.Name, node), parent, grandparent, owner)
                    names.setdefault(cast(cst.Name, node).value, []).append(found)
            elif kind is cst.Attribute:
                if not _is_label(node, parent):
                    attribute = cast(cst.Attribute, node)
                    found = Occurrence(attribute, parent, grandparent, owner)
                    attributes.setdefault(attribute.attr.value, []).append(found)
            else:
                self._record_binding(node, owner)
            inner = owner
            if kind in _OWNER_TYPES:
                definition = cast(Owner, node)
                self.index.enclosing[id(node)] = owner
                inner = definition
                in_lambda = in_lambda or kind is cst.Lambda
                if kind is not cst.ClassDef:
                    function = cast(cst.Lambda | cst.FunctionDef, node)
                    for param in _params(function.params):
                        self._bind(param.name.value, function)
            kids = node.children if in_lambda else children_of.get(id(node), ())
            for child in reversed(kids):
                stack.append((child, node, parent, inner, in_lambda))

    def _record_binding(self, node: cst.CSTNode, owner: Owner | None) -> None:
        kind = type(node)
        if kind in _TARGETED:
            self._bind_target(cast(cst.AssignTarget, node).target, owner)
        elif kind is cst.AsName:
            self._bind_target(cast(cst.AsName, node).name, owner)
        elif kind is cst.Del:
            self._bind_target(cast(cst.Del, node).target, owner)
        elif kind is cst.FunctionDef or kind is cst.ClassDef:
            self._bind(cast(cst.FunctionDef | cst.ClassDef, node).name.value, owner)
        elif kind not in _RECORDED:
            return
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
    kind = type(parent)
    if kind is cst.Attribute:
        return cast(cst.Attribute, parent).attr is node
    if kind is cst.Arg:
        return cast(cst.Arg, parent).keyword is node
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
