"""Whether other coroutines can be running on the event loop at a place in an ``async def``: the
one owner of that question (TNK104 asks it to say whether a blocking wait freezes other work or
only blocks the loop for its own round trip).

Decided from the module's calls, never from names. Other coroutines can run beside a place when

- its function is scheduled concurrently: a call of it reaches an argument of
  ``asyncio.gather``/``create_task``/``ensure_future``/``wait``/``as_completed``, of a task group's
  ``create_task`` or ``start_soon``, directly, in a list or a comprehension of calls, through a
  name bound to them (``tasks = [f(x) for x in xs]``, ``tasks.append(f(x))``), or wrapped in
  another call (``create_task(bounded(f(x)))``);
- the place comes after its function started such work (a spawn earlier in the body), or sits in a
  loop of its function that also spawns (a later iteration comes after it), unless that work had
  all finished (``await asyncio.gather(...)``: the gathered coroutines are done when the await
  returns; a task group's tasks are done when its ``async with`` block ends);
- or its function is called at a place of another ``async def`` where other coroutines can run
  (``bounded()`` is gathered and awaits ``evaluate()``: ``evaluate`` runs beside the others).

A function whose callers this module does not show (a library coroutine, one passed as a value)
is not taken to run beside others: the messages then claim only what is true anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.facts.scopes import BindingKind, CallSite, FunctionInfo, Scope

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

# Calls that start coroutines running beside the caller. Threads (``to_thread``,
# ``run_in_executor``) are left out: a blocked event loop does not stop them.
SPAWN_FUNCTIONS = frozenset(
    f"asyncio.{name}" for name in ("gather", "create_task", "ensure_future", "wait", "as_completed")
)
_SPAWN_FUNCTION_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in SPAWN_FUNCTIONS)
# By method name, on any receiver: ``TaskGroup.create_task``, ``loop.create_task``, and
# anyio/trio's ``start_soon`` (which takes the coroutine function, not a call of it).
SPAWN_METHODS = frozenset({"create_task", "start_soon"})
# Where a spawn's enclosing expression ends.
_STATEMENT_BOUNDARIES = (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.Lambda)
# How many names to follow back from a spawn's argument to the calls that made its coroutines.
_NAME_DEPTH = 3


class Concurrency:
    """The concurrency question for one module, worked out once when first asked."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        self._beside: set[FunctionInfo] | None = None
        # The names a call of an ``async def`` can have (``obj(...)`` runs ``__call__``).
        self._async_names = {f.name for f in model.functions if f.is_async}
        self._calls_instances = "__call__" in self._async_names
        self._spawns: dict[CallSite, bool] = {}

    def runs_beside_others(self, site: CallSite) -> bool:
        """Whether other coroutines can be running on the event loop when ``site`` runs."""
        if self._beside is None:
            self._beside = self._functions_beside_others()
        return self._at(site, self._beside)

    # --- the pieces -------------------------------------------------------------------------
    def spawns(self, site: CallSite) -> bool:
        """Whether the call starts coroutines running beside its caller (memoised: every place
        asked about goes through its function's calls)."""
        found = self._spawns.get(site)
        if found is None:
            func = site.node.func
            kind = type(func)  # exact types: ``isinstance`` on libcst's classes is slow
            if kind is cst.Attribute:
                # ``x.attr`` qualifies to a name ending in ``.attr``: only those names can spawn.
                attr = cast(cst.Attribute, func).attr.value
                found = attr in SPAWN_METHODS or (
                    attr in _SPAWN_FUNCTION_NAMES
                    and self.model.qualify(func, site.scope) in SPAWN_FUNCTIONS
                )
            else:  # a plain name may be an alias (``from asyncio import gather as g``)
                found = kind is cst.Name and self.model.qualify(func, site.scope) in SPAWN_FUNCTIONS
            self._spawns[site] = found
        return found

    def _at(self, site: CallSite, beside: set[FunctionInfo]) -> bool:
        function = site.function
        if function is None or not function.is_async:
            return False
        if function in beside:
            return True
        model = self.model
        for spawn in function.calls:  # its own calls, in source order
            if not self.spawns(spawn) or model.contains(spawn.node, site.node):
                continue
            if self._finished_in_place(spawn) or self._group_closed_at(spawn, site):
                continue  # nothing it started is left running there
            if spawn.order < site.order:
                return True  # started before this place
            if any(loop in spawn.loops for loop in site.loops):
                return True  # a later iteration of a loop around both comes after it
        return False

    def _finished_in_place(self, spawn: CallSite) -> bool:
        """Whether all the spawn starts has finished when the statement holding it ends: it is,
        or is inside, an awaited ``asyncio.gather(...)`` (or an ``asyncio.wait(...)`` that waits
        for all, with no ``timeout`` or ``return_when``). Tasks made elsewhere and kept in a name
        may still run: those count as running."""
        model = self.model
        node: cst.CSTNode | None = spawn.node
        while node is not None and not isinstance(node, _STATEMENT_BOUNDARIES):
            if isinstance(node, cst.Call) and isinstance(model.parent(node), cst.Await):
                qualified = model.qualify(node.func, spawn.scope)
                if qualified == "asyncio.gather":
                    return True
                if qualified == "asyncio.wait" and not any(
                    arg.keyword is not None and arg.keyword.value in ("timeout", "return_when")
                    for arg in node.args
                ):
                    return True
            node = model.parent(node)
        return False

    def _group_closed_at(self, spawn: CallSite, site: CallSite) -> bool:
        """Whether ``spawn`` is ``tg.create_task(...)``/``tg.start_soon(...)`` on a task group
        opened by an ``async with ... as tg`` that does not hold ``site``: the block ends only
        when all its tasks are done, so none of them runs at ``site``."""
        func = spawn.node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return False
        group = func.value.value
        model = self.model
        node = model.parent(spawn.node)
        while node is not None and not isinstance(node, cst.FunctionDef):
            if isinstance(node, cst.With) and node.asynchronous is not None:
                for item in node.items:
                    target = item.asname.name if item.asname is not None else None
                    if isinstance(target, cst.Name) and target.value == group:
                        return not model.contains(node, site.node)
            node = model.parent(node)
        return False

    def _functions_beside_others(self) -> set[FunctionInfo]:
        """The ``async def``s of the module that run beside other coroutines: those scheduled
        concurrently, then (to a fixpoint: calls may chain through several coroutines) those
        called where others can run."""
        model = self.model
        beside: set[FunctionInfo] = set()
        callers: dict[FunctionInfo, list[CallSite]] = {}
        for site in model.calls:
            if self.spawns(site):
                beside.update(self._scheduled_by(site))
            for target in self._async_targets(site.node, site.scope):
                callers.setdefault(target, []).append(site)
        changed = True
        while changed:
            changed = False
            for function, sites in callers.items():
                if function not in beside and any(self._at(site, beside) for site in sites):
                    beside.add(function)
                    changed = True
        return beside

    def _scheduled_by(self, spawn: CallSite) -> Iterator[FunctionInfo]:
        """The ``async def``s of this module whose coroutines ``spawn`` starts."""
        model = self.model
        args = spawn.node.args
        func = spawn.node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "start_soon" and args:
            # ``tg.start_soon(worker, x)``: the function itself is handed over.
            target = model.resolve_function(args[0].value, spawn.scope)
            if target is not None and target.is_async:
                yield target
        for arg in args:
            for call, scope in self._calls_reaching(arg.value, spawn.scope, _NAME_DEPTH):
                yield from self._async_targets(call, scope)

    def _async_targets(self, call: cst.Call, scope: Scope) -> Iterator[FunctionInfo]:
        """The ``async def``s of this module ``call`` may run (``helpers.py`` resolves it: a
        function, ``self.m``, a method of an instance of a class of the module, the overrides of
        an interface's method)."""
        func = call.func
        kind = type(func)
        name: str | None
        if kind is cst.Attribute:
            name = cast(cst.Attribute, func).attr.value
        else:
            name = cast(cst.Name, func).value if kind is cst.Name else None
        if name not in self._async_names and not self._calls_instances:
            return  # resolving every call of the module would ask the types of every receiver
        target = self.model.helpers.target(call, scope)
        for function in target if isinstance(target, tuple) else (target,):
            if isinstance(function, FunctionInfo) and function.is_async:
                yield function

    def _calls_reaching(
        self, expr: cst.BaseExpression, scope: Scope, depth: int
    ) -> Iterator[tuple[cst.Call, Scope]]:
        """The calls whose values ``expr`` may hold or be made from: the call itself and those in
        its arguments, the elements of a list or comprehension, what a name was bound to."""
        if isinstance(expr, cst.Call):
            yield expr, scope
            for arg in expr.args:
                yield from self._calls_reaching(arg.value, scope, depth)
        elif isinstance(expr, cst.List | cst.Tuple | cst.Set):
            for element in expr.elements:
                yield from self._calls_reaching(element.value, scope, depth)
        elif isinstance(expr, cst.ListComp | cst.SetComp | cst.GeneratorExp):
            yield from self._calls_reaching(expr.elt, scope, depth)
        elif isinstance(expr, cst.Name) and depth > 0:
            for binding in scope.lookup(expr.value):
                # ``x = ...``, ``xs.append(...)``/``xs[k] = ...``, ``xs.extend(...)``
                if binding.kind in (
                    BindingKind.VALUE,
                    BindingKind.ELEMENT,
                    BindingKind.ELEMENTS,
                ) and isinstance(binding.expr, cst.BaseExpression):
                    yield from self._calls_reaching(binding.expr, binding.scope, depth - 1)
