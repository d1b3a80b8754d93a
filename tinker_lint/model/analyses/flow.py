"""Submits, waits and data dependencies along the statements of a function or loop body.

``events_in`` lists a statement's submits and waits in evaluation order; ``linear_steps`` flattens a
body into steps with the names each reads and writes, which is what the dependency questions need:
does this later submit use (through assignments in between) what that wait produced?
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import libcst as cst

from tinker_lint.model.analyses.dataflow import target_names
from tinker_lint.model.analyses.summaries import MethodRef, Summary
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import BLOCKING_WAIT_FUNCTIONS
from tinker_lint.model.facts.scopes import (
    BindingKind,
    FunctionInfo,
    Scope,
    SdkCall,
    resolve_function,
)
from tinker_lint.model.facts.sdk import NON_MUTATING_METHODS, Client, Returns, Role
from tinker_lint.model.facts.types import Kind, TType, future

_Walk = TypeVar("_Walk", bound=Callable[..., Any])

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

# Methods that store their arguments in the receiver (``history.append(reply)``): the receiver then
# carries the value. Other method calls (``renderer.parse_response(r)``) are taken not to.
STORING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "add",
        "update",
        "setdefault",
        "put",
        "put_nowait",
        "appendleft",
        "extendleft",
        "push",
        "send",
        "step",
        "observe",
        "record",
        "store",
        "set",
        "add_message",
        "add_messages",
        "add_turn",
        "__setitem__",
    }
)
NESTED_CODE = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# The walks below test exact types: parsed trees hold only libcst's concrete classes, and
# ``isinstance`` on its abstract ones is slow.
_NESTED_TYPES = frozenset(NESTED_CODE)
_JUMPS = frozenset({cst.Break, cst.Continue, cst.Return, cst.Raise})
_ENDS = frozenset({cst.Return, cst.Raise})


@dataclass(frozen=True)
class Submit:
    """A request sent: by an SDK call, or by calling a helper of the project that sends it."""

    node: cst.Call
    call: SdkCall | None
    helper: Summary | None = None  # set when a call of a project function submits
    # What a nested function called here reads from the scopes around it (its closure): the
    # request it sends may use a result through them.
    closure_reads: frozenset[str] = frozenset()

    @property
    def roles(self) -> frozenset[Role]:
        if self.call is not None:
            return frozenset({self.call.method.role})
        return self.helper.submits if self.helper is not None else frozenset()

    @property
    def request(self) -> MethodRef | None:
        if self.call is not None:
            return MethodRef(self.call.method.client, self.call.method.name)
        return self.helper.submit if self.helper is not None else None

    @property
    def name(self) -> str:
        """``optim_step``, or ``train_step()`` for a helper."""
        if self.call is not None:
            return self.call.method.plain_name
        return f"{self.helper.name}()" if self.helper is not None else "a request"


@dataclass(frozen=True)
class Wait:
    node: cst.BaseExpression  # the ``.result()`` call, the ``await`` expression, a helper's call
    futures: frozenset[TType]  # what is waited on
    blocking: bool  # blocks the thread (``.result()``, concurrent.futures.wait)
    waited: tuple[cst.BaseExpression, ...]  # the expressions that hold the futures
    # ``asyncio.gather(...)`` or ``concurrent.futures.wait(...)``: one wait for requests that were
    # all submitted before it, the fan-out already done (never "one request at a time").
    fan_in: bool = False
    helper: Summary | None = None  # set when the wait is inside a project function called here

    @property
    def methods(self) -> set[str]:
        return {t.method.plain_name for t in self.futures if t.method is not None}

    @property
    def roles(self) -> frozenset[Role]:
        return frozenset(t.method.role for t in self.futures if t.method is not None)

    @property
    def anchor(self) -> cst.CSTNode:
        """Where the wait is reported: the ``result`` of ``x.result()`` (not the first line of a
        multi-line expression), the ``await``, or the call (of a helper, of
        ``concurrent.futures.wait``)."""
        node = self.node
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "result"
            and self.helper is None
        ):
            return node.func.attr
        return node


Event = Submit | Wait


def waited_text(wait: Wait) -> str:
    """What a wait waits for, in a message: ```forward_backward```, or for a helper ```fwd_bwd()```
    (``helper_wait_text`` says what the helper waits for)."""
    helper = wait.helper
    if helper is None:
        methods = ", ".join(sorted(wait.methods))
        return f"`{methods}`" if methods else "a Tinker request"
    return f"`{helper.name}()`"


def helper_wait_text(wait: Wait, here: str) -> str:
    """For a helper's wait, what the helper waits for, as a help says it: "`fwd_bwd()` waits for
    `forward_backward` (steps.py:8). "; "" for a wait made where it is reported."""
    helper = wait.helper
    if helper is None:
        return ""
    if helper.wait is None:
        methods = ", ".join(sorted(wait.methods))
        return f"`{helper.name}()` waits for `{methods}`. " if methods else ""
    site = helper.wait
    return f"`{helper.name}()` waits for `{site.what}` ({site.where(here)}). "


def kept_by_receiver(wait: Wait) -> set[str]:
    """Write keys of the object a helper's wait leaves the new clients in: a method of the
    project that refreshes the sampler or makes a client (``trainer.run_training()`` ending in
    ``self.sampler = tc.save_weights_and_get_sampling_client()``) keeps what it waited for in its
    object, so a request made through that object later (``evaluate(trainer.sampler)``) needs
    the wait. Empty for any other wait."""
    helper = wait.helper
    if helper is None or not (helper.refreshes_sampler or helper.makes_clients):
        return set()
    call = wait.node.expression if type(wait.node) is cst.Await else wait.node
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
        return set()
    receiver = dotted_name(call.func.value)
    return write_keys(receiver) if receiver else set()


