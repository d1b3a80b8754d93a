"""What a function of the project does when it is called: the one owner of function summaries.

A summary says which requests a function submits (training, sampling, save), which it waits for
before it returns (its own, or futures passed in), whether that wait blocks the calling thread,
which futures and clients it hands back, and which of its parameters it waits on. Rules ask about a
call of a helper what they ask about a call of the SDK (``flow.events_in`` turns a summary into the
same submit and wait events), so a loop that calls ``fwd_bwd(batch)`` is judged like one that calls
``tc.forward_backward(batch).result()``.

Summaries are made bottom-up: a function's events include those of the helpers it calls, whose
summaries are made first (a call back into a function still being summarised counts as nothing:
recursion and cycles are cut there). Functions of other modules of the project come from the
``ProjectView`` the model is given (``tinker_lint.project``): there, summaries are plain data,
kept across files and runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

import libcst as cst

from tinker_lint.model.sdk import Client, Role, SdkMethod, lookup

if TYPE_CHECKING:
    from tinker_lint.model.scopes import FunctionInfo
    from tinker_lint.model.semantic import SemanticModel


@dataclass(frozen=True)
class MethodRef:
    """An SDK method by name (summaries are plain data: no SDK table rows, no nodes)."""

    client: Client
    name: str

    @property
    def method(self) -> SdkMethod | None:
        return lookup(self.client, self.name)


@dataclass(frozen=True)
class WaitSite:
    """Where a helper waits, for messages: ``forward_backward`` at ``steps.py:8``."""

    request: MethodRef | None  # the request waited for, when known
    path: str
    # The line, or how to find it: positions cost a pass over the module's code, so a site of
    # the module being linted is located only when a message names it.
    at: int | Callable[[], int] = field(compare=False)

    @property
    def line(self) -> int:
        return self.at if isinstance(self.at, int) else self.at()

    def located(self) -> WaitSite:
        """The same site with its line worked out (plain data, holding no tree)."""
        return self if isinstance(self.at, int) else replace(self, at=self.line)

    @property
    def what(self) -> str:
        return self.request.name.removesuffix("_async") if self.request else "a Tinker request"

    def where(self, here: str) -> str:
        """``line 8`` in the file ``here``, else ``steps.py:8`` (relative to ``here``'s
        directory; ``path`` is absolute, or empty for the file itself)."""
        if not self.path or self.path == os.path.abspath(here):
            return f"line {self.line}"
        try:
            shown = os.path.relpath(self.path, os.path.dirname(os.path.abspath(here)))
        except ValueError:  # another drive
            shown = self.path
        return f"{shown}:{self.line}"


@dataclass(frozen=True)
class Summary:
    """What calling one function does, as far as the pipelining rules care."""

    name: str  # ``fwd_bwd``, ``Policy.generate``
    is_async: bool = False
    submits: frozenset[Role] = frozenset()
    submit: MethodRef | None = None  # its first submit
    # Requests it waits for before it returns (for an ``async def``: once awaited).
    waits: frozenset[Role] = frozenset()
    wait: WaitSite | None = None  # its first such wait
    last_wait: WaitSite | None = None  # its last: where a step that ends waiting ends
    blocks: bool = False  # a wait that blocks the calling thread (``.result()``, ``asyncio.run``)
    # Its waits all sit in loops of its own: it serialises (or fans out) by itself, and is
    # reported there, not as one request per call.
    waits_in_loop: bool = False
    returns: tuple[MethodRef, ...] = ()  # futures of requests it submitted, handed back unwaited
    returns_clients: frozenset[Client] = frozenset()
    waits_params: tuple[int, ...] = ()  # positions of parameters it waits on (``resolve(fut)``)
    # It makes a client (calls a factory): per-model or per-run setup, not one request.
    makes_clients: bool = False
    # It saves weights for a new sampler (``save_weights_and_get_sampling_client``): an RL step
    # that ends refreshing what the next one samples from.
    refreshes_sampler: bool = False
    # A method that changes its object's state (``self.history.append(reply)``): calls on one
    # object depend on each other (a chat session, a multi-turn environment).
    mutates_self: bool = False

    @property
    def matters(self) -> bool:
        """Whether calling it is anything but plain Python to the pipelining rules."""
        return bool(
            self.submits
            or self.waits
            or self.blocks
            or self.returns
            or self.returns_clients
            or self.waits_params
        )

    # --- plain data, for the project index's cache ----------------------------------------
    def to_json(self) -> dict[str, Any]:
        def ref(r: MethodRef | None) -> list[str] | None:
            return None if r is None else [r.client.value, r.name]

        def site(w: WaitSite | None) -> list[Any] | None:
            return None if w is None else [ref(w.request), w.path, w.line]

        return {
            "name": self.name,
            "async": self.is_async,
            "submits": sorted(r.value for r in self.submits),
            "submit": ref(self.submit),
            "waits": sorted(r.value for r in self.waits),
            "wait": site(self.wait),
            "last_wait": site(self.last_wait),
            "blocks": self.blocks,
            "waits_in_loop": self.waits_in_loop,
            "returns": [ref(r) for r in self.returns],
            "returns_clients": sorted(c.value for c in self.returns_clients),
            "waits_params": list(self.waits_params),
            "makes_clients": self.makes_clients,
            "mutates_self": self.mutates_self,
            "refreshes_sampler": self.refreshes_sampler,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Summary:
        def ref(r: list[str] | None) -> MethodRef | None:
            return None if r is None else MethodRef(Client(r[0]), r[1])

        def site(w: list[Any] | None) -> WaitSite | None:
            return None if w is None else WaitSite(ref(w[0]), w[1], w[2])

        return cls(
            name=data["name"],
            is_async=data["async"],
            submits=frozenset(Role(r) for r in data["submits"]),
            submit=ref(data["submit"]),
            waits=frozenset(Role(r) for r in data["waits"]),
            wait=site(data["wait"]),
            last_wait=site(data["last_wait"]),
            blocks=data["blocks"],
            waits_in_loop=data["waits_in_loop"],
            returns=tuple(r for r in map(ref, data["returns"]) if r is not None),
            returns_clients=frozenset(Client(c) for c in data["returns_clients"]),
            waits_params=tuple(data["waits_params"]),
            makes_clients=data["makes_clients"],
            mutates_self=data["mutates_self"],
            refreshes_sampler=data["refreshes_sampler"],
        )


@dataclass(frozen=True)
class ClassSummary:
    """A class of the project: its bases (qualified) and its methods' summaries."""

    name: str
    bases: tuple[str, ...] = ()
    methods: dict[str, Summary] = field(default_factory=dict)
    abstract: frozenset[str] = frozenset()  # methods with no body of their own


