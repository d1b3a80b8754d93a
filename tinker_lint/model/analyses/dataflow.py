"""Def-use questions on one module's tree, asked by rules and analyses alike: the statement a node
is in, the names a target binds, the reads of names after a statement in its function (each
``Name`` node of a function or of the module, in source order, indexed once per scope), and how
those reads use the value (a condition or an index, iterated, checked, returned).
On the references the pass records (``facts/references.py``): the bindings that reach a
read (``reaching_definitions``) and the reads a binding reaches (``uses_of``).

The one owner of these concepts: a rule that needs "where is this value used later" asks here,
not a copy of its own (issue 31). Names only, no types: what a read means is the caller's question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.facts.references import Context, Reference
from tinker_lint.model.facts.scopes import Binding, BindingSite, Scope
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


# --- reaching definitions (issue 31; issue 32's "kill on rebinding") ----------------------------
#
# Built on the references the pass records (``facts/references.py``): a read's ``bindings`` are
# every binding of its name in the scope it resolves to; ``reaching_definitions`` keeps those that
# can reach it along the code of that scope (one walk per scope and name, kept).
#
# How issue 32 asks "taint that survives rebinding" with it: a value is tainted by a wait when the
# expression of a binding that reaches one of its reads reads the wait's result, and so on up the
# chain (``binding.expr``'s names, each asked ``reaching_definitions`` in turn). Rebinding kills:
# ``inputs = build(prompt)`` after the wait gives a fresh value, so a later read of ``inputs`` is
# reached by that binding only and is clean. A list rebound every iteration is not killed: in
# ``for ...: out = fut.result(); xs = xs + [out]; fut = sc.sample(xs)``, the read of ``xs`` on the
# right-hand side is reached by the binding before the loop and, through the loop's back edge, by
# last iteration's ``xs = xs + [out]``, whose expression reads ``out``: the taint survives the
# rebinding, and the submit depends on the wait. (``ModelInput.append`` returning a new value is
# the same chain with a method call in place of ``+``: the SDK's table of non-mutating methods says
# the receiver's taint goes into the result.)

_NOT_A_VALUE = (BindingSite.DELETION, BindingSite.ANNOTATION)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)

State = frozenset[Binding] | None  # the bindings that reach a point; None: no path reaches it


def _join(*states: State) -> State:
    found: State = None
    for state in states:
        if state is not None:
            found = state if found is None else found | state
    return found


@dataclass
class _Loop:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


class _Reaching:
    """One walk of a scope's code for the bindings of one name: the bindings that reach each
    ``Name`` node met (``at``), in evaluation order, with kill on rebinding, union where branches
    meet, loops to a fixpoint, and an ``except`` handler entered from any point of its ``try``.
    Nested functions' bodies are not walked (they run later); class bodies and comprehensions are
    (they run where they stand), a generator's body with every binding (it runs when consumed)."""

    def __init__(
        self,
        children: Callable[[cst.CSTNode], list[cst.CSTNode]],
        kills: dict[int, frozenset[Binding]],
        every: frozenset[Binding],
    ) -> None:
        self.children = children
        self.kills = kills  # id(a target name) -> what reaches after it (empty after ``del``)
        self.every = every
        self.at: dict[int, set[Binding]] = {}
        self.loops: list[_Loop] = []
        self.tries: list[list[State]] = []  # per enclosing ``try`` body: the states it can leave

    def read(self, node: cst.CSTNode, state: State) -> None:
        if state is not None:
            self.at.setdefault(id(node), set()).update(state)

    # --- expressions, in evaluation order ---------------------------------------------------
    def expr(self, node: cst.CSTNode, state: State) -> State:
        if state is None:
            return None
        kind = type(node)
        if kind is cst.Name:
            killed = self.kills.get(id(node))
            if killed is not None:
                return killed
            self.read(node, state)
            return state
        if isinstance(node, cst.NamedExpr):
            return self.expr(node.target, self.expr(node.value, state))
        if isinstance(node, cst.BooleanOperation):  # the right side may not run
            left = self.expr(node.left, state)
            return _join(left, self.expr(node.right, left))
        if isinstance(node, cst.IfExp):
            test = self.expr(node.test, state)
            return _join(self.expr(node.body, test), self.expr(node.orelse, test))
        if isinstance(node, _COMPREHENSIONS):
            return self.comprehension(node, state)
        for child in self.children(node):  # a lambda has none in the index: its body runs later
            state = self.expr(child, state)
        return state

    def comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp, state: State
    ) -> State:
        """The first iterable once, then the rest as a loop that may run no times."""
        first = node.for_in
        entry = self.expr(first.iter, state)
        if entry is None:
            return None
        lazy = isinstance(node, cst.GeneratorExp)
        head: State = entry | self.every if lazy else entry
        while True:
            seen: list[State] = []
            current = self.expr(first.target, head)
            for condition in first.ifs:
                current = self.expr(condition.test, current)
                seen.append(current)
            inner = first.inner_for_in
            while inner is not None:
                current = self.expr(inner.target, self.expr(inner.iter, current))
                for condition in inner.ifs:
                    current = self.expr(condition.test, current)
                    seen.append(current)
                inner = inner.inner_for_in
            if isinstance(node, cst.DictComp):
                current = self.expr(node.value, self.expr(node.key, current))
            else:
                current = self.expr(node.elt, current)
            new = _join(head, current, *seen)
            if new == head:
                break
            head = new
        return entry if lazy else head

    # --- statements -------------------------------------------------------------------------
    def block(self, statements: Sequence[cst.CSTNode], state: State) -> State:
        for statement in statements:
            if self.tries:
                self.tries[-1].append(state)
            state = self.statement(statement, state)
        if self.tries:
            self.tries[-1].append(state)
        return state

    def statement(self, node: cst.CSTNode, state: State) -> State:
        if state is None:
            return None
        if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            for small in node.body:
                state = self.small(small, state)
            return state
        if isinstance(node, cst.IndentedBlock):
            return self.block(node.body, state)
        if isinstance(node, cst.Else | cst.Finally):
            return self.statement(node.body, state)
        if isinstance(node, cst.If):
            test = self.expr(node.test, state)
            orelse = test if node.orelse is None else self.statement(node.orelse, test)
            return _join(self.statement(node.body, test), orelse)
        if isinstance(node, cst.While):
            return self.while_loop(node, state)
        if isinstance(node, cst.For):
            return self.for_loop(node, state)
        if isinstance(node, cst.Try | cst.TryStar):
            return self.try_statement(node, state)
        if isinstance(node, cst.With):
            for item in node.items:
                state = self.expr(item.item, state)
                if item.asname is not None:
                    state = self.expr(item.asname.name, state)
            return self.statement(node.body, state)
        if isinstance(node, cst.FunctionDef):
            for decorator in node.decorators:
                state = self.expr(decorator, state)
            state = self.expr(node.params, state)  # defaults and annotations (parameters bind
            if node.returns is not None:  # in the function: none is a target here)
                state = self.expr(node.returns, state)
            return self.expr(node.name, state)  # the body runs later
        if isinstance(node, cst.ClassDef):
            for decorator in node.decorators:
                state = self.expr(decorator, state)
            for arg in (*node.bases, *node.keywords):
                state = self.expr(arg.value, state)
            return self.expr(node.name, self.statement(node.body, state))
        if isinstance(node, cst.Match):
            subject = self.expr(node.subject, state)
            ends: list[State] = [subject]  # no case matched
            for case in node.cases:
                current = self.expr(case.pattern, subject)
                if case.guard is not None:
                    current = self.expr(case.guard, current)
                ends.append(self.statement(case.body, current))
            return _join(*ends)
        return self.expr(node, state)

    def small(self, node: cst.CSTNode, state: State) -> State:
        if isinstance(node, cst.Assign):
            state = self.expr(node.value, state)
            for assigned in node.targets:
                state = self.expr(assigned.target, state)
            return state
        if isinstance(node, cst.AnnAssign):
            state = self.expr(node.annotation, state)
            if node.value is not None:
                state = self.expr(node.value, state)
            return self.expr(node.target, state)  # a bare ``x: T`` binds nothing: no kill
        if isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Name):
                self.read(target, state)  # ``x += v`` reads ``x`` first
                state = self.expr(node.value, state)
                killed = self.kills.get(id(target))
                return state if killed is None else killed
            return self.expr(node.value, self.expr(target, state))
        if isinstance(node, cst.Return | cst.Raise):
            self.expr(node, state)
            return None
        if isinstance(node, cst.Break | cst.Continue):
            if self.loops:
                loop = self.loops[-1]
                (loop.breaks if isinstance(node, cst.Break) else loop.continues).append(state)
            return None
        return self.expr(node, state)  # ``del`` (kills), imports (bind), expressions...

    def while_loop(self, node: cst.While, state: State) -> State:
        forever = isinstance(node.test, cst.Name) and node.test.value == "True"
        head = state
        while True:
            loop = _Loop()
            test = self.expr(node.test, head)
            self.loops.append(loop)
            end = self.statement(node.body, test)
            self.loops.pop()
            new = _join(state, end, *loop.continues)
            if new == head:
                break
            head = new
        done = None if forever else test
        if node.orelse is not None:
            done = self.statement(node.orelse, done)
        return _join(done, *loop.breaks)

    def for_loop(self, node: cst.For, state: State) -> State:
        entry = self.expr(node.iter, state)
        head = entry
        while True:
            loop = _Loop()
            self.loops.append(loop)
            end = self.statement(node.body, self.expr(node.target, head))
            self.loops.pop()
            new = _join(entry, end, *loop.continues)
            if new == head:
                break
            head = new
        done = head  # the iterable ran out (the target keeps its last value)
        if node.orelse is not None:
            done = self.statement(node.orelse, done)
        return _join(done, *loop.breaks)

    def try_statement(self, node: cst.Try | cst.TryStar, state: State) -> State:
        self.tries.append([state])
        body = self.statement(node.body, state)
        raised = self.tries.pop()
        if self.tries:
            self.tries[-1].extend(raised)  # what no handler here catches goes further out
        caught = _join(*raised)
        ends: list[State] = [body if node.orelse is None else self.statement(node.orelse, body)]
        for handler in node.handlers:
            current = caught
            if handler.type is not None:
                current = self.expr(handler.type, current)
            name = handler.name.name if handler.name is not None else None
            if name is not None:
                current = self.expr(name, current)
            end = self.statement(handler.body, current)
            if name is not None and id(name) in self.kills and end is not None:
                end = frozenset()  # ``except E as e``: ``e`` is deleted when the handler ends
            ends.append(end)
        done = _join(*ends)
        if node.finalbody is None:
            return done
        self.statement(node.finalbody, _join(done, caught))  # on the way out of an exception too
        return self.statement(node.finalbody, done)