def may_block(model: ModelView, call: cst.Call, scope: Scope) -> bool:
    """Whether ``call`` has the shape of a blocking wait (``x.result()``,
    ``concurrent.futures.wait(...)``), before asking what ``x`` is."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "result":
        return True
    return model.qualify(func, scope) in BLOCKING_WAIT_FUNCTIONS


def wait_of(model: ModelView, node: cst.CSTNode, scope: Scope) -> Wait | None:
    """A wait on a Tinker future, if ``node`` is one (spec: "Waits")."""
    if type(node) is cst.Call:  # exact types: ``isinstance`` on libcst's classes is slow
        func = node.func
        if type(func) is cst.Attribute and func.attr.value == "result":
            futures = frozenset(t for t in model.types(func.value, scope) if t.is_future)
            return Wait(node, futures, True, (func.value,)) if futures else None
        if not node.args:
            return None  # the waits below take what they wait for: nothing to ask its name
        qualified = model.qualify(func, scope)
        if qualified in BLOCKING_WAIT_FUNCTIONS:
            futures = _futures_in(model, node.args[0].value, scope)
            return Wait(node, futures, True, (node.args[0].value,), True) if futures else None
        if qualified == "asyncio.run":
            # ``asyncio.run(sc.sample_async(p))``: the coroutine runs to the end, blocking.
            value = node.args[0].value
            futures = frozenset(t for t in model.types(value, scope) if _is_waitable(t))
            return Wait(node, futures, True, (value,)) if futures else None
        return None
    if type(node) is not cst.Await:
        return None
    inner = node.expression
    if type(inner) is cst.Call:
        func = inner.func
        if type(func) is cst.Attribute and func.attr.value in ("result_async", "coroutine"):
            futures = frozenset(t for t in model.types(func.value, scope) if t.is_future)
            if futures:
                return Wait(node, futures, False, (func.value,))
        if model.is_gather(inner, scope):
            values = [arg.value for arg in inner.args]
            futures = frozenset(t for v in values for t in _futures_in(model, v, scope))
            return Wait(node, futures, False, tuple(values), True) if futures else None
    futures = frozenset(t for t in model.types(inner, scope) if _is_waitable(t))
    return Wait(node, futures, False, (inner,)) if futures else None


def _is_waitable(t: TType) -> bool:
    """Awaiting a value of this type waits for a request (not e.g. ``await tc.optim_step_async()``,
    which only submits and gives a future)."""
    if t.kind in (Kind.FUTURE, Kind.CLIENT_FUTURE):
        return True
    return (
        t.kind is Kind.COROUTINE
        and t.method is not None
        and t.method.returns is Returns.VALUE_AFTER_AWAIT
    )


def _futures_in(model: ModelView, expr: cst.BaseExpression, scope: Scope) -> frozenset[TType]:
    found = set()
    for t in model.types(expr, scope):
        if t.kind is Kind.LIST and t.inner is not None:
            t = t.inner
        if _is_waitable(t) or t.is_future:
            found.add(t)
        elif (
            t.kind is Kind.COROUTINE
            and t.inner is not None
            and not t.inner.is_future
            and (t.method is not None or t.origin is not None)
        ):
            found.add(t)  # ``fut.coroutine()`` inside a gather
    if isinstance(expr, cst.List | cst.Tuple):
        for element in expr.elements:
            found |= _futures_in(model, element.value, scope)
    elif isinstance(expr, cst.ListComp | cst.GeneratorExp):
        found |= _futures_in(model, expr.elt, scope)
    elif isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("coroutine", "result_async"):
            found |= {t for t in model.types(func.value, scope) if t.is_future}
    return frozenset(found)


def _kept_walk(kind: str) -> Callable[[_Walk], _Walk]:
    """A walk of ``node``'s own subtree whose answer the next lint of the same buffer takes over
    for the same node (``_kept_walks``): it reads nothing but the subtree."""

    def decorate(walk: _Walk) -> _Walk:
        @functools.wraps(walk)
        def kept_or_walked(model: ModelView, node: cst.CSTNode) -> Any:
            kept = _kept_walks(model)
            if kept is None:
                return walk(model, node)
            found = kept.get(kind, node)
            if found is None:
                found = walk(model, node)
                kept.put(kind, node, found)
            return found

        return cast(_Walk, kept_or_walked)

    return decorate


def events_in(model: ModelView, node: cst.CSTNode, scope: Scope) -> list[Event]:
    """The submits and waits ``node`` performs, in evaluation order (post-order: arguments are
    evaluated before the call that takes them). Nested functions and lambdas run later: skipped."""
    key = (id(node), id(scope))
    cached = model.events_cache.get(key)
    if cached is not None:
        return cached
    summaries = model.helpers.summaries
    if not summaries.settled:
        # Every function is summarised before any body is walked: a helper's call met below
        # would settle them mid-walk, and the function holding ``node`` would then be summarised
        # from the list below while it is still empty (issue 32, H).
        summaries.settle()
        cached = model.events_cache.get(key)
        if cached is not None:
            return cached
    found: list[Event] = []
    model.events_cache[key] = found
    for current in _calls_and_awaits(model, node):
        if type(current) is cst.Call:  # exact types: ``isinstance`` on libcst's classes is slow
            call = current
            submit = model.submit_of(call, scope)
            if submit is not None:
                found.append(Submit(call, submit))
            wait = wait_of(model, call, scope)
            if wait is not None:
                found.append(wait)
            elif submit is None:
                found.extend(helper_events(model, call, scope))
        else:
            wait = wait_of(model, current, scope)
            if wait is not None:
                found.append(wait)
            else:
                found.extend(awaited_helper_events(model, cast(cst.Await, current), scope))
    return found


@_kept_walk("events")
def _calls_and_awaits(model: ModelView, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The calls and awaits in ``node``, in evaluation order (post-order), outside nested
    functions and lambdas."""
    found: list[cst.CSTNode] = []
    children_of = model.children_of

    def walk(current: cst.CSTNode) -> None:
        kind = type(current)
        if kind in _NESTED_TYPES:
            return
        kids = children_of.get(id(current))
        if kids:
            for child in kids:
                walk(child)
        if kind is cst.Call or kind is cst.Await:
            found.append(current)

    walk(node)
    return found


# ==========================================================================================
# Calls of the project's own functions
# ==========================================================================================
# A request of each role, to stand for what a helper waits for when its summary does not say
# which method (``Summary.wait`` names the first wait only).
_ROLE_METHODS = {
    Role.TRAIN: MethodRef(Client.TRAINING, "forward_backward"),
    Role.SAMPLE: MethodRef(Client.SAMPLING, "sample"),
    Role.SAVE: MethodRef(Client.TRAINING, "save_state"),
}


def helper_events(model: ModelView, call: cst.Call, scope: Scope) -> list[Event]:
    """What calling a (sync) project function does here: its submits, then its waits, on its own
    requests and on futures passed to it. Calling an ``async def`` runs nothing until awaited;
    ``asyncio.run(helper(...))`` runs it to the end, blocking."""
    if call.args and model.qualify(call.func, scope) == "asyncio.run":
        inner = call.args[0].value
        if isinstance(inner, cst.Call):
            helper = model.helper_of(inner, scope)
            if helper is not None and helper.is_async:
                return _run(call, helper, blocking=True, reads=_closure_reads(model, inner, scope))
        return []
    helper = model.helper_of(call, scope)
    if helper is None or helper.is_async:
        return []
    events = _run(call, helper, blocking=True, reads=_closure_reads(model, call, scope))
    passed: set[TType] = set()
    for position in helper.waits_params:
        if position < len(call.args) and not call.args[position].keyword:
            value = call.args[position].value
            passed |= {t for t in model.types(value, scope) if t.is_future}
    if passed:
        events.append(Wait(call, frozenset(passed), True, (call,), helper=helper))
    return events


