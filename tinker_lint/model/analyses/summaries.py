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

from tinker_lint.model.facts.carry import Carry
from tinker_lint.model.facts.sdk import Client, Role, SdkMethod, lookup

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView
    from tinker_lint.model.facts.scopes import FunctionInfo
    from tinker_lint.model.facts.types import TType
    from tinker_lint.model.reuse import KeptModel, StatementFacts


@dataclass(frozen=True)
class MethodRef:
    """An SDK method by name (summaries are plain data: no SDK table rows, no nodes)."""

    client: Client
    name: str

    @property
    def method(self) -> SdkMethod | None:
        return lookup(self.client, self.name)


class LineOf:
    """The line ``anchor`` starts on, in ``model``: worked out when a message names it."""

    __slots__ = ("anchor", "model")

    def __init__(self, model: ModelView | None, anchor: cst.CSTNode) -> None:
        self.model = model
        self.anchor = anchor

    def __call__(self) -> int:
        assert self.model is not None, "a kept site is bound to the model before it is read"
        return self.model.line_of(self.anchor)


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

    def bound(self, model: ModelView | None) -> WaitSite:
        """The same site, its line asked of ``model`` (None: of no model, for keeping)."""
        at = self.at
        return replace(self, at=LineOf(model, at.anchor)) if isinstance(at, LineOf) else self

    @property
    def what(self) -> str:
        return self.request.name.removesuffix("_async") if self.request else "a Tinker request"

    def where(self, here: str) -> str:
        """``line 8`` in the file ``here``, else ``steps.py:8`` (relative to ``here``'s
        directory; ``path`` is absolute, or empty for the file itself); a module of a library
        the project does not hold (``tinker_cookbook.completers``, ``cookbook.py``) as named."""
        if self.path and not os.path.isabs(self.path):
            return self.path
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

    def holds(self, qualified: str) -> bool:
        """Whether a module of the project holds ``qualified`` (its longest prefix that names a
        module is the project's), whatever it is: a library the project holds (tinker-cookbook's
        own checkout) answers for itself."""
        ...


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

    def __init__(self, model: ModelView, path: str) -> None:
        self.model = model
        self.path = path
        self._done: dict[int, Summary] = {}
        self._in_progress: set[int] = set()
        self._functions: dict[int, FunctionInfo] = {}  # id(summary) -> its function
        self.settled = False
        self.cuts = 0  # calls back into a function being summarised (recursion cut there)
        # The buffer's carry-over: the summaries of its last lint are taken over where nothing
        # they read changed (``reuse.py``); None: nothing kept (a batch run).
        self.carry: Carry | None = None
        self._kept: KeptModel | None = None
        self._replaced: dict[int, int] = {}  # an edited def's statement id -> its old one's
        # Kept summaries that read edited functions: id(function node) -> (the summary, the
        # edited functions' statement ids); and each edited function's verdict.
        self._pending: dict[int, tuple[Summary, frozenset[int]]] = {}
        self._checked: dict[int, bool] = {}
        # id(a wait's node in an edited function's last tree) -> the node of that wait now
        self._moved: dict[int, cst.CSTNode] = {}
        self._functions_in: dict[int, list[FunctionInfo]] = {}  # statement id -> its functions
        self._same: set[int] = set()  # statements nothing they read changed in
        self.taken_over = 0  # summaries taken over from the last lint (for tests and benches)

    def settle(self) -> None:
        self.settled = True
        if self.carry is None:
            for function in self.model.functions:
                self.of_function(function)
            return
        from tinker_lint.model import reuse

        kept = reuse.take(self.carry)
        self.model.settle_types()  # first, as the first question would: its cuts are its own
        cuts = self.model.cut_count()
        statements = self._statement_facts(kept)
        if kept is not None:
            self._take_over(kept, statements)
        for function in self.model.functions:
            self.of_function(function)
        fresh = self._keepable(statements, cuts)
        if fresh is not None:
            reuse.keep(self.carry, fresh)

    # --- summaries kept across lints of one file (an editor's) ------------------------------
    def _statement_facts(
        self, kept: KeptModel | None
    ) -> dict[int, tuple[cst.CSTNode, StatementFacts]]:
        from tinker_lint.model.reuse import statement_facts

        old = kept.statements if kept is not None else {}
        facts: dict[int, tuple[cst.CSTNode, StatementFacts]] = {}
        for statement in self.model.module.body:
            entry = old.get(id(statement))
            if entry is None or entry[0] is not statement:
                entry = (statement, statement_facts(statement))
            facts[id(statement)] = entry
        return facts

    def _settings(self) -> tuple[Any, ...]:
        def pattern(p: re.Pattern[str] | None) -> Any:
            return None if p is None else (p.pattern, p.flags)

        model = self.model
        return (
            pattern(model.cadence_names),
            pattern(model.hot_loop_calls),
            model.helpers.module_name,
            self.path,
        )

    def _take_over(
        self, kept: KeptModel, statements: dict[int, tuple[cst.CSTNode, StatementFacts]]
    ) -> None:
        """Install the kept summaries of the functions whose statement reads what it read; those
        that read an edited function wait for it to be checked (``_pending``)."""
        from tinker_lint.model.reuse import answers_same, plan

        model = self.model
        if kept.settings != self._settings() or kept.consulted != model.consulted_before:
            return
        if kept.asked and not answers_same(model.project_again(), kept.asked):
            return
        found = plan(kept.statements, kept.order, model.module.body, statements)
        if not found.reusable:
            return
        self._kept = kept
        self._replaced = found.replaced
        self._same = {key for key, edited in found.reusable.items() if not edited}
        for statement_id, function in self._top_statements():
            self._functions_in.setdefault(statement_id, []).append(function)
        for statement_id, function in self._top_statements():
            entry = kept.summaries.get(id(function.node))
            if entry is None or entry[0] is not function.node:
                continue
            edited = found.reusable.get(statement_id)
            if edited is None:
                continue
            if edited:
                self._pending[id(function.node)] = (entry[1], edited)
            else:
                self._install(function, entry[1])

    def _install(self, function: FunctionInfo, kept: Summary) -> Summary | None:
        """``kept`` as this lint's summary of ``function``, its wait sites at this tree's nodes;
        None if one is at a node of the last tree that this one does not have."""
        (found, wait), (found_last, last_wait) = (
            self._rebound(kept.wait),
            self._rebound(kept.last_wait),
        )
        if not (found and found_last):
            return None
        summary = replace(kept, wait=wait, last_wait=last_wait)
        self._done[id(function.node)] = summary
        self._functions[id(summary)] = function
        self.taken_over += 1
        return summary

    def _rebound(self, site: WaitSite | None) -> tuple[bool, WaitSite | None]:
        """A kept site pointing at this lint's model: at the same node, or at the one an edited
        function's same wait now is (``_moved``); (False, None) if neither."""
        if site is None or not isinstance(site.at, LineOf):
            return True, site
        anchor = self._moved.get(id(site.at.anchor), site.at.anchor)
        if self.model.parent(anchor) is None:
            return False, None  # not in this tree
        return True, replace(site, at=LineOf(self.model, anchor))

    def _same_wait(self, new: WaitSite | None, old: WaitSite | None) -> bool:
        """The same site in an edited function's summary as before (``WaitSite`` equality leaves
        out where): a site of this module maps the old node to the new one (``_moved``), which
        the kept summaries that name it are then moved to."""
        if new is None or old is None:
            return new is old
        if not (isinstance(new.at, LineOf) and isinstance(old.at, LineOf)):
            return new.at == old.at
        moved = self._moved.setdefault(id(old.at.anchor), new.at.anchor)
        return moved is new.at.anchor

    def _reads_same(self, edited: frozenset[int]) -> bool:
        """Whether each edited function (by its statement's id) gives what it gave: the same
        summary, waiting at the same nodes, and calls of it the same types."""
        for statement_id in sorted(edited):
            verdict = self._checked.get(statement_id)
            if verdict is None:
                verdict = self._checked[statement_id] = self._same_as_before(statement_id)
            if not verdict:
                return False
        return True

    def _same_as_before(self, statement_id: int) -> bool:
        """Whether the functions of an edited ``def`` or ``class`` (those of the statement it
        replaced, in order) summarise, wait and return as before, and have a body as before."""
        kept = self._kept
        assert kept is not None
        old_id = self._replaced[statement_id]
        old_functions = kept.functions.get(old_id, [])
        new_functions = self._functions_in.get(statement_id, [])
        if len(old_functions) != len(new_functions):
            return False
        for old_key, function in zip(old_functions, new_functions, strict=True):
            old = kept.summaries.get(old_key)
            if old is None:
                return False
            old_node, before = old
            new = self.of_function(function)
            if (
                new != before
                or not self._same_wait(new.wait, before.wait)
                or not self._same_wait(new.last_wait, before.last_wait)
                or is_abstract(function.node) != is_abstract(old_node)  # type: ignore[arg-type]
            ):
                return False
            returned = self._return_shape(function, statement_id)
            if returned is None or returned != kept.returns.get(old_key):
                return False
        return True

    def _return_shape(self, function: FunctionInfo, statement_id: int) -> frozenset[Any] | None:
        """The types a call of ``function`` gives, the calls they were made at told apart by
        their place in its statement when there (so that an edited copy compares equal), else by
        identity (the same node in both trees); None after a cut."""
        model = self.model
        types = model.return_types(function)
        if types is None:
            return None
        first: list[int] = []

        def place(origin: cst.CSTNode | None) -> Any:
            if origin is None:
                return None
            site = model.call_site_of.get(id(origin))
            node: cst.CSTNode | None = origin
            while node is not None and id(node) != statement_id:
                node = model.parent(node)
            if node is None or site is None:
                return ("at", id(origin))
            if not first:
                statement = node
                first.append(
                    next(
                        model.call_site_of[id(n)].order
                        for n in model.walk(statement)
                        if id(n) in model.call_site_of
                    )
                )
            return ("in", site.order - first[0])

        def shape(t: TType) -> Any:
            return (
                t.kind,
                t.client,
                t.method,
                t.name,
                place(t.origin),
                None if t.inner is None else shape(t.inner),
                tuple(frozenset(map(shape, item)) for item in t.items),
            )

        return frozenset(map(shape, types))

    def _top_statements(self) -> Iterator[tuple[int, FunctionInfo]]:
        """Each function of the module with the id of the top-level statement it is in."""
        module = self.model.module
        parent = self.model.parent
        for function in self.model.functions:
            node: cst.CSTNode = function.node
            above = parent(node)
            while above is not None and above is not module:
                node, above = above, parent(above)
            yield id(node), function

    def _keepable(
        self, statements: dict[int, tuple[cst.CSTNode, StatementFacts]], cuts: int
    ) -> KeptModel | None:
        """What this lint keeps for the next: nothing where a cut or a new question to the
        project may have made its summaries depend on the order things were asked in."""
        from tinker_lint.model.reuse import KeptModel

        model = self.model
        if self.cuts or model.cut_count() != cuts or not model.project_unchanged():
            return None
        kept = KeptModel(
            statements,
            [id(s) for s in model.module.body],
            self._settings(),
            model.consulted_before,
            # The questions of the summaries taken over too: they were asked in a lint before.
            {**self._kept.asked, **model.project_asked()}
            if self._kept is not None
            else model.project_asked(),
        )
        for function in model.functions:
            summary = self._done[id(function.node)]
            summary = replace(
                summary,
                wait=summary.wait.bound(None) if summary.wait else None,
                last_wait=summary.last_wait.bound(None) if summary.last_wait else None,
            )
            kept.summaries[id(function.node)] = (function.node, summary)
        for statement_id, function in self._top_statements():
            kept.functions.setdefault(statement_id, []).append(id(function.node))
            key = id(function.node)
            if statement_id in self._same and self._kept is not None and key in self._kept.returns:
                # Nothing it reads changed: what a call of it gives neither.
                kept.returns[key] = self._kept.returns[key]
            else:
                kept.returns[key] = self._return_shape(function, statement_id)
        return kept

    def of_function(self, function: FunctionInfo) -> Summary:
        if not self.settled:
            self.settle()
        key = id(function.node)
        done = self._done.get(key)
        if done is not None:
            return done
        pending = self._pending.pop(key, None)
        if pending is not None and self._reads_same(pending[1]):
            installed = self._install(function, pending[0])
            if installed is not None:
                return installed
        name = f"{function.class_name}.{function.name}" if function.class_name else function.name
        if key in self._in_progress:
            self.cuts += 1
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
        from tinker_lint.model.analyses.flow import Submit, Wait, linear_steps

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
        from tinker_lint.model.analyses.flow import may_block

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
        from tinker_lint.model.analyses.flow import linear_steps

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
        return WaitSite(request, self.path, LineOf(self.model, wait.anchor))

    def _in_own_loop(self, node: cst.CSTNode, function: FunctionInfo) -> bool:
        loops = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
        current = self.model.parent(node)
        while current is not None and current is not function.node:
            if isinstance(current, loops):
                return True
            current = self.model.parent(current)
        return False

    def _returned(self, function: FunctionInfo) -> tuple[tuple[MethodRef, ...], frozenset[Client]]:
        from tinker_lint.model.facts.types import Kind

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
    from tinker_lint.model.facts.types import Kind

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