class _ReachingQuestions:
    """``Dataflow``'s reaching-definition questions (mixed in below, so that ``Dataflow``'s own
    functions stay as they were)."""

    model: ModelView

    @cached_property
    def _walks(self) -> dict[tuple[int, str], dict[int, set[Binding]]]:
        return {}

    def reaching_definitions(self, name: cst.Name) -> list[Binding]:
        """The bindings of ``name`` (a read) that can reach it, in the order made.

        Within the scope the name resolves to, when the read is in that scope's own code or in a
        comprehension or class body inside it: along the code, a binding kills those before it
        (``x = 1; x = 2; f(x)``: only ``x = 2``), ``del x`` kills all, branches and loops join
        (``if c: x = 2``; a loop's back edge brings last iteration's bindings), an ``except``
        handler sees any point of its ``try``; a function's parameters reach from its start.
        A read in a nested function (a closure, a global read from a function): every binding of
        the scope it resolves to (it may run after any of them). Bindings made from elsewhere by
        ``global``/``nonlocal`` always reach. A bare ``x: T`` and ``del x`` are never answers.
        None for a name that is no read (a target, an attribute's name, in a lambda) or that
        resolves to no binding of the module (a builtin)."""
        reference = self.model.reference(name)
        if reference is None or reference.context is not Context.READ:
            return []
        home = reference.resolved
        values = [b for b in reference.bindings if b.site not in _NOT_A_VALUE]
        if home is None or not values:
            return []
        region = reference.scope
        while region is not home and region.kind in ("comprehension", "class"):
            region = region.parent  # type: ignore[assignment]
        if region is not home or home.kind == "comprehension":
            return values  # runs after any of them; a comprehension's targets: every iteration
        found = set(self._walk(home, name.value, reference.bindings).get(id(name), ()))
        found.update(b for b in values if b.namespace is not home)  # ``global``/``nonlocal``
        return sorted(found, key=lambda b: b.order)

    def uses_of(self, binding: Binding) -> list[Reference]:
        """The reads ``binding`` can reach (``reaching_definitions`` the other way round), its
        scope's first, each scope's in source order; none for a binding of no name (a store, an
        attribute, a declaration)."""
        return [
            reference
            for reference in self.model.references_to(binding)
            if any(b is binding for b in self.reaching_definitions(reference.node))
        ]

    def _walk(
        self, home: Scope, name: str, bindings: tuple[Binding, ...]
    ) -> dict[int, set[Binding]]:
        key = (id(home), name)
        found = self._walks.get(key)
        if found is not None:
            return found
        kills: dict[int, frozenset[Binding]] = {}
        for binding in bindings:
            target = binding.node
            if binding.site is BindingSite.ANNOTATION or type(target) is not cst.Name:
                continue
            if binding.site is BindingSite.DELETION:
                kills[id(target)] = frozenset()
            else:
                kills[id(target)] = kills.get(id(target), frozenset()) | {binding}
        every = frozenset(b for b in bindings if b.site not in _NOT_A_VALUE)
        walk = _Reaching(self.model.children, kills, every)
        node = home.node
        if isinstance(node, cst.Module):
            walk.block(node.body, frozenset())
        elif isinstance(node, cst.FunctionDef | cst.ClassDef):
            start = frozenset(
                b for b in bindings if b.site is BindingSite.PARAMETER and b.namespace is home
            )
            walk.statement(node.body, start)
        found = self._walks[key] = walk.at
        return found


class Dataflow(_ReachingQuestions):
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