def awaited_helper_events(model: ModelView, node: cst.Await, scope: Scope) -> list[Event]:
    """``await helper(...)`` of a project ``async def``: it runs now, submits and waits."""
    inner = node.expression
    if not isinstance(inner, cst.Call):
        return []
    helper = model.helper_of(inner, scope)
    if helper is None or not helper.is_async:
        return []
    events = _run(inner, helper, blocking=False, reads=_closure_reads(model, inner, scope))
    return [replace(e, node=node) if isinstance(e, Wait) else e for e in events]


def _closure_reads(model: ModelView, call: cst.Call, scope: Scope) -> frozenset[str]:
    """What a nested function called here reads from the scopes around it (``callable_reads``,
    the one owner of what a function reads when it runs)."""
    target = resolve_function(model.methods, call.func, scope)
    if target is None or target.parent is None:
        return frozenset()
    return frozenset(callable_reads(model, call.func, scope))


def _run(
    call: cst.Call, helper: Summary, *, blocking: bool, reads: frozenset[str] = frozenset()
) -> list[Event]:
    events: list[Event] = []
    if helper.submits:
        events.append(Submit(call, None, helper, reads))
    if helper.waits:
        requests = []
        first = helper.wait.request if helper.wait is not None else None
        for role in sorted(helper.waits, key=lambda r: r.value):
            ref = (
                first
                if first is not None and first.method is not None and (first.method.role is role)
                else _ROLE_METHODS.get(role)
            )
            method = ref.method if ref is not None else None
            if method is not None:
                requests.append(future(TType(Kind.RESULT), method, call))
        events.append(Wait(call, frozenset(requests), blocking, (call,), helper=helper))
    return events