class ProjectView(Protocol):
    """What a module's model may ask of the rest of the project (``tinker_lint.project``)."""

    @property
    def path(self) -> str:
        """This module's absolute path."""
        ...

    def absolute_name(self, name: str) -> str:
        """``.steps.fwd`` (a relative import, as ``ImportMap`` records it) -> ``pkg.steps.fwd``."""
        ...

    def function(self, qualified: str) -> Summary | None:
        """The summary of a project function (``pkg.steps.fwd``), or None if it is not one."""
        ...

    def method(self, qualified_class: str, name: str) -> Summary | None:
        """The summary of ``name`` on instances of a project class, through its bases; for a
        method without a body of its own, what every override in the class's module does."""
        ...

    def is_class(self, qualified: str) -> bool: ...


# ==========================================================================================
# Summaries of one module's functions
# ==========================================================================================
def is_abstract(node: cst.FunctionDef) -> bool:
    """No body of its own: ``...``, ``pass``, a docstring, ``raise NotImplementedError``, or
    ``@abstractmethod``."""
    for decorator in node.decorators:
        target = decorator.decorator
        name = target.attr.value if isinstance(target, cst.Attribute) else None
        if isinstance(target, cst.Name):
            name = target.value
        if name == "abstractmethod":
            return True
    body = node.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(
                small.value, cst.Ellipsis | cst.SimpleString | cst.ConcatenatedString
            ):
                continue
            if isinstance(small, cst.Raise) and "NotImplementedError" in _raised(small):
                continue
            return False
    return True


def _raised(node: cst.Raise) -> str:
    exc = node.exc
    if isinstance(exc, cst.Call):
        exc = exc.func
    return exc.value if isinstance(exc, cst.Name) else ""


_REQUESTS = frozenset({Role.TRAIN, Role.SAMPLE, Role.SAVE})
# The saves that give the next sampler: ``save_weights_and_get_sampling_client``,
# ``save_weights_for_sampler`` (and their ``_async`` forms).
_REFRESHES = re.compile(r"^save_weights_(?:and_get_sampling_client|for_sampler)")


