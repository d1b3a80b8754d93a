"""Def-use questions on one module's tree, asked by rules and analyses alike: the statement a node
is in, the names a target binds, the reads of names after a statement in its function (each
``Name`` node of a function or of the module, in source order, indexed once per scope), and how
those reads use the value (a condition or an index, iterated, checked, returned).

The one owner of these concepts: a rule that needs "where is this value used later" asks here,
not a copy of its own (issue 31). Names only, no types: what a read means is the caller's question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.facts.tree import child_nodes

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView
    from tinker_lint.model.facts.scopes import FunctionInfo, LoopInfo, Scope

STATEMENT = (cst.BaseSmallStatement, cst.BaseCompoundStatement)

# How a value is used after the statement that makes it (``Dataflow.uses``): "branch" (a condition,
# an index or slice bound, a ``range`` argument), "data" (iterated), "guard" (passed to one of the
# caller's guard functions, ``math.isnan(x)``), "returned" (the function's result: its callers
# decide).
BRANCH = "branch"
DATA = "data"
GUARD = "guard"
RETURNED = "returned"
# The uses that need the value itself, with no equivalent that stays where the value is: a branch
# or an iteration (an adaptive coefficient, a truncation check, token lists for a request).
NEEDS_VALUE = frozenset({BRANCH, DATA})
# Methods that put their argument into the receiver (``xs.append(v)``): ``v``'s uses go on in ``xs``.
_APPENDS = ("append", "extend")


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


def chain_root(
    expr: cst.BaseExpression,
    *,
    attributes: bool,
    keep: frozenset[str] = frozenset(),
    into: Callable[[cst.Call], cst.BaseExpression | None] | None = None,
) -> cst.BaseExpression:
    """What a chain of method calls and subscripts starts from: ``x.detach().float()[0]`` ->
    ``x``; with ``attributes`` also through attributes (``batch.x["ids"].cuda()`` -> ``batch``),
    without them to the dotted name (``self.loss.item()`` -> ``self.loss``). ``keep``: methods
    whose call ends the chain, kept (``x.to(device)`` for ``{"to"}``); ``into``: for a call, the
    expression to go on from, or None (``torch.from_numpy(b)`` -> ``b``), asked before the call's
    method."""
    while True:
        if into is not None and isinstance(expr, cst.Call):
            inner = into(expr)
            if inner is not None:
                expr = inner
                continue
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            if expr.func.attr.value in keep:
                return expr
            expr = expr.func.value
        elif isinstance(expr, cst.Subscript) or (attributes and isinstance(expr, cst.Attribute)):
            expr = expr.value
        else:
            return expr


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """Every name under ``node`` (attribute names too), in source order."""
    # Through the child fields ``tree.py`` knows (layout left out) and by exact type: libcst's
    # ``node.children`` rebuilds each node it passes, and ``isinstance`` on its classes is slow.
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name:
            yield cast(cst.Name, current).value
            continue  # its only children are parentheses
        stack.extend(reversed(child_nodes(current)))


def loop_targets(loop: LoopInfo, *, every_name: bool = False) -> set[str]:
    """The names a ``for`` loop or a comprehension (each of its ``for`` clauses) binds on each
    iteration (``target_names``). ``every_name`` (the tensor loops' reading, TNK203/TNK404): every
    name in the targets, those of the attributes and subscripts they store into too (``for
    self.x in`` -> ``self``, ``x``)."""
    node = loop.node
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.For):
        targets.append(node.target)
    elif isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            targets.append(clause.target)
            clause = clause.inner_for_in
    if every_name:
        return {name for target in targets for name in names_in(target)}
    return {name for target in targets for name in target_names(target)}


def indexes(node: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``child`` (a child of ``node``) is an index or slice bound of ``node`` (``x[a:b]``), or an
    argument of ``range``/``slice``: Python needs the number itself."""
    if isinstance(node, cst.SubscriptElement):
        return True
    if isinstance(node, cst.Call) and isinstance(child, cst.Arg):
        return isinstance(node.func, cst.Name) and node.func.value in ("range", "slice")
    return False


def root_call(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The first call of a chain of method calls: ``torch.tensor(x).float().view(-1)`` ->
    ``torch.tensor(x)`` (``expr`` itself when it is no such chain)."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and isinstance(expr.func.value, cst.Call)
    ):
        expr = expr.func.value
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

    def enclosing(
        self,
        node: cst.CSTNode,
        until: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...] = (),
        *,
        below: cst.CSTNode | None = None,
    ) -> Iterator[cst.CSTNode]:
        """The nodes around ``node``, innermost first, up to (not including) the first that is
        an ``until`` (``cst.FunctionDef``: within its function) or is ``below`` (within that
        node), else up to the module, included."""
        parent = self.model.parent(node)
        while parent is not None and parent is not below and not isinstance(parent, until):
            yield parent
            parent = self.model.parent(parent)

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

    def in_index(self, node: cst.CSTNode) -> bool:
        """``node`` is (inside) an index or slice bound, or a ``range``/``slice`` argument, within
        its statement (``x[t.item():]``, ``range(int(n))``)."""
        return any(indexes(parent, child) for child, parent in self.up_to_statement(node))

    def appended_to(self, node: cst.CSTNode) -> str | None:
        """``xs`` when ``node`` is (inside) the argument of ``xs.append(...)`` /
        ``xs.extend(...)``, within its statement (the innermost such call)."""
        for _, parent in self.up_to_statement(node):
            if isinstance(parent, cst.Arg):
                call = self.model.parent(parent)
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in _APPENDS
                    and isinstance(call.func.value, cst.Name)
                ):
                    return call.func.value.value
        return None

    def assigned_in(self, name: str, loop: LoopInfo, scope: Scope) -> bool:
        """Whether ``name`` (as ``scope`` sees it) gets a value inside ``loop``'s body: a value
        of this iteration, not one from before the loop."""
        for binding in scope.lookup(name):
            if binding.expr is not None and self.model.contains(loop.body, binding.expr):
                return True
        return False

    def later_uses(
        self,
        statement: cst.CSTNode,
        scope: Scope,
        function: FunctionInfo | None,
        *,
        guards: frozenset[str] = frozenset(),
    ) -> set[str]:
        """How the names ``statement`` assigns are used after it (``uses``)."""
        return self.uses(assigned_names(statement), statement, scope, function, guards=guards)

    def uses(
        self,
        names: set[str],
        statement: cst.CSTNode,
        scope: Scope,
        function: FunctionInfo | None,
        *,
        guards: frozenset[str] = frozenset(),
        follow: int = 2,
    ) -> set[str]:
        """How ``names`` are used after the start of ``statement`` in ``function`` (the module
        when None; ``scope``, where ``guards`` are qualified): ``BRANCH``, ``DATA``, ``GUARD`` (an
        argument of a function in ``guards``), ``RETURNED``. Followed through ``follow``
        assignments and list appends (``x = value * 2``, then ``x``'s uses;
        ``offsets.append(start)``, then ``zip(offsets, ...)``); ``len(x)`` reads how many, not
        the values, and counts for nothing. Stops at the first use in ``NEEDS_VALUE``."""
        kinds: set[str] = set()
        if not names:
            return kinds
        model = self.model
        scope_node = function.node if function is not None else model.module
        for name, first in self.reads_after(scope_node, names, statement):
            if self._length_only(first):
                continue  # ``if len(losses) > 0:`` reads how many, not the values
            node: cst.CSTNode = name
            appended_to: str | None = None
            guarded = False
            for child, parent in self.up_to_statement(name):
                if indexes(parent, child):
                    return {BRANCH}
                if isinstance(parent, cst.CompFor) and child is parent.iter:
                    return {DATA}
                if isinstance(parent, cst.Arg):
                    call = model.parent(parent)
                    if isinstance(call, cst.Call) and model.qualify(call.func, scope) in guards:
                        kinds.add(GUARD)  # ``if math.isnan(loss_value):``: a guard
                        guarded = True
                        break
                    if (
                        isinstance(call, cst.Call)
                        and isinstance(call.func, cst.Attribute)
                        and call.func.attr.value in _APPENDS
                        and isinstance(call.func.value, cst.Name)
                    ):
                        appended_to = call.func.value.value
                node = parent
            if guarded:
                continue
            held = model.parent(node)  # the statement (None at the top of the module)
            if isinstance(held, cst.If | cst.While) and node is held.test:
                return {BRANCH}
            if isinstance(held, cst.For) and node is held.iter:
                return {DATA}
            if isinstance(held, cst.Return):
                kinds.add(RETURNED)
            elif follow > 0 and held is not None:
                followed = {appended_to} if appended_to is not None else assigned_names(held)
                kinds |= self.uses(
                    followed, held, scope, function, guards=guards, follow=follow - 1
                )
            if kinds & NEEDS_VALUE:
                return kinds
        return kinds

    def _length_only(self, parent: cst.CSTNode) -> bool:
        """A name's use (``parent``, its parent) as the one argument of ``len(...)``."""
        call = self.model.parent(parent) if isinstance(parent, cst.Arg) else None
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value == "len"
            and len(call.args) == 1
        )