# ==========================================================================================
# Names read and written
# ==========================================================================================
# Reads and writes are sets of keys for dotted paths, made so that a read and a write meet (their
# sets intersect) exactly when one path is a prefix of the other: writing ``self.out`` reaches
# a read of ``self.out.loss`` and a read of ``self`` passed whole, but not a read of
# ``self.client``. A read of ``p`` has ``=q`` for every prefix ``q`` of ``p`` (itself included)
# and ``^p``; a write of ``p`` has ``=p`` and ``^q`` for every prefix ``q``.
def _prefixes(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def read_keys(path: str) -> set[str]:
    keys = {"=" + prefix for prefix in _prefixes(path)}
    keys.add("^" + path)
    return keys


def write_keys(path: str) -> set[str]:
    keys = {"^" + prefix for prefix in _prefixes(path)}
    keys.add("=" + path)
    return keys


def exact_paths(keys: set[str]) -> set[str]:
    """The paths themselves in a set of read keys (``fut`` for ``fut``, not ``self`` for
    ``self.fut``): what two reads of the same value share."""
    return {key for key in keys if key.startswith("^")}


def names_read(model: ModelView, node: cst.CSTNode) -> set[str]:
    """Read keys of every name and dotted path (``self.fut``) ``node`` reads; not attribute or
    keyword names, and nothing inside nested functions or classes."""
    key = id(node)
    cached = model.reads_cache.get(key)
    if cached is not None:
        return cached
    kept = _kept_walks(model)
    if kept is not None:
        found = kept.get("reads", node)
        if found is not None:
            model.reads_cache[key] = cast(set[str], found)
            return cast(set[str], found)
    names: set[str] = set()
    children_of = model.children_of
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name:
            names |= read_keys(cast(cst.Name, current).value)
        elif kind is cst.Attribute:
            attribute = cast(cst.Attribute, current)
            dotted = dotted_name(attribute)
            if dotted is not None:
                names |= read_keys(dotted)
            else:
                stack.append(attribute.value)  # ``f(x).a``: what ``f(x)`` reads
        elif kind is cst.Arg:
            stack.append(cast(cst.Arg, current).value)
        elif (kind is cst.FunctionDef or kind is cst.ClassDef) and current is not node:
            continue
        else:
            kids = children_of.get(id(current))
            if kids:
                stack.extend(kids)
    model.reads_cache[key] = names
    if kept is not None:
        kept.put("reads", node, names)
    return names


def _lambda_reads(node: cst.Lambda, bound: frozenset[str]) -> set[str]:
    """Read keys of the free names a lambda's body reads when it runs (``lambda d, lp: loss(lp,
    ref)`` reads ``loss`` and ``ref``). The model's tree does not index lambda bodies (they are
    not steps): walked here with libcst's."""
    bound = bound | {p.name.value for p in _all_params(node.params)}
    names: set[str] = set()
    stack: list[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Lambda):
            names |= _lambda_reads(current, bound)
            continue
        if isinstance(current, cst.Name | cst.Attribute):
            dotted = dotted_name(current)
            if dotted is not None:
                if dotted.split(".", 1)[0] not in bound:
                    names |= read_keys(dotted)
                continue
        if isinstance(current, cst.Attribute):
            stack.append(current.value)  # ``f(x).a``: what ``f(x)`` reads
            continue
        stack.extend(current.children)
    return names


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    found += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return found


def reads_when_run(model: ModelView, node: cst.CSTNode, scope: Scope) -> set[str]:
    """Read keys of what evaluating ``node`` reads: its own names, and, when it makes a call,
    what the functions it calls or hands over read (``callable_reads``). Defining a lambda or
    binding a method reads nothing yet."""
    key = (id(node), id(scope))
    cached = model.run_reads_cache.get(key)
    if cached is not None:
        return cached
    reads = names_read(model, node)
    if _makes_call(model, node):
        reads = reads | callable_reads(model, node, scope)
    model.run_reads_cache[key] = reads
    return reads


def submit_reads(model: ModelView, submit: Submit, scope: Scope) -> set[str]:
    """Read keys of what a submit needs: what its receiver and arguments read, what the
    functions handed to it read when it calls them (``callable_reads``), and, for a call of a
    nested helper, what that closure reads."""
    reads = reads_when_run(model, submit.node, scope)
    return reads | submit.closure_reads if submit.closure_reads else reads


def callable_reads(model: ModelView, node: cst.CSTNode, scope: Scope) -> set[str]:
    """Read keys of what the functions of this module that ``node`` names read when they run: a
    closure (``def dpo_loss(...)`` reading ``ref`` from the enclosing function), a lambda, a bound
    method (``self._loss`` reading ``self.ref_logprobs``), and the functions those name in turn.
    Passed to ``forward_backward_custom``, they read it when the request runs, so the request
    needs what they read (spec: "Dependencies"). The function's own parameters and locals are
    not the caller's names: left out; its ``self`` is the caller's receiver. Module functions are
    followed only from module code (a script's globals are its names)."""
    found: set[str] = set()
    seen: set[int] = set()
    pending: list[tuple[cst.CSTNode, Scope, str | None, int]] = [(node, scope, None, 0)]
    while pending:
        current, current_scope, rename, depth = pending.pop()
        for kind, value, attr in _callable_names(model, current):
            if kind is _LAMBDA:
                found |= _lambda_reads(cast(cst.Lambda, value), frozenset())
                continue
            # What ``model.resolve_function`` answers, from the one lookup: a name bound by a
            # ``def``, or ``self.method`` of the enclosing class.
            function: FunctionInfo | None = None
            receiver: str | None = None
            if kind is _NAME:
                bindings = current_scope.lookup(cast(str, value))
                for binding in bindings:
                    if type(binding.expr) is cst.Lambda:  # ``loss = lambda d, lp: ...`` earlier
                        found |= _lambda_reads(binding.expr, frozenset())
                function = next((b.function for b in bindings if b.kind is BindingKind.DEF), None)
            else:
                owner = current_scope.function
                if owner is not None and owner.class_name is not None and value == owner.self_name:
                    function = model.methods.get(owner.class_name, {}).get(attr)
                    if function is not None and function.self_name is not None:
                        # The caller's name for its ``self`` (in a method reached the same
                        # way, the outer caller's name).
                        receiver = rename if rename is not None else cast(str, value)
            if function is None or id(function.node) in seen or depth >= _CALLABLE_DEPTH:
                continue
            if receiver is None and function.parent is None and scope.kind != "module":
                continue  # a module function reads globals, not the calling function's names
            seen.add(id(function.node))
            local = set(function.scope.bindings)
            for key in names_read(model, function.node.body):  # not its parameters
                root = key[1:].split(".", 1)[0]
                if root == function.self_name and receiver is not None:
                    found.add(key[0] + receiver + key[1 + len(root) :])
                elif root not in local:
                    found.add(key)
            pending.append((function.node.body, function.scope, receiver, depth + 1))
    return found


# How many functions deep ``callable_reads`` follows names (a loss method calling a helper method).
_CALLABLE_DEPTH = 3


@_kept_walk("call")
def _makes_call(model: ModelView, node: cst.CSTNode) -> bool:
    """Whether ``node`` makes a call (outside nested functions and lambdas)."""
    return any(type(current) is cst.Call for current in model.walk(node, NESTED_CODE))


@_kept_walk("awaits")
def awaits_in(model: ModelView, node: cst.CSTNode) -> list[cst.Await]:
    """The awaits in ``node`` (``node`` itself included), outside nested functions and lambdas,
    in pre-order."""
    return [n for n in model.walk(node, NESTED_CODE) if isinstance(n, cst.Await)]


_LAMBDA, _NAME, _SELF_ATTRIBUTE = "lambda", "name", "attribute"


@_kept_walk("callable names")
def _callable_names(model: ModelView, node: cst.CSTNode) -> list[tuple[str, cst.Lambda | str, str]]:
    """What in ``node`` (outside nested functions) may name or be a function, each once, in the
    order first met: the lambdas, ``(_LAMBDA, lambda, "")``; the names, ``(_NAME, name, "")``
    (an attribute's own name too); and ``x.attr`` on a plain name, ``(_SELF_ATTRIBUTE, "x",
    "attr")``, which is a method when ``x`` is the ``self`` of the enclosing method. Another
    meeting of the same name asks ``callable_reads`` nothing new."""
    found: list[tuple[str, cst.Lambda | str, str]] = []
    met: set[tuple[str, ...]] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Lambda:
            found.append((_LAMBDA, cast(cst.Lambda, current), ""))
            continue
        if kind is cst.Name:
            key = (_NAME, cast(cst.Name, current).value)
            if key not in met:
                met.add(key)
                found.append((key[0], key[1], ""))
            continue
        if kind is cst.Attribute:
            attribute = cast(cst.Attribute, current)
            receiver = attribute.value
            if type(receiver) is cst.Name:
                held = (_SELF_ATTRIBUTE, receiver.value, attribute.attr.value)
                if held not in met:
                    met.add(held)
                    found.append(held)
        elif kind in _NESTED_TYPES and current is not node:
            continue
        kids = model.children_of.get(id(current))
        if kids:
            stack.extend(kids)
    return found


def target_keys(target: cst.BaseExpression) -> set[str]:
    """Write keys of an assignment target; ``x[i] = v`` writes (mutates) ``x``, ``x.a = v``
    writes ``x.a`` (and so ``x`` read whole)."""
    if isinstance(target, cst.Name):
        return write_keys(target.value)
    if isinstance(target, cst.Tuple | cst.List):
        return {k for e in target.elements for k in target_keys(e.value)}
    if isinstance(target, cst.StarredElement):
        return target_keys(target.value)
    if isinstance(target, cst.Attribute):
        dotted = dotted_name(target)
        return write_keys(dotted) if dotted is not None else set()
    if isinstance(target, cst.Subscript):
        return target_keys(target.value)
    return set()


def names_written(model: ModelView, stmt: cst.CSTNode) -> set[str]:
    """Names a statement binds or may mutate: assignment targets, walrus targets, and receivers of
    storing method calls (``x.append(v)`` stores ``v`` in ``x``)."""
    return _writes(model, stmt)[2]


def names_bound(model: ModelView, stmt: cst.CSTNode) -> set[str]:
    """Names a statement (re)binds: assignment and walrus targets. Unlike a mutation, a binding
    replaces what the name held before."""
    return _writes(model, stmt)[0]


def names_mutated(model: ModelView, stmt: cst.CSTNode) -> set[str]:
    """Receivers of storing method calls (``x.append(v)`` stores ``v`` in ``x``); other method
    calls (``renderer.parse_response(r)``) are taken not to keep their arguments."""
    return _writes(model, stmt)[1]


def _writes(model: ModelView, stmt: cst.CSTNode) -> tuple[set[str], set[str], set[str]]:
    """Bound, mutated, and both: one walk of the statement, memoised (asked once per path)."""
    cached = model.writes_cache.get(id(stmt))
    if cached is not None:
        return cached
    kept = _kept_walks(model)
    if kept is not None:
        served = kept.get("writes", stmt)
        if served is not None:
            cached = model.writes_cache[id(stmt)] = cast(
                tuple[set[str], set[str], set[str]], served
            )
            return cached
    bound: set[str] = set()
    mutated: set[str] = set()
    if isinstance(stmt, cst.Assign):
        for target in stmt.targets:
            bound |= target_keys(target.target)
    elif isinstance(stmt, cst.AnnAssign | cst.AugAssign):
        bound |= target_keys(stmt.target)
    children_of = model.children_of
    stack = [stmt]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.NamedExpr:
            bound |= target_keys(cast(cst.NamedExpr, node).target)
        elif kind is cst.Call:
            call = cast(cst.Call, node)
            func = call.func
            if call.args and type(func) is cst.Attribute and func.attr.value in STORING_METHODS:
                dotted = dotted_name(func.value)
                if dotted:
                    mutated |= write_keys(dotted)
        elif kind in _NESTED_TYPES and node is not stmt:
            continue
        kids = children_of.get(id(node))
        if kids:
            stack.extend(kids)
    found = model.writes_cache[id(stmt)] = (bound, mutated, bound | mutated)
    if kept is not None:
        kept.put("writes", stmt, found)
    return found


# The kind the model infers for each SDK value class of ``NON_MUTATING_METHODS``.
_VALUE_KINDS = {"ModelInput": Kind.MODEL_INPUT}
_NON_MUTATING = {_VALUE_KINDS[name]: methods for name, methods in NON_MUTATING_METHODS.items()}
_NON_MUTATING_NAMES = frozenset(m for methods in NON_MUTATING_METHODS.values() for m in methods)


def writes_in(
    model: ModelView, stmt: cst.CSTNode, scope: Scope
) -> tuple[set[str], set[str], set[str]]:
    """What ``stmt`` binds, mutates, and both, as ``_writes`` says, less the receivers of the SDK's
    non-mutating methods (``NON_MUTATING_METHODS``): ``prompt.append(chunk)`` on a ``ModelInput``
    returns a new one and leaves ``prompt`` as it was, where a list's ``append`` stores in it."""
    bound, mutated, written = _writes(model, stmt)
    if not mutated:
        return bound, mutated, written
    calls = _storing_calls(model, stmt)
    if not any(method in _NON_MUTATING_NAMES for _, method, _ in calls):
        return bound, mutated, written
    kept: set[str] = set()
    for dotted, method, receiver in calls:
        if method in _NON_MUTATING_NAMES and any(
            method in _NON_MUTATING.get(t.kind, ()) for t in model.types(receiver, scope)
        ):
            continue
        kept |= write_keys(dotted)
    return bound, kept, bound | kept


def _storing_calls(
    model: ModelView, stmt: cst.CSTNode
) -> tuple[tuple[str, str, cst.BaseExpression], ...]:
    """The calls of ``STORING_METHODS`` in ``stmt`` that ``_writes`` counts as storing in their
    receiver: (the receiver's dotted name, the method, the receiver), memoised."""
    key = id(stmt)
    found = model.storing_cache.get(key)
    if found is not None:
        return found
    calls = []
    for node in model.walk(stmt, NESTED_CODE):
        if type(node) is cst.Call:
            func = node.func
            if node.args and type(func) is cst.Attribute and func.attr.value in STORING_METHODS:
                dotted = dotted_name(func.value)
                if dotted:
                    calls.append((dotted, func.attr.value, func.value))
    found = model.storing_cache[key] = tuple(calls)
    return found


def rebound_names(
    model: ModelView, small: cst.CSTNode, scope: Scope, tainted: set[str]
) -> set[str]:
    """The plain names an assignment binds to a value that reads nothing of ``tainted``
    (``prompt = render(ex)``): whatever they held before is gone, the result with it (a kill, in
    reaching-definitions terms). Empty for anything else: an augmented assignment reads its
    target; ``x.a = v`` and ``x[i] = v`` change part of ``x``."""
    if type(small) is cst.Assign:
        value: cst.BaseExpression | None = small.value
        targets = [t.target for t in small.targets]
    elif type(small) is cst.AnnAssign and small.value is not None:
        value, targets = small.value, [small.target]
    else:
        return set()
    assert value is not None
    if reads_when_run(model, value, scope) & tainted:
        return set()
    return {name for target in targets for name in target_names(target)}


def without_names(keys: set[str], names: set[str]) -> set[str]:
    """``keys`` (read or write keys) less those of the paths under the plain ``names``."""
    if not names:
        return keys
    return {key for key in keys if key[1:].split(".", 1)[0] not in names}


# ==========================================================================================
# The walks above, kept from one lint of a buffer for the next (an editor's, on each edit)
# ==========================================================================================
# ``names_read``, ``_writes``, ``_callable_names``, ``_makes_call``, ``_calls_and_awaits``,
# ``awaits_in`` and the jumps of ``has_jump`` depend on nothing but the node's own subtree
# (libcst's nodes do not change, and the model's tree index gives any node the same children in
# every lint), and ``parse.py`` hands back the previous parse's nodes wherever the
# text around them did not change: so a node of the last lint's tree has the same answers now.
# Each lint keeps the answers it used, with their nodes (an entry holds its node alive, so its id
# names no other node while kept). Callers do not change what they are given.
_Answers = dict[tuple[str, int], tuple[cst.CSTNode, object]]  # (walk, id(node)) -> (node, answer)


@dataclass(eq=False)
class _KeptWalks:
    owner: weakref.ref[ModelView]  # the lint filling ``now``
    now: _Answers
    last: _Answers  # the previous lint's

    def get(self, walk: str, node: cst.CSTNode) -> object | None:
        key = (walk, id(node))
        entry = self.now.get(key)
        if entry is None:
            entry = self.last.get(key)
            if entry is None or entry[0] is not node:
                return None
            self.now[key] = entry
        return entry[1]

    def put(self, walk: str, node: cst.CSTNode, answer: object) -> None:
        self.now[(walk, id(node))] = (node, answer)


_STAGE = "walks"  # its name in a buffer's carry-over


# The kept walks asked for last (weakly: the store alone keeps them): a lint asks for its own
# ones on every walk, some 1,500 times, and each time the store's lock would be taken.
_latest: weakref.ref[_KeptWalks] | None = None


def _kept_walks(model: ModelView) -> _KeptWalks | None:
    """This lint's kept walks, when its buffer keeps anything (the server's): the first call of a
    lint takes over the previous lint's answers as ``last_*``."""
    global _latest
    latest = _latest() if _latest is not None else None
    if latest is not None and latest.owner() is model:
        return latest
    carry = model.helpers.summaries.carry
    if carry is None:
        return None
    kept = cast(_KeptWalks | None, carry.get(_STAGE))
    if kept is None or kept.owner() is not model:
        kept = _KeptWalks(weakref.ref(model), {}, kept.now if kept is not None else {})
        carry.put(_STAGE, kept)
    _latest = weakref.ref(kept)
    return kept


def rebound_mutations(writes: set[str], bound: set[str]) -> set[str]:
    """The write keys of the paths in ``writes`` that ``bound`` rebinds (``pending = []`` earlier,
    ``pending.append(fut)`` now)."""
    return {k for key in writes & bound if key.startswith("=") for k in write_keys(key[1:])}


# ==========================================================================================
# Linear steps of a body
# ==========================================================================================
@dataclass(eq=False)
class Step:
    """One thing a body does, in textual order: a small statement, an ``if``/``while`` test, or a
    ``for`` binding its target."""

    node: cst.CSTNode
    kind: str  # "stmt" | "test" | "for"
    reads: set[str]
    writes: set[str]  # bound or mutated
    events: list[Event]
    guarded: bool  # under a cadence guard (inside this body)
    control: cst.CSTNode | None = None  # for "test": the compound statement it controls
    jumps: bool = False  # a "test" whose block contains break/continue/return/raise
    exits: bool = False  # a "test" whose block can leave the enclosing loop (break/return/raise)
    binds: set[str] = field(default_factory=set)  # the part of ``writes`` that is rebound
    depth: int = 0  # nesting of compound statements inside the body
    extra: dict[str, object] = field(default_factory=dict)


def linear_steps(
    model: ModelView,
    body: Iterable[cst.CSTNode],
    scope: Scope,
    *,
    guarded: bool = False,
    depth: int = 0,
) -> Iterator[Step]:
    guarded_statements = model.index.guarded_statements
    for stmt in body:
        yield from _steps_of(model, stmt, scope, guarded or id(stmt) in guarded_statements, depth)


def events_in_order(
    model: ModelView, body: Sequence[cst.BaseStatement], scope: Scope
) -> Iterator[Event]:
    """The events of ``linear_steps(model, body, scope)``'s steps, in the same order, without the
    rest of each step: the names it reads and writes, and whether a test's block jumps (a walk of
    the whole block, for every ``if``). For a question that needs only the events (TNK104's, of
    every ``async def``). It follows ``_steps_of``'s order statement by statement:
    ``tests/test_rule_costs.py`` compares the two."""
    for stmt in body:
        kind = type(stmt)  # exact types: ``isinstance`` on libcst's classes is slow
        if kind is cst.SimpleStatementLine:
            for small in cast(cst.SimpleStatementLine, stmt).body:
                yield from events_in(model, small, scope)
        elif kind is cst.If:
            branch: cst.If | None = cast(cst.If, stmt)
            while branch is not None:  # ``elif``: an ``If`` in ``orelse``
                yield from events_in(model, branch.test, scope)
                yield from _block_events(model, branch.body, scope)
                orelse = branch.orelse
                branch = orelse if type(orelse) is cst.If else None
                if isinstance(orelse, cst.Else):
                    yield from _block_events(model, orelse.body, scope)
        elif kind is cst.While or kind is cst.For:
            loop = cast(cst.While | cst.For, stmt)
            header = loop.test if isinstance(loop, cst.While) else loop.iter
            yield from events_in(model, header, scope)
            yield from _block_events(model, loop.body, scope)
            if loop.orelse is not None:
                yield from _block_events(model, loop.orelse.body, scope)
        elif kind is cst.With:
            with_ = cast(cst.With, stmt)
            for item in with_.items:
                yield from events_in(model, item.item, scope)
            yield from _block_events(model, with_.body, scope)
        elif kind is cst.Try or kind is cst.TryStar:
            try_ = cast(cst.Try | cst.TryStar, stmt)
            yield from _block_events(model, try_.body, scope)
            for handler in try_.handlers:
                yield from _block_events(model, handler.body, scope)
            if try_.orelse is not None:
                yield from _block_events(model, try_.orelse.body, scope)
            if try_.finalbody is not None:
                yield from _block_events(model, try_.finalbody.body, scope)
        elif kind is cst.Match:
            match = cast(cst.Match, stmt)
            yield from events_in(model, match.subject, scope)
            for case in match.cases:
                yield from _block_events(model, case.body, scope)
        # FunctionDef / ClassDef: their bodies do not run here.


def _block_events(model: ModelView, block: cst.BaseSuite, scope: Scope) -> Iterator[Event]:
    if type(block) is cst.IndentedBlock:
        yield from events_in_order(model, block.body, scope)
    else:
        for small in cast(cst.SimpleStatementSuite, block).body:
            yield from events_in(model, small, scope)


def _steps_of(
    model: ModelView, stmt: cst.CSTNode, scope: Scope, guarded: bool, depth: int
) -> Iterator[Step]:
    # Exact types, as the walks above (parsed trees hold only libcst's concrete classes).
    if type(stmt) is cst.SimpleStatementLine:
        for small in stmt.body:
            yield _small_step(model, small, scope, guarded, depth)
    elif type(stmt) is cst.If:
        yield _test_step(model, stmt.test, stmt, scope, guarded, depth)
        body_guarded = guarded or id(stmt.body) in model.guarded_blocks
        yield from _block(model, stmt.body, scope, body_guarded, depth + 1)
        if stmt.orelse is not None:
            orelse = stmt.orelse
            if type(orelse) is cst.If:
                yield from _steps_of(model, orelse, scope, guarded, depth)
            else:
                yield from _block(model, orelse.body, scope, guarded, depth + 1)
    elif type(stmt) is cst.While:
        yield _test_step(model, stmt.test, stmt, scope, guarded, depth)
        yield from _block(model, stmt.body, scope, guarded, depth + 1)
        if stmt.orelse is not None:
            yield from _block(model, stmt.orelse.body, scope, guarded, depth + 1)
    elif type(stmt) is cst.For:
        yield Step(
            stmt,
            "for",
            names_read(model, stmt.iter),
            target_keys(stmt.target),
            events_in(model, stmt.iter, scope),
            guarded,
            depth=depth,
            binds=target_keys(stmt.target),
        )
        yield from _block(model, stmt.body, scope, guarded, depth + 1)
        if stmt.orelse is not None:
            yield from _block(model, stmt.orelse.body, scope, guarded, depth + 1)
    elif type(stmt) is cst.With:
        for item in stmt.items:
            writes = target_keys(item.asname.name) if item.asname is not None else set()
            yield Step(
                item,
                "stmt",
                names_read(model, item.item),
                writes,
                events_in(model, item.item, scope),
                guarded,
                depth=depth,
                binds=writes,
            )
        yield from _block(model, stmt.body, scope, guarded, depth + 1)
    elif type(stmt) is cst.Try or type(stmt) is cst.TryStar:
        yield from _block(model, stmt.body, scope, guarded, depth + 1)
        for handler in stmt.handlers:
            yield from _block(model, handler.body, scope, guarded, depth + 1)
        if stmt.orelse is not None:
            yield from _block(model, stmt.orelse.body, scope, guarded, depth + 1)
        if stmt.finalbody is not None:
            yield from _block(model, stmt.finalbody.body, scope, guarded, depth + 1)
    elif type(stmt) is cst.Match:
        yield _test_step(model, stmt.subject, stmt, scope, guarded, depth)
        for case in stmt.cases:
            yield from _block(model, case.body, scope, guarded, depth + 1)
    # FunctionDef / ClassDef: their bodies do not run here.


def _block(
    model: ModelView, block: cst.BaseSuite, scope: Scope, guarded: bool, depth: int
) -> Iterator[Step]:
    if type(block) is cst.IndentedBlock:
        yield from linear_steps(model, block.body, scope, guarded=guarded, depth=depth)
    elif type(block) is cst.SimpleStatementSuite:
        for small in block.body:
            yield _small_step(model, small, scope, guarded, depth)


def _small_step(
    model: ModelView, small: cst.CSTNode, scope: Scope, guarded: bool, depth: int
) -> Step:
    binds, _, written = writes_in(model, small, scope)  # bound, mutated, both: one memo
    return Step(
        small,
        "stmt",
        names_read(model, small),
        written,
        events_in(model, small, scope),
        guarded,
        depth=depth,
        binds=binds,
    )


def _test_step(
    model: ModelView,
    test: cst.BaseExpression,
    control: cst.CSTNode,
    scope: Scope,
    guarded: bool,
    depth: int,
) -> Step:
    return Step(
        test,
        "test",
        names_read(model, test),
        set(),
        events_in(model, test, scope),
        guarded,
        control=control,
        jumps=has_jump(model, control),
        exits=leaves_loop(model, control),
        depth=depth,
        binds=names_bound(model, test),
    )


def has_jump(model: ModelView, node: cst.CSTNode) -> bool:
    """Whether a block can leave the pass early (break, continue, return, raise)."""
    return bool(_jumps_in(model, node))


def leaves_loop(model: ModelView, control: cst.CSTNode) -> bool:
    """Whether a compound statement inside a loop body can end that loop: a ``return`` or
    ``raise`` anywhere in it, or a ``break`` not inside a loop of its own."""
    jumps = _jumps_in(model, control)
    if jumps & _ENDS:
        return True
    if cst.Break not in jumps or isinstance(control, cst.For | cst.While):
        return False  # no break; or its breaks end it, not the loop around it
    key = id(control)
    found = model.breaks_cache.get(key)
    if found is None:
        found = model.breaks_cache[key] = cst.Break in _statement_kinds(model, control, _LOOPS)
    return found


def _jumps_in(model: ModelView, node: cst.CSTNode) -> frozenset[type]:
    """The kinds of jump (break, continue, return, raise) in ``node``, nested code left out: one
    walk, memoised, answers both questions above (asked of every ``if`` and ``while``)."""
    key = id(node)
    found = model.jumps_cache.get(key)
    if found is None:
        found = model.jumps_cache[key] = _kept_jumps(model, node)
    return found


@_kept_walk("jumps")
def _kept_jumps(model: ModelView, node: cst.CSTNode) -> frozenset[type]:
    return frozenset(_statement_kinds(model, node, ()) & _JUMPS)


# What can hold a statement: the compound statements (not the nested code, whose statements run
# later), their blocks and clauses, a line of small statements. No expression holds one.
_STATEMENT_HOLDERS = frozenset(
    {
        cst.SimpleStatementLine,
        cst.SimpleStatementSuite,
        cst.IndentedBlock,
        cst.If,
        cst.Else,
        cst.While,
        cst.For,
        cst.With,
        cst.Try,
        cst.TryStar,
        cst.ExceptHandler,
        cst.ExceptStarHandler,
        cst.Finally,
        cst.Match,
        cst.MatchCase,
    }
)
_LOOPS = (cst.For, cst.While)


def _statement_kinds(model: ModelView, node: cst.CSTNode, skip: tuple[type, ...]) -> set[type]:
    """The kinds of ``node`` and the statements in it, outside nested functions and classes and
    the compound statements of ``skip`` in it: the walk enters only what can hold a statement
    (``_STATEMENT_HOLDERS``), not the expressions, where jumps cannot be."""
    kinds = {type(node)}
    children_of = model.children_of
    stack = [node]
    while stack:
        kids = children_of.get(id(stack.pop()))
        if kids:
            for child in kids:
                kind = type(child)
                kinds.add(kind)
                if kind in _STATEMENT_HOLDERS and kind not in skip:
                    stack.append(child)
    return kinds


# ==========================================================================================
# What a test decides
# ==========================================================================================
@dataclass(frozen=True)
class Decision:
    """What running the blocks of a compound statement (an ``if``, a ``while``, a ``match``) or
    not changes, besides what they store: whether they submit a request, leave the function
    (``return``, or a ``raise`` caught in it), or jump in the loop around them (``break``,
    ``continue``) past a request. A ``raise`` that leaves the function is an error path: the
    normal path goes on the same with or without it, so it decides nothing."""

    submits: bool  # its blocks submit a request (directly, or through a function that does)
    leaves: bool  # a ``return``; a ``raise`` caught by a ``try`` of the function
    loop: cst.For | cst.While | None  # the loop its ``break``/``continue`` jump in
    breaks: bool  # a ``break`` of ``loop``
    continues: bool  # a ``continue`` of ``loop``
    # A ``break``/``continue`` skips a request of ``loop``: one after the statement in ``loop``'s
    # body, or, for a ``break``, any of the body (the iterations it ends).
    skips_submit: bool

    def decides_submit(self, judged: cst.For | cst.While | None) -> bool:
        """Whether a test on a value, controlling these blocks, decides a request (so a wait for
        that value is needed by it): its blocks submit, leave the function, skip a request, or
        end ``judged``, the loop whose next pass is in question (None: a function's pass)."""
        return (
            self.submits
            or self.leaves
            or self.skips_submit
            or (self.breaks and self.loop is not None and self.loop is judged)
        )

    def ends(self, judged: cst.For | cst.While | None) -> bool:
        """Whether the blocks can end ``judged`` (a ``break`` of it, a ``return``)."""
        return self.leaves or (self.breaks and self.loop is not None and self.loop is judged)


def decision_of(model: ModelView, control: cst.CSTNode, scope: Scope) -> Decision:
    """What ``control`` decides (``Decision``), memoised: the one answer of whether a test that
    reads a result decides the next request, for every pipelining question (TNK101-TNK103)."""
    key = id(control)
    found = model.decisions_cache.get(key)
    if found is None:
        found = model.decisions_cache[key] = _decide(model, control, scope)
    return found


def _decide(model: ModelView, control: cst.CSTNode, scope: Scope) -> Decision:
    submits = _submits_in(model, [control], scope)
    jumps = _jumps_in(model, control)
    leaves = cst.Return in jumps or (cst.Raise in jumps and _raise_caught(model, control))
    breaks = continues = False
    loop = None
    if type(control) is not cst.For and type(control) is not cst.While and jumps & _LOOP_JUMPS:
        kinds = _statement_kinds(model, control, _LOOPS)
        breaks, continues = cst.Break in kinds, cst.Continue in kinds
        if breaks or continues:
            loop = _loop_around(model, control)
    skips = False
    if loop is not None:
        skips = _submits_in(model, _statements_after(model, control, loop), scope) or (
            breaks and _submits_in(model, [loop.body], scope)
        )
    return Decision(submits, leaves, loop, breaks, continues, skips)


def handler_decides(
    model: ModelView, attempt: cst.Try | cst.TryStar, handler: cst.CSTNode, scope: Scope
) -> bool:
    """Whether an ``except`` handler of ``attempt`` decides the request that follows the
    ``try`` on the normal path, so that the waits of its body are needed by that request: the
    handler leaves the function, or jumps past an unguarded request (``continue`` past the
    optimizer step). A handler that only logs, that makes a request of its own (a fallback:
    the request after the ``try`` is made either way), or whose jump skips only requests under
    a cadence guard (an evaluation every N steps), decides nothing of the next step's
    requests."""
    decision = decision_of(model, handler, scope)
    if decision.leaves:
        return True
    loop = decision.loop
    if loop is None:
        return False
    skipped = [loop.body] if decision.breaks else _statements_after(model, attempt, loop)
    return any(
        type(node) is cst.Call
        and model.roles_submitted_by_call(node, scope)
        and not _guarded(model, node, loop)
        for root in skipped
        for node in model.walk(root, NESTED_CODE)
    )


def _guarded(model: ModelView, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
    """Whether the call ``node`` runs under a cadence guard inside ``loop`` (the pass's own
    record of it: ``CallSite.guarded_in``)."""
    site = model.call_site_of.get(id(node))
    info = model.loop_of_node.get(id(loop))
    return site is not None and info is not None and site.guarded_in(info)


_LOOP_JUMPS = frozenset({cst.Break, cst.Continue})
_NESTED_OR_MODULE = frozenset({*NESTED_CODE, cst.Module})


def _submits_in(model: ModelView, nodes: Iterable[cst.CSTNode], scope: Scope) -> bool:
    return any(
        type(node) is cst.Call and model.roles_submitted_by_call(node, scope)
        for root in nodes
        for node in model.walk(root, NESTED_CODE)
    )


def _loop_around(model: ModelView, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The innermost ``for``/``while`` loop whose body holds ``node``, in its function."""
    child: cst.CSTNode = node
    parent = model.parent(node)
    while parent is not None and type(parent) not in _NESTED_OR_MODULE:
        if (type(parent) is cst.For or type(parent) is cst.While) and child is parent.body:
            return parent
        child, parent = parent, model.parent(parent)
    return None


def _statements_after(
    model: ModelView, node: cst.CSTNode, loop: cst.For | cst.While
) -> list[cst.CSTNode]:
    """The statements of ``loop``'s body that run after ``node`` in the same pass (the later
    statements of each block around it)."""
    found: list[cst.CSTNode] = []
    child, parent = node, model.parent(node)
    while parent is not None and child is not loop.body:
        if type(parent) in _STATEMENT_LISTS:
            siblings = cast(cst.IndentedBlock, parent).body
            found.extend(siblings[_position(siblings, child) + 1 :])
        child, parent = parent, model.parent(parent)
    return found


_STATEMENT_LISTS = frozenset({cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine})


def _position(siblings: Sequence[cst.CSTNode], child: cst.CSTNode) -> int:
    for index, sibling in enumerate(siblings):
        if sibling is child:
            return index
    return len(siblings)


def _raise_caught(model: ModelView, control: cst.CSTNode) -> bool:
    """Whether a ``raise`` in ``control`` lands in an ``except`` handler of its own function (a
    jump to the handler, like a ``break``, not an error path)."""
    for node in model.walk(control, NESTED_CODE):
        if type(node) is not cst.Raise:
            continue
        child: cst.CSTNode = node
        parent = model.parent(node)
        while parent is not None and type(parent) not in _NESTED_OR_MODULE:
            if (type(parent) is cst.Try or type(parent) is cst.TryStar) and (
                child is parent.body and parent.handlers
            ):
                return True
            child, parent = parent, model.parent(parent)
    return False


def controlled_steps(
    model: ModelView, steps: Sequence[Step], index: int, decision: Decision
) -> tuple[set[int], set[int]]:
    """For the test ``steps[index]`` (a step of ``linear_steps``), the later steps whose running
    it controls (those in its blocks; after a ``break``/``continue``, the rest of the loop's
    body), and the earlier ones (after a ``break``, the loop's body: how many passes ran). Their
    writes depend on what the test read (control dependence)."""
    test = steps[index]
    control = test.control
    assert control is not None
    jumped = decision.loop if decision.breaks or decision.continues else None
    later = {
        k
        for k in range(index + 1, len(steps))
        if model.contains(control, steps[k].node)
        or (jumped is not None and model.contains(jumped.body, steps[k].node))
    }
    earlier = (
        {k for k in range(index) if model.contains(jumped.body, steps[k].node)}
        if jumped is not None and decision.breaks
        else set()
    )
    return later, earlier