class Summaries:
    """The summaries of one module's functions, made on demand and memoised; ``settle`` makes
    them all, in source order, before any rule asks (so no answer depends on who asked first)."""

    def __init__(self, model: SemanticModel, path: str) -> None:
        self.model = model
        self.path = path
        self._done: dict[int, Summary] = {}
        self._in_progress: set[int] = set()
        self._functions: dict[int, FunctionInfo] = {}  # id(summary) -> its function
        self.settled = False

    def settle(self) -> None:
        self.settled = True
        for function in self.model.functions:
            self.of_function(function)

    def of_function(self, function: FunctionInfo) -> Summary:
        if not self.settled:
            self.settle()
        key = id(function.node)
        done = self._done.get(key)
        if done is not None:
            return done
        name = f"{function.class_name}.{function.name}" if function.class_name else function.name
        if key in self._in_progress:
            return Summary(name, function.is_async)  # recursion: cut here
        self._in_progress.add(key)
        try:
            summary = self._summarise(function, name)
        finally:
            self._in_progress.discard(key)
        self._done[key] = summary
        self._functions[id(summary)] = function
        return summary

    def function_of(self, summary: Summary) -> FunctionInfo | None:
        """The function of this module ``summary`` was made of, if it is one of this module's."""
        return self._functions.get(id(summary))

    def _summarise(self, function: FunctionInfo, name: str) -> Summary:
        from tinker_lint.model.flow import Submit, Wait, linear_steps

        model = self.model
        body = function.node.body
        if not isinstance(body, cst.IndentedBlock):
            return Summary(name, function.is_async)
        if not self._may_matter(function):
            return Summary(name, function.is_async, mutates_self=self._mutates_self(function))
        submits: set[Role] = set()
        first_submit: MethodRef | None = None
        waits: set[Role] = set()
        first_wait: WaitSite | None = None
        last_wait: WaitSite | None = None
        makes_clients = False
        blocks = False
        in_loop = True
        mutates = False
        refreshes = False
        own = f"={function.self_name}." if function.self_name else None
        for step in linear_steps(model, body.body, function.scope):
            if own is not None and any(key.startswith(own) for key in step.writes):
                mutates = True
            if step.guarded:
                continue  # under a cadence guard: not on every call
            for event in step.events:
                if isinstance(event, Submit):
                    submits |= event.roles
                    first_submit = first_submit or event.request
                    if event.helper is not None and event.helper.mutates_self and own:
                        mutates = True
                    if event.helper is not None and event.helper.refreshes_sampler:
                        refreshes = True
                elif isinstance(event, Wait):
                    # Requests only: a helper that waits for a new client (a factory, or a
                    # sampler from saved weights) is setup, not a step.
                    roles = (
                        frozenset(
                            t.method.role
                            for t in event.futures
                            if t.method is not None and t.method.makes is None
                        )
                        & _REQUESTS
                    )
                    if event.helper is not None and event.helper.makes_clients:
                        makes_clients = True
                    if not roles:
                        continue
                    waits |= roles
                    blocks = blocks or event.blocking
                    # In a loop of its own, or of the helper it calls (``run_rollout``'s turns).
                    in_loop = in_loop and (
                        self._in_own_loop(event.node, function)
                        or (event.helper is not None and event.helper.waits_in_loop)
                    )
                    last_wait = self._site(event, last=True)
                    if first_wait is None:
                        first_wait = self._site(event)
        for site in function.calls:
            if site.guarded:
                continue  # under a cadence guard: not on every call
            call = model.sdk_call(site.node, site.scope)
            if call is not None and call.method.role is Role.FACTORY:
                makes_clients = True
            if call is not None and _REFRESHES.search(call.method.name):
                refreshes = True
            elif own is not None and not mutates:
                func = site.node.func
                if (
                    isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Name)
                    and func.value.value == function.self_name
                ):
                    helper = model.helper_of(site.node, site.scope)
                    mutates = helper is not None and helper.mutates_self
        returns, clients = self._returned(function)
        return Summary(
            name,
            function.is_async,
            submits=frozenset(submits),
            submit=first_submit,
            waits=frozenset(waits),
            wait=first_wait,
            last_wait=last_wait,
            blocks=blocks,
            waits_in_loop=bool(waits) and in_loop,
            returns=returns,
            returns_clients=clients,
            waits_params=self._waited_params(function),
            makes_clients=makes_clients,
            refreshes_sampler=refreshes,
            mutates_self=mutates,
        )

    def _may_matter(self, function: FunctionInfo) -> bool:
        """Whether the function can be anything but plain Python to the pipelining rules: it
        awaits, calls the SDK, waits, or calls a project function (most functions do none, and
        are not walked statement by statement)."""
        from tinker_lint.model.flow import may_block

        model = self.model
        for site in function.calls:
            if (
                model.sdk_call(site.node, site.scope) is not None
                or may_block(model, site.node, site.scope)
                or model.helpers.target(site.node, site.scope) is not None
            ):
                return True
        return any(
            type(node) is cst.Await
            for node in model.walk(function.node.body, (cst.FunctionDef, cst.Lambda))
        )

    def _mutates_self(self, function: FunctionInfo) -> bool:
        """A method that changes its object (``self.history.append(m)``, ``self.n += 1``)."""
        from tinker_lint.model.flow import linear_steps

        if function.self_name is None or not isinstance(function.node.body, cst.IndentedBlock):
            return False
        own = f"={function.self_name}."
        return any(
            key.startswith(own)
            for step in linear_steps(self.model, function.node.body.body, function.scope)
            for key in step.writes
        )

    def _site(self, wait: Any, *, last: bool = False) -> WaitSite:
        helper: Summary | None = wait.helper
        inner = None if helper is None else helper.last_wait if last else helper.wait
        if inner is not None:
            return inner  # the helper's own wait is the one to name
        request = None
        for t in sorted(wait.futures, key=lambda t: t.method.name if t.method else ""):
            if t.method is not None:
                request = MethodRef(t.method.client, t.method.name)
                break
        model, anchor = self.model, wait.anchor
        return WaitSite(request, self.path, lambda: model.line_of(anchor))

    def _in_own_loop(self, node: cst.CSTNode, function: FunctionInfo) -> bool:
        loops = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
        current = self.model.parent(node)
        while current is not None and current is not function.node:
            if isinstance(current, loops):
                return True
            current = self.model.parent(current)
        return False

    def _returned(self, function: FunctionInfo) -> tuple[tuple[MethodRef, ...], frozenset[Client]]:
        from tinker_lint.model.types import Kind

        futures: dict[MethodRef, None] = {}
        clients: set[Client] = set()
        for expr in function.returns:
            for t in _flatten(self.model.types(expr, function.scope)):
                if t.is_future and t.method is not None and t.method.is_submit:
                    futures[MethodRef(t.method.client, t.method.name)] = None
                elif t.kind is Kind.CLIENT and t.client is not None:
                    clients.add(t.client)
        ordered = tuple(sorted(futures, key=lambda r: (r.client.value, r.name)))
        return ordered, frozenset(clients)

    def _waited_params(self, function: FunctionInfo) -> tuple[int, ...]:
        """Parameters the function waits on directly (``p.result()``, ``await p``), whatever was
        passed: the caller knows whether it is a Tinker future."""
        params = [*function.node.params.posonly_params, *function.node.params.params]
        positions = {p.name.value: i for i, p in enumerate(params)}
        if function.self_name is not None:
            positions.pop(function.self_name, None)
            positions = {k: v - 1 for k, v in positions.items()}
        found: set[int] = set()
        for node in self.model.walk(function.node.body, (cst.FunctionDef, cst.Lambda)):
            target: cst.BaseExpression | None = None
            kind = type(node)  # exact types: ``isinstance`` on libcst's classes is slow
            if kind is cst.Call:
                func = cast(cst.Call, node).func
                if type(func) is cst.Attribute and func.attr.value == "result":
                    target = func.value
            elif kind is cst.Await:
                target = cast(cst.Await, node).expression
            if type(target) is cst.Name and target.value in positions:
                bindings = function.scope.bindings.get(target.value, [])
                if len(bindings) == 1:  # the parameter itself, never rebound
                    found.add(positions[target.value])
        return tuple(sorted(found))


def _flatten(types: frozenset[Any]) -> Iterator[Any]:
    from tinker_lint.model.types import Kind

    for t in types:
        if t.kind is Kind.TUPLE:
            for item in t.items:
                yield from item
        elif t.kind is Kind.LIST and t.inner is not None:
            yield t.inner
        else:
            yield t


def located(summary: Summary) -> Summary:
    """``summary`` with its wait sites' lines worked out: plain data, for another module."""
    return replace(
        summary,
        wait=summary.wait.located() if summary.wait else None,
        last_wait=summary.last_wait.located() if summary.last_wait else None,
    )
