"""Pipelining questions: after this wait, what is submitted next, and does it need the result?

Two views of the same facts:
- ``waits_and_next_submits`` walks a function body path by path (branches kept apart) and pairs each
  wait with the submits that can come next on some path (TNK101).
- ``loop_waits`` flattens one loop body and asks, for each wait, whether the request it waits for was
  made in this iteration, whether anything is submitted after it in the iteration, and whether the
  next iteration needs the result (TNK102, TNK103).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from tinker_lint.model.analyses.dataflow import target_names
from tinker_lint.model.analyses.flow import (
    NESTED_CODE,
    Decision,
    Step,
    Submit,
    Wait,
    awaits_in,
    controlled_steps,
    decision_of,
    events_in,
    handler_decides,
    kept_by_receiver,
    linear_steps,
    names_read,
    reads_when_run,
    rebound_mutations,
    rebound_names,
    submit_reads,
    target_keys,
    without_names,
    writes_in,
)
from tinker_lint.model.analyses.view import ModelView
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.scopes import BindingKind, LoopInfo, Scope
from tinker_lint.model.facts.sdk import Client, Returns, Role
from tinker_lint.model.facts.types import Kind


# ==========================================================================================
# Wait, then the next submit (path by path)
# ==========================================================================================
@dataclass
class WaitThenSubmit:
    wait: Wait
    submit: Submit
    dependent: bool  # the submit uses the result (data or control dependence)


@dataclass
class _Pending:
    wait: Wait
    tainted: set[str] = field(default_factory=set)
    # The compound statements (by id) whose blocks this path is in because a test read the result
    # and decided no request (``Decision``), and the loops whose rest of body such a test's
    # ``break``/``continue`` may skip: what is stored there depends on the result.
    controlled: frozenset[int] = frozenset()

    def copy(self) -> _Pending:
        return _Pending(self.wait, set(self.tainted), self.controlled)

    def released(self, done: frozenset[int]) -> _Pending:
        """The same, out of the regions of ``done``."""
        if not self.controlled & done:
            return self
        return _Pending(self.wait, self.tainted, self.controlled - done)


# Small statements after which this path of the pass goes on elsewhere, or not at all.
_ENDS_PASS = frozenset({cst.Return, cst.Raise, cst.Break, cst.Continue})


def _merge(*states: list[_Pending]) -> list[_Pending]:
    merged: dict[int, _Pending] = {}
    for state in states:
        for pending in state:
            key = id(pending.wait.node)
            if key in merged:
                merged[key].tainted |= pending.tainted
                merged[key].controlled |= pending.controlled
            else:
                merged[key] = pending.copy()
    return list(merged.values())


class _PathWalker:
    def __init__(self, model: ModelView, scope: Scope, guarded_waits: set[int]) -> None:
        self.model = model
        self.scope = scope
        self.pairs: list[WaitThenSubmit] = []
        self.guarded_waits = guarded_waits
        self._guard_depth = 0
        # One entry per loop being walked, innermost last: the states at its ``break`` and
        # ``continue`` statements, and the statements of its body whose test branched on a wait
        # (by the wait's id).
        self._jumps: list[list[list[_Pending]]] = []
        self._branched: list[dict[int, list[cst.CSTNode]]] = []

    def block(self, body: Sequence[cst.CSTNode], state: list[_Pending]) -> list[_Pending]:
        guarded_statements = self.model.index.guarded_statements
        for stmt in body:
            guarded = id(stmt) in guarded_statements
            self._guard_depth += guarded
            state = self.statement(stmt, state)
            self._guard_depth -= guarded
        return state

    def suite(self, suite: cst.BaseSuite | None, state: list[_Pending]) -> list[_Pending]:
        if suite is None:
            return state
        if type(suite) is cst.IndentedBlock:
            return self.block(suite.body, state)
        if type(suite) is cst.SimpleStatementSuite:
            return self.simple(suite.body, state)
        return state

    def simple(self, smalls: Sequence[cst.CSTNode], state: list[_Pending]) -> list[_Pending]:
        for small in smalls:
            state = self.expression(small, state, None)
            kind = type(small)  # exact types: ``isinstance`` on libcst's classes is slow
            if (kind is cst.Break or kind is cst.Continue) and self._jumps:
                self._jumps[-1].append(state)  # what it built leaves the loop (``_loop_body``)
            if kind in _ENDS_PASS:
                return []  # this path of the pass ends here
        return state

    def expression(
        self, node: cst.CSTNode, state: list[_Pending], writes: set[str] | None
    ) -> list[_Pending]:
        """``writes``: what ``node`` stores the values it makes in (None: ``names_written``,
        asked only when something is tainted with it)."""
        events = events_in(self.model, node, self.scope)
        if not state and not events:
            return state  # nothing pending, nothing made: this step changes nothing
        small = writes is None  # a small statement: an assignment may rebind what held the result
        fresh: list[_Pending] = []
        for event in events:
            if type(event) is Submit:
                submit = event
                waiting_now = [*state, *fresh]
                if waiting_now:  # what it reads is asked only when a wait is pending
                    reads = submit_reads(self.model, submit, self.scope)
                    for waiting in waiting_now:
                        dependent = (
                            bool(waiting.controlled)
                            or bool(reads & waiting.tainted)
                            or self.model.contains(submit.node, waiting.wait.node)
                        )
                        self.pairs.append(WaitThenSubmit(waiting.wait, submit, dependent))
                state, fresh = [], []
            elif not self._in_submitting_comprehension(cast(Wait, event), node):
                if self._guard_depth:
                    self.guarded_waits.add(id(event.node))
                fresh.append(_Pending(cast(Wait, event), kept_by_receiver(cast(Wait, event))))
        if not state and not fresh:
            return state
        if writes is None:
            writes = writes_in(self.model, node, self.scope)[2]
        # ``data = build()``, a closure reading the result: ``data`` holds it too; in a block a
        # test on the result controls, all it stores does. ``x = other()`` rebinds ``x``: what it
        # held of the result is gone. A pending wait's taint changes in a new record: the one
        # given may be on another path too.
        if state:
            reads = reads_when_run(self.model, node, self.scope)
            state = [self._after(p, node, reads, writes, small) for p in state]
        for pending in fresh:
            pending.tainted |= writes
        return [*state, *fresh]

    def _after(
        self, pending: _Pending, node: cst.CSTNode, reads: set[str], writes: set[str], small: bool
    ) -> _Pending:
        """``pending`` after ``node`` ran (``reads`` includes an assignment's targets)."""
        if pending.controlled:
            return _Pending(pending.wait, pending.tainted | writes, pending.controlled)
        if not reads & pending.tainted:
            return pending
        if small:
            killed = rebound_names(self.model, node, self.scope, pending.tainted)
            if killed:
                return _Pending(pending.wait, without_names(pending.tainted, killed))
        return _Pending(pending.wait, pending.tainted | writes)

    def _in_submitting_comprehension(self, wait: Wait, statement: cst.CSTNode) -> bool:
        """``[sc.sample(p).result() for p in ps]``: submit and wait per element is TNK103's.
        The comprehensions around the wait, up to ``statement``, are its ancestors."""
        loop_of_node, parent_of = self.model.loop_of_node, self.model.parent_of
        found = False
        node: cst.CSTNode | None = wait.node
        while node is not None:
            loop = loop_of_node.get(id(node))
            if (
                not found
                and loop is not None
                and loop.is_comprehension
                and any(self.model.submit_of(s.node, s.scope) for s in loop.calls)
            ):
                found = True
            if node is statement:
                return found
            node = parent_of.get(id(node))
        return False  # the wait is not in ``statement`` (it always is)

    def _loop_body(self, loop: cst.For | cst.While, state: list[_Pending]) -> list[_Pending]:
        """A wait made inside a loop body belongs to that body's pass; what follows the loop is
        TNK102's wrap-around question, not this one."""
        body = loop.body
        before = {id(p.wait.node) for p in state}
        # The regions a test inside the loop opened end with it (those around it go on).
        entry = {id(p.wait.node): p.controlled - {id(loop)} for p in state}
        self._jumps.append([])
        self._branched.append({})
        out = self.suite(body, [p.copy() for p in state])
        jumps, branched = self._jumps.pop(), self._branched.pop()
        # The loop is left from the end of its body and from every ``break``/``continue``: what
        # was stored on any of those paths (``kept.append(x); continue``) is there after it.
        exits = [p for path in (out, *jumps) for p in path if id(p.wait.node) in before]
        after = _merge(state, exits)
        for pending in after:
            pending.controlled = entry[id(pending.wait.node)]
        _taint_branched(self.model, self.scope, loop, after, branched)
        return after

    def _test(
        self, test: cst.BaseExpression, state: list[_Pending], control: cst.CSTNode
    ) -> list[_Pending]:
        state = self.expression(test, state, set())
        reads = names_read(self.model, test)
        # A branch on the result: what follows is control-dependent on the wait.
        branched = [p for p in state if reads & p.tainted]
        if not branched:
            return state
        if self._branched:
            for pending in branched:
                self._branched[-1].setdefault(id(pending.wait.node), []).append(control)
        decision = decision_of(self.model, control, self.scope)
        if decision.decides_submit(None):
            # The next request is decided by the result: the wait is needed (dependent).
            return [p for p in state if not reads & p.tainted]
        # A test that decides no request (``if "loss" in out.metrics: print(...)``, a
        # ``continue`` past an ``append``, a validation ``raise``): the wait is still pending,
        # and what the blocks (and the rest of the loop they can skip) store depends on it.
        opened = {id(control)}
        if decision.loop is not None:
            opened.add(id(decision.loop))
        return [
            _Pending(p.wait, p.tainted, p.controlled | opened) if reads & p.tainted else p
            for p in state
        ]

    def statement(self, stmt: cst.CSTNode, state: list[_Pending]) -> list[_Pending]:
        # Exact types: ``isinstance`` on libcst's classes is slow, and parsed trees hold only
        # its concrete classes.
        if type(stmt) is cst.SimpleStatementLine:
            return self.simple(stmt.body, state)
        if type(stmt) is cst.If:
            state = self._test(stmt.test, state, stmt)
            guarded = id(stmt.body) in self.model.guarded_blocks
            self._guard_depth += guarded
            body = self.suite(stmt.body, [p.copy() for p in state])
            self._guard_depth -= guarded
            if type(stmt.orelse) is cst.If:
                orelse = self.statement(stmt.orelse, [p.copy() for p in state])
            elif stmt.orelse is not None:
                orelse = self.suite(stmt.orelse.body, [p.copy() for p in state])
            else:
                orelse = state
            done = frozenset({id(stmt)})
            return [p.released(done) for p in _merge(body, orelse)]
        if type(stmt) is cst.While:
            state = self._test(stmt.test, state, stmt)
            after = self._loop_body(stmt, state)
            return self.suite(stmt.orelse.body, after) if stmt.orelse else after
        if type(stmt) is cst.For:
            state = self.expression(stmt.iter, state, target_keys(stmt.target))
            after = self._loop_body(stmt, state)
            return self.suite(stmt.orelse.body, after) if stmt.orelse else after
        if type(stmt) is cst.With:
            for item in stmt.items:
                writes = target_keys(item.asname.name) if item.asname else set()
                state = self.expression(item.item, state, writes)
            return self.suite(stmt.body, state)
        if type(stmt) is cst.Try or type(stmt) is cst.TryStar:
            before = {id(p.wait.node) for p in state}
            body = self.suite(stmt.body, [p.copy() for p in state])
            entry = _merge(state, _handler_entry(body, before))
            if any(handler_decides(self.model, stmt, h, self.scope) for h in stmt.handlers):
                # Whether the next request is made depends on the body's waits succeeding
                # (``except: continue`` past the optimizer step): they are needed by it.
                body = entry
            handlers = [self.suite(h.body, [p.copy() for p in entry]) for h in stmt.handlers]
            orelse = self.suite(stmt.orelse.body, body) if stmt.orelse else body
            out = _merge(orelse, *handlers)
            return self.suite(stmt.finalbody.body, out) if stmt.finalbody else out
        if type(stmt) is cst.Match:
            state = self._test(stmt.subject, state, stmt)
            cases = [self.suite(c.body, [p.copy() for p in state]) for c in stmt.cases]
            done = frozenset({id(stmt)})
            return [p.released(done) for p in _merge(state, *cases)]
        return state  # FunctionDef, ClassDef: their bodies run later


def _handler_entry(body: list[_Pending], before: set[int]) -> list[_Pending]:
    """What reaches an ``except`` handler from its ``try`` body: not the waits made in the body.
    The handler runs because something there failed, the wait itself maybe: its request (a
    retry, a fallback) depends on that failure, so it is not "the next submit" of such a wait."""
    return [p for p in body if id(p.wait.node) in before]


def _taint_branched(
    model: ModelView,
    scope: Scope,
    loop: cst.For | cst.While,
    after: list[_Pending],
    branched: dict[int, list[cst.CSTNode]],
) -> None:
    """A test in the loop body branched on a wait's result (``if item["logprobs"] is None:
    continue`` over the result's outputs): for what comes after the loop, what the statement it
    controls stores depends on the result (control dependence); when that statement can skip
    the rest of the body or end the loop (a ``break``/``continue`` of this loop, a ``return``),
    all the body stores does. A ``raise`` that leaves the function skips nothing the loop goes
    on with."""
    body = loop.body
    for pending in after:
        for control in branched.get(id(pending.wait.node), ()):
            decision = decision_of(model, control, scope)
            jumps = decision.loop is loop and (decision.breaks or decision.continues)
            region = body if jumps or decision.leaves else control
            statements = _body_statements(region) if region is body else [control]
            for step in linear_steps(model, statements, scope):
                pending.tainted |= step.writes | step.binds


def waits_and_next_submits(
    model: ModelView, body: Sequence[cst.CSTNode], scope: Scope
) -> tuple[list[WaitThenSubmit], set[int]]:
    """Each wait in ``body`` paired with every submit that can come next after it on some path,
    and the ids of the waits made under a cadence guard."""
    guarded: set[int] = set()
    walker = _PathWalker(model, scope, guarded)
    walker.block(body, [])
    return walker.pairs, guarded


# ==========================================================================================
# Waits in a loop body
# ==========================================================================================
@dataclass
class LoopWait:
    wait: Wait
    fresh: bool  # waits for a request made earlier in this same iteration
    submitted_after: bool  # something is submitted after the wait in the same iteration
    needed_next: bool  # the next iteration's first submit (or the loop test) uses the result
    branches_on_result: bool  # a test later in the iteration decides a request on the result
    guarded: bool
    roles: set[Role]  # roles of the requests waited for
    # Whether the loop goes on is decided by a result waited for in this iteration (early
    # stopping, ``while not done``): the next step cannot be in flight during this iteration's
    # waits. The same for every wait of the loop.
    loop_gated: bool = False
    # Waited in a loop inside this one that makes no request: it collects what the iteration
    # submitted before it (a wave per batch, the fan-out already done, as a gather per batch).
    collected: bool = False
    # Needed by the next pass of a loop inside this one (the turns of a multi-turn episode): this
    # loop's passes are whole episodes, independent or not at another level (issue 32, item 5).
    needed_by_inner: bool = False
    # The waits of the same iteration (by ``id`` of their ``Wait.node``) before this one whose
    # results the request it waits for reads (the teacher scoring the student's tokens): it
    # cannot be submitted before they are waited for.
    needs: frozenset[int] = frozenset()


def _roles(wait: Wait) -> set[Role]:
    return {t.method.role for t in wait.futures if t.method is not None}


def loop_waits(model: ModelView, loop: LoopInfo) -> list[LoopWait]:
    """Memoised per loop: TNK102, TNK103 and ``accumulation_waits`` ask of the same loops."""
    found = model.loop_waits_cache.get(loop)
    if found is None:
        found = model.loop_waits_cache[loop] = _loop_waits(model, loop)
    return found


def _loop_waits(model: ModelView, loop: LoopInfo) -> list[LoopWait]:
    if loop.is_comprehension:
        return _comprehension_waits(model, loop)
    node = loop.node
    assert isinstance(node, cst.For | cst.While)
    steps = list(linear_steps(model, _body_statements(node.body), loop.scope))
    # Steps that submit through a function of this module (``fwd, opt = submit_step(batch)``).
    # Every call a step holds is one of the loop's calls: those few are placed in the steps,
    # rather than every step walked for them (a nested loop's step holds its whole body).
    holders: set[int] = set()
    for site in loop.calls:
        if _submits_through_call(model, site.node, loop.scope):
            holders |= _holders(model, site.node)
    via_function = [id(step.node) in holders for step in steps]
    fresh_keys: set[str] = set()
    bound: set[str] = set()  # names rebound so far in this iteration
    located: list[tuple[int, int, Wait, bool]] = []  # (step index, event index, wait, fresh)
    for index, step in enumerate(steps):
        step_submits = via_function[index]
        for event_index, event in enumerate(step.events):
            if isinstance(event, Submit):
                step_submits = True
            else:
                is_fresh = _waits_on_fresh(model, event, fresh_keys)
                located.append((index, event_index, event, is_fresh))
        # ``pending.append(fut)`` makes ``pending`` hold this iteration's futures only if it was
        # rebound earlier in the iteration; a list kept across iterations also holds older ones.
        made = step.binds | rebound_mutations(step.writes, bound)
        if step_submits or step.reads & fresh_keys:
            fresh_keys |= made
        elif step.kind == "stmt" and isinstance(step.node, cst.Assign):
            fresh_keys -= step.binds
        bound |= step.binds

    result: list[LoopWait] = []
    # The requests of the iteration that need each wait's result (by ``id`` of their calls).
    needing: list[set[int]] = []
    for index, event_index, wait, is_fresh in located:
        step = steps[index]
        attempt = _try_around(model, node, wait.node)
        # Requests made after the wait in most iterations (not only under a cadence guard); not
        # those of an ``except`` branch of the wait's ``try``, made only when something failed.
        submitted_after = any(isinstance(e, Submit) for e in step.events[event_index + 1 :]) or any(
            via_function[later] or any(isinstance(e, Submit) for e in steps[later].events)
            for later in range(index + 1, len(steps))
            if (not steps[later].guarded or step.guarded)
            and not _in_handler(model, attempt, steps[later].node)
        )
        tainted = set(step.writes) | kept_by_receiver(wait)
        branches = ends_loop = False
        controlled: set[int] = set()  # later steps a test on the result controls
        dependents = {
            id(e.node)
            for e in step.events[event_index + 1 :]
            if isinstance(e, Submit) and model.contains(e.node, wait.node)
        }
        for later_index in range(index + 1, len(steps)):
            later = steps[later_index]
            if attempt is not None and model.contains(attempt.body, later.node):
                # Runs only if the wait did not raise: ``done = True`` marks its success.
                tainted |= later.writes | later.binds
            for event in later.events:
                if isinstance(event, Submit) and (
                    later_index in controlled or submit_reads(model, event, loop.scope) & tainted
                ):
                    dependents.add(id(event.node))
            tainted = _through(model, steps, later_index, tainted, controlled, node, loop.scope)
            if later.kind == "test" and later.reads & tainted:
                decision = _decision(model, later, loop.scope)
                if decision.decides_submit(node):
                    branches = True
                    ends_loop = ends_loop or decision.ends(node)
        needed, ends_next = _needed_next_iteration(steps, tainted, node, model, loop.scope)
        retried = is_fresh and _success_leaves_loop(model, node, wait.node)
        collected, needed_by_inner = _inner_loops(model, wait, loop)
        requests = {id(t.origin) for t in wait.futures if t.origin is not None}
        needs = frozenset(
            id(earlier.wait.node)
            for earlier, needed_by in zip(result, needing, strict=True)
            if requests & needed_by
        )
        needing.append(dependents)
        result.append(
            LoopWait(
                wait,
                is_fresh,
                submitted_after,
                needed,
                branches,
                step.guarded,
                _roles(wait),
                loop_gated=is_fresh and (ends_loop or ends_next or retried),
                collected=collected,
                needed_by_inner=needed_by_inner,
                needs=needs,
            )
        )
    if any(item.loop_gated for item in result):
        for item in result:
            item.loop_gated = True
    return result


def _inner_loops(model: ModelView, wait: Wait, loop: LoopInfo) -> tuple[bool, bool]:
    """Of the loops between ``wait`` and ``loop`` (inside ``loop``, around the wait): whether
    one makes no request (the wait collects requests made before it: ``LoopWait.collected``),
    and whether the next pass of one needs the result (``LoopWait.needed_by_inner``)."""
    collected = needed = False
    node = model.parent(wait.node)
    while node is not None and node is not loop.node:
        if type(node) in _NESTED_TYPES:
            break
        inner = model.loop_of_node.get(id(node))
        if inner is not None:
            if not may_make_requests(model, inner):
                collected = True
            elif any(
                item.wait.node is wait.node and item.needed_next
                for item in loop_waits(model, inner)
            ):
                needed = True
        node = model.parent(node)
    return collected, needed


def may_make_requests(model: ModelView, loop: LoopInfo) -> bool:
    """Whether ``loop`` makes any Tinker request, directly or through a function of this module.
    Without one, no wait in it waits for a request of the same iteration (``LoopWait.fresh``), so
    the rules that need such a wait can skip the loop without flattening its body."""
    return any(
        model.sdk_call(site.node, site.scope) is not None
        or model.roles_submitted_by_call(site.node, site.scope)
        for site in loop.calls
    )


def _decision(model: ModelView, test: Step, scope: Scope) -> Decision:
    assert test.control is not None
    return decision_of(model, test.control, scope)


def _through(
    model: ModelView,
    steps: list[Step],
    index: int,
    tainted: set[str],
    controlled: set[int],
    loop: cst.For | cst.While,
    scope: Scope,
) -> set[str]:
    """What holds the result (``tainted``) after ``steps[index]`` in a pass of ``loop``'s body:
    what it writes from the result, or, under a test on the result (``controlled``, grown here
    when the step is such a test that decides no request), all it writes; less what an
    assignment that runs on every pass rebinds from other data (``prompt = render(ex)``)."""
    step = steps[index]
    if step.kind == "test":
        if step.reads & tainted:
            decision = _decision(model, step, scope)
            if not decision.decides_submit(loop):
                later, earlier = controlled_steps(model, steps, index, decision)
                controlled |= later
                for before in earlier:
                    tainted = tainted | steps[before].writes
        return tainted
    if index in controlled:
        return tainted | step.writes
    if not step.reads & tainted:
        return tainted
    if step.kind == "stmt" and _every_pass(model, step.node, loop):
        killed = rebound_names(model, step.node, scope, tainted)
        if killed:
            return without_names(tainted, killed)
    return tainted | step.writes


# What a statement of a loop body can sit in and still run on every pass of the body.
_EVERY_PASS = frozenset({cst.SimpleStatementLine, cst.IndentedBlock, cst.With})


def _every_pass(model: ModelView, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
    """Whether the small statement ``node`` runs on every pass of ``loop``'s body that reaches
    it: no ``if``, loop or ``try`` between them."""
    parent = model.parent(node)
    while parent is not None and parent is not loop.body:
        if type(parent) not in _EVERY_PASS:
            return False
        parent = model.parent(parent)
    return parent is not None


def _holders(model: ModelView, inner: cst.CSTNode) -> set[int]:
    """The nodes (by id) ``inner`` is or is inside, up to the nested code around it (a function,
    class or lambda, itself included): those whose ``model.walk(node, NESTED_CODE)`` reaches it."""
    found: set[int] = set()
    node: cst.CSTNode | None = inner
    while node is not None:
        found.add(id(node))
        if type(node) in _NESTED_TYPES:
            break
        node = model.parent(node)
    return found


_NESTED_TYPES = frozenset(NESTED_CODE)


def _submits_through_call(model: ModelView, call: cst.Call, scope: Scope) -> bool:
    """A call that submits, not itself an SDK submit: of a function that does."""
    return not model.submit_of(call, scope) and bool(model.roles_submitted_by_call(call, scope))


def _body_statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    return (
        [cst.SimpleStatementLine(body=body.body)]
        if isinstance(body, cst.SimpleStatementSuite)
        else []
    )


def _waits_on_fresh(model: ModelView, wait: Wait, fresh_keys: set[str]) -> bool:
    for expr in wait.waited:
        # ``tc.forward_backward(b).result()``, ``await sc.sample_async(p)``: made right here.
        if any(t.origin is not None and model.contains(expr, t.origin) for t in wait.futures):
            return True
        if names_read(model, expr) & fresh_keys:
            return True
    return False


def _needed_next_iteration(
    steps: list[Step],
    tainted: set[str],
    loop_node: cst.For | cst.While,
    model: ModelView,
    scope: Scope,
) -> tuple[bool, bool]:
    """Whether the next iteration needs the result before its first submit (it reads it, or a
    test branches on it), and whether that use can end the loop (the ``while`` test, or a test
    whose block breaks out)."""
    if isinstance(loop_node, cst.While):
        if names_read(model, loop_node.test) & tainted:
            return True, True
    elif names_read(model, loop_node.iter) & tainted:
        tainted = tainted | target_keys(loop_node.target)  # ``for item in queue`` it fills
    else:  # the next pass's target comes from the iterable, not from this pass
        tainted = without_names(tainted, target_names(loop_node.target))
    controlled: set[int] = set()
    for index, step in enumerate(steps):
        for event in step.events:
            if isinstance(event, Submit):
                return bool(submit_reads(model, event, scope) & tainted), False
        if step.kind == "test" and step.reads & tainted:
            decision = _decision(model, step, scope)
            if decision.decides_submit(loop_node):
                return True, decision.ends(loop_node)
        tainted = _through(model, steps, index, tainted, controlled, loop_node, scope)
    return False, False


# A loop or nested code between a wait and the loop around it.
_INNER_CODE = frozenset({cst.For, cst.While, cst.FunctionDef, cst.Lambda})


def _success_leaves_loop(model: ModelView, loop: cst.For | cst.While, wait: cst.CSTNode) -> bool:
    """Whether the iteration leaves ``loop`` whenever ``wait`` succeeds: a ``break``/``return``
    follows it unconditionally (``try: r = sc.sample(...).result(); break``, or after the ``try``
    whose handler retries). The next iteration then runs only when this attempt failed: a retry
    loop, whose next request depends on this one's outcome."""
    inner = model.parent(wait)
    while inner is not None and inner is not loop:
        if type(inner) in _INNER_CODE:
            return False  # a break in there leaves that loop; a nested function runs later
        inner = model.parent(inner)
    child: cst.CSTNode = wait
    parent = model.parent(child)
    while parent is not None and child is not loop:
        siblings: Sequence[cst.CSTNode] = ()
        if isinstance(
            parent, cst.IndentedBlock | cst.SimpleStatementSuite | cst.SimpleStatementLine
        ):
            siblings = parent.body
        if any(_leaves(s) for s in siblings[_index(siblings, child) :]):
            return True  # the wait's statement, or one after it, leaves
        if (  # ``try: <wait>`` then ``else: break``
            isinstance(parent, cst.Try | cst.TryStar)
            and child is parent.body
            and parent.orelse is not None
            and _any_leaves(parent.orelse.body)
        ):
            return True
        child, parent = parent, model.parent(parent)
    return False


def _try_around(
    model: ModelView, loop: cst.For | cst.While, wait: cst.CSTNode
) -> cst.Try | cst.TryStar | None:
    """The innermost ``try`` of ``loop``'s body whose body holds ``wait`` and that has an
    ``except`` handler: the statements after the wait in its body run only when the wait
    succeeded, those of its handlers only when something in it failed."""
    child: cst.CSTNode = wait
    parent = model.parent(child)
    while parent is not None and parent is not loop:
        kind = type(parent)
        if kind is cst.FunctionDef or kind is cst.Lambda:
            return None
        if kind is cst.Try or kind is cst.TryStar:
            attempt = cast(cst.Try | cst.TryStar, parent)
            if child is attempt.body and attempt.handlers:
                return attempt
        child, parent = parent, model.parent(parent)
    return None


def _in_handler(model: ModelView, attempt: cst.Try | cst.TryStar | None, node: cst.CSTNode) -> bool:
    return attempt is not None and any(model.contains(h, node) for h in attempt.handlers)


def _index(siblings: Sequence[cst.CSTNode], child: cst.CSTNode) -> int:
    for index, sibling in enumerate(siblings):
        if sibling is child:
            return index
    return len(siblings)


def _any_leaves(block: cst.BaseSuite) -> bool:
    return any(_leaves(s) for s in _body_statements(block))


_LEAVING = frozenset({cst.Break, cst.Return, cst.Raise})


def _leaves(stmt: cst.CSTNode) -> bool:
    """An unconditional ``break``/``return``/``raise`` statement (or a line made of them)."""
    if type(stmt) is cst.SimpleStatementLine:
        return any(_leaves(small) for small in stmt.body)
    return type(stmt) in _LEAVING


def _comprehension_waits(model: ModelView, loop: LoopInfo) -> list[LoopWait]:
    node = loop.node
    if isinstance(node, cst.DictComp):
        elements = [node.key, node.value]
    elif isinstance(node, cst.ListComp | cst.SetComp | cst.GeneratorExp):
        elements = [node.elt]
    else:
        return []  # a ``for``/``while`` loop: asked only of comprehensions
    found = []
    for element in elements:
        for event in events_in(model, element, loop.scope):
            if isinstance(event, Wait):
                fresh = _waits_on_fresh(model, event, set())
                found.append(LoopWait(event, fresh, False, False, False, False, _roles(event)))
    return found


def refreshes_sampling_client(model: ModelView, loop: LoopInfo) -> bool:
    """On-policy RL: the loop makes a new SamplingClient (from the freshly trained weights) on
    every iteration, directly or through a function of this module. A client made under a cadence
    guard (an evaluation every N steps) does not count."""
    for site in loop.calls:
        if site.guarded and not loop.guarded:
            continue
        for t in model.types(site.node, site.scope):
            if t.client is Client.SAMPLING and t.kind in (Kind.CLIENT, Kind.CLIENT_FUTURE):
                return True
            if (
                t.kind is Kind.COROUTINE
                and t.inner is not None
                and t.inner.client is Client.SAMPLING
            ):
                return True
    return False


# ==========================================================================================
# Coroutines awaited one by one
# ==========================================================================================
@dataclass
class CoroutineAwait:
    """``await c`` in a loop, where ``c`` is a coroutine made before the loop that samples when
    it runs: it runs only now, so the loop samples one request at a time."""

    node: cst.Await
    what: str  # what the coroutine runs: ``sample_async``, or ``rollout()`` of this module


def coroutines_awaited_one_by_one(model: ModelView, loop: LoopInfo) -> list[CoroutineAwait]:
    """The awaits in ``loop`` (a ``for`` loop or a comprehension) of coroutines collected before
    it (``coros = [sc.sample_async(p) for p in prompts]``, or calls of an ``async def`` of this
    module that samples). A coroutine, unlike an ``APIFuture`` or a task, starts its request only
    when awaited. Not listed: an await whose result a later test of the iteration decides on
    (``if good(r): break``: stopping at the first good sample is meant to be sequential), and
    loops that sleep between requests (pacing them under a rate limit on purpose)."""
    node = loop.node
    if isinstance(node, cst.While | cst.DictComp):
        return []  # a ``while`` loop does not step through a collection of coroutines
    if loop.function is not None and not loop.function.is_async:
        return []  # no ``await`` outside ``async def`` (a notebook's top level may have one)
    body = node.body if isinstance(node, cst.For) else node.elt
    candidates = []  # the awaits first: most loops have none, and need no steps
    for awaited in awaits_in(model, body):
        what = _unstarted_sampling(model, awaited.expression, loop, 0)
        if what:
            candidates.append(CoroutineAwait(awaited, what))
    if not candidates or _paced(model, body, loop.scope):
        return []
    if not isinstance(node, cst.For):
        return candidates  # a comprehension's element cannot branch on its result
    steps = [
        step
        for step in linear_steps(model, _body_statements(node.body), loop.scope)
        if step.kind != "for"  # a nested loop's header; its body's statements are steps too
    ]
    found = []
    for candidate in candidates:
        index = next(
            (i for i, step in enumerate(steps) if model.contains(step.node, candidate.node)),
            None,
        )
        if index is not None and not _decided_on(model, steps, index, node, loop.scope):
            found.append(candidate)
    return found


# A loop that sleeps between requests paces them on purpose (to stay under a rate limit).
_SLEEPS = frozenset({"asyncio.sleep", "time.sleep", "anyio.sleep", "trio.sleep"})


def _paced(model: ModelView, body: cst.CSTNode, scope: Scope) -> bool:
    return any(
        isinstance(node, cst.Call) and model.qualify(node.func, scope) in _SLEEPS
        for node in model.walk(body, NESTED_CODE)
    )


def _decided_on(
    model: ModelView, steps: list[Step], index: int, loop: cst.For, scope: Scope
) -> bool:
    """Whether a later test of the iteration reads what step ``index`` produced and decides a
    request with it (``Decision``: ``if good(r): break``)."""
    tainted = set(steps[index].writes)
    controlled: set[int] = set()
    for later_index in range(index + 1, len(steps)):
        later = steps[later_index]
        if (
            later.kind == "test"
            and later.reads & tainted
            and _decision(model, later, scope).decides_submit(loop)
        ):
            return True
        tainted = _through(model, steps, later_index, tainted, controlled, loop, scope)
    return False


# How far a coroutine is followed back through names (``c`` <- ``coros`` <- a comprehension).
_COROUTINE_TRACE_DEPTH = 4


def _unstarted_sampling(
    model: ModelView, expr: cst.BaseExpression, loop: LoopInfo, depth: int
) -> str | None:
    """What ``expr`` runs when awaited, if every value it can hold is a coroutine that samples and
    was made outside ``loop`` (so not yet started); None when any source is something else (a
    future, a task, a value we cannot follow); "" for an empty container literal (``coros = []``,
    filled by ``append`` elsewhere)."""
    if depth > _COROUTINE_TRACE_DEPTH:
        return None
    scope = loop.scope
    sources: list[cst.BaseExpression] = []
    if isinstance(expr, cst.Name):
        bindings = scope.lookup(expr.value)
        if not bindings:
            return None
        for binding in bindings:
            if binding.kind not in (
                BindingKind.VALUE,
                BindingKind.ITER,
                BindingKind.ELEMENT,
                BindingKind.ELEMENTS,
                BindingKind.ITER_UNPACK,
            ):
                return None
            if binding.scope is not scope or not isinstance(binding.expr, cst.BaseExpression):
                return None
            if binding.kind is BindingKind.ITER_UNPACK:
                # ``for i, c in enumerate(coros)``, ``for p, c in zip(prompts, coros)``
                position = _builtin_position(binding.expr, binding.index, scope)
                if position is None:
                    return None
                sources.append(position)
            else:
                sources.append(binding.expr)
    elif isinstance(expr, cst.Subscript):
        sources.append(expr.value)
    elif isinstance(expr, cst.ListComp | cst.GeneratorExp | cst.SetComp):
        sources.append(expr.elt)
    elif isinstance(expr, cst.List | cst.Tuple):
        if not expr.elements:
            return ""  # ``coros = []``, filled later: holds nothing of its own
        sources.extend(element.value for element in expr.elements)
    elif isinstance(expr, cst.Call):
        if model.contains(loop.body, expr):
            return None  # made in this iteration: the plain submit-and-wait that TNK103 sees
        return _sampling_coroutine_call(model, expr, scope)
    else:
        return None
    described = [_unstarted_sampling(model, source, loop, depth + 1) for source in sources]
    if any(what is None for what in described):
        return None
    return min((what for what in described if what), default="")


def _builtin_position(
    iterable: cst.BaseExpression, index: int, scope: Scope
) -> cst.BaseExpression | None:
    """What position ``index`` of each element of ``enumerate(xs)`` / ``zip(a, b)`` comes from
    (``xs``, the index's argument); None for anything else, or for the count of ``enumerate``."""
    if not isinstance(iterable, cst.Call) or not isinstance(iterable.func, cst.Name):
        return None
    name = iterable.func.value
    if scope.lookup(name) or any(arg.star or arg.keyword for arg in iterable.args):
        return None
    if name == "enumerate" and index == 1 and iterable.args:
        return iterable.args[0].value
    if name == "zip" and index < len(iterable.args):
        return iterable.args[index].value
    return None


def _sampling_coroutine_call(model: ModelView, call: cst.Call, scope: Scope) -> str | None:
    """``sc.sample_async(...)`` / ``sc.compute_logprobs_async(...)`` (their coroutine submits and
    waits in one), or a call of an ``async def`` of this module that samples."""
    sdk_call = model.submit_of(call, scope)
    if sdk_call is not None:
        method = sdk_call.method
        if method.role is Role.SAMPLE and method.returns is Returns.VALUE_AFTER_AWAIT:
            return method.name
        return None
    target = model.resolve_function(call.func, scope)
    if (
        target is not None
        and target.is_async
        and Role.SAMPLE in model.function_submit_roles.get(target, frozenset())
    ):
        return f"{target.name}()"
    return None


# ==========================================================================================
# Gradient accumulation: a wait per micro-batch, then optim_step
# ==========================================================================================
# The requests that accumulate gradients; the loop around them submits nothing else.
_ACCUMULATING = frozenset({"forward_backward", "forward_backward_custom"})


@dataclass
class AccumulationWait:
    """In a loop that only submits ``forward_backward`` (one per micro-batch) and is followed by
    ``optim_step``, the wait for each one, when nothing in the loop decides on its result: the
    next micro-batch does not need it, and the wait only idles the server between them."""

    wait: Wait
    optim_step: Submit  # the first submit after the loop
    needed_by_step: bool  # the ``optim_step`` uses the results (e.g. a learning rate from them)


def accumulation_waits(model: ModelView, loop: LoopInfo) -> list[AccumulationWait]:
    node = loop.node
    if not isinstance(node, cst.For):
        return []
    accumulates = False
    for site in loop.calls:
        submit = model.submit_of(site.node, site.scope)
        if submit is not None:
            if submit.method.plain_name not in _ACCUMULATING:
                return []
            accumulates = True
        elif model.roles_submitted_by_call(site.node, site.scope):
            return []  # a function of the module that submits: what it does is not looked into
    if not accumulates:
        return []
    after = _first_submit_after(model, node, loop.scope)
    if after is None:
        return []
    between, statement, optim_step = after
    if optim_step.call is None or optim_step.call.method.plain_name != "optim_step":
        return []
    steps = list(linear_steps(model, _body_statements(node.body), loop.scope))
    found = []
    for item in loop_waits(model, loop):
        if (
            not item.fresh
            or item.submitted_after
            or item.needed_next
            or item.branches_on_result
            or item.guarded
            or item.loop_gated
            or not item.wait.methods
            or not {m.removesuffix("_async") for m in item.wait.methods} <= _ACCUMULATING
        ):
            continue
        # What the loop makes of the result (``losses.append(out.loss)``) must not reach the
        # statement that submits ``optim_step``, directly or through the statements in between
        # (``lr = schedule(total)``); it may be read afterwards, e.g. to log it.
        tainted = _made_from(model, steps, item.wait)
        for earlier in linear_steps(model, between, loop.scope):
            if earlier.reads & tainted:
                tainted |= earlier.writes
        # ``optim_step`` built from the losses (``lr = schedule(total)``) needs them all, but the
        # next micro-batch's ``forward_backward`` still does not: that is the submit kept waiting.
        needed_by_step = bool(names_read(model, statement) & tainted)
        found.append(AccumulationWait(item.wait, optim_step, needed_by_step))
    return found


def _made_from(model: ModelView, steps: list[Step], wait: Wait) -> set[str]:
    """The names the iteration binds or fills from ``wait``'s result."""
    tainted: set[str] = set()
    for step in steps:
        waits_here = any(event.node is wait.node for event in step.events)
        if waits_here or step.reads & tainted:
            tainted |= step.writes
    return tainted


def _first_submit_after(
    model: ModelView, loop_node: cst.For, scope: Scope
) -> tuple[list[cst.CSTNode], cst.CSTNode, Submit] | None:
    """The statements after ``loop_node`` in its block up to the first that submits a request,
    that statement, and its first submit (None when no statement after the loop submits, or one
    returns or raises first)."""
    block = model.parent(loop_node)
    if not isinstance(block, cst.IndentedBlock | cst.Module):
        return None
    statements = list(block.body)
    index = next(i for i, stmt in enumerate(statements) if stmt is loop_node)
    between: list[cst.CSTNode] = []
    for statement in statements[index + 1 :]:
        for event in events_in(model, statement, scope):
            if isinstance(event, Submit):
                return between, statement, event
        if any(isinstance(n, cst.Return | cst.Raise) for n in model.walk(statement, NESTED_CODE)):
            return None
        between.append(statement)
    return None


# ==========================================================================================
# Two clients
# ==========================================================================================
def separate_clients(
    model: ModelView, wait: Wait, submit: Submit, scope: Scope
) -> tuple[str, str] | None:
    """The receivers (as written) of the request ``wait`` waits for and of ``submit``, when they
    are plainly two different clients: a SamplingClient and a TrainingClient (a DPO reference and
    its policy), or two receivers with different names, neither assigned from another name (a
    PPO policy and its critic). None when it is one client, or we cannot tell. Requests of two
    clients are not ordered with each other at all."""
    if not isinstance(submit.node.func, cst.Attribute) or submit.call is None:
        return None  # a helper's request: which client it is on is not known here
    submitted_on = submit.node.func.value
    submit_name = dotted_name(submitted_on)
    waited_on: list[cst.BaseExpression] = []
    for t in wait.futures:
        origin = t.origin
        if not isinstance(origin, cst.Call) or not isinstance(origin.func, cst.Attribute):
            return None
        waited_on.append(origin.func.value)
    names = {dotted_name(expr) for expr in waited_on}
    if len(names) != 1 or None in names or submit_name is None:
        return None
    (wait_name,) = names
    assert wait_name is not None
    kinds = {t.method.client for t in wait.futures if t.method is not None}
    if kinds and submit.call.method.client not in kinds:
        return wait_name, submit_name  # a sampling and a training client
    if wait_name == submit_name or submit.call.method.client is not Client.TRAINING:
        return None
    if _may_alias(model, waited_on[0], scope) or _may_alias(model, submitted_on, scope):
        return None
    return wait_name, submit_name


def _may_alias(model: ModelView, receiver: cst.BaseExpression, scope: Scope) -> bool:
    """Whether ``receiver`` (a name, or ``self.x``) may have been assigned from another name or
    attribute (``critic = policy``, ``self.critic = critic``): it may then be the same client as
    another receiver, so two names do not show two clients. Unknown receivers may alias."""
    if isinstance(receiver, cst.Name):
        bindings = scope.lookup(receiver.value)
    elif isinstance(receiver, cst.Attribute):
        function = scope.function
        if (
            function is None
            or function.class_name is None
            or not isinstance(receiver.value, cst.Name)
            or receiver.value.value != function.self_name
        ):
            return True
        bindings = model.class_attrs.get(function.class_name, {}).get(receiver.attr.value, [])
    else:
        return True
    if not bindings:
        return True
    return any(
        binding.kind not in (BindingKind.VALUE, BindingKind.ANNOTATION)
        or (
            binding.kind is BindingKind.VALUE and isinstance(binding.expr, cst.Name | cst.Attribute)
        )
        for binding in bindings
    )


# ==========================================================================================
# A sampler refreshed only every N steps
# ==========================================================================================
_REFRESHES_SAMPLER = frozenset({"save_weights_and_get_sampling_client", "save_weights_for_sampler"})


def is_save(submit: Submit) -> bool:
    return Role.SAVE in submit.roles


def occasional_save(model: ModelView, submit: Submit) -> bool:
    """A save under a cadence guard (``if step % sync_every == 0:``): it runs on some passes
    only, so it does not end every RL step, and a wait before it is needed only on those."""
    site = model.call_site_of.get(id(submit.node))
    return is_save(submit) and site is not None and site.guarded


def refreshes_sampler(submit: Submit) -> bool:
    if submit.call is None:
        return submit.helper is not None and submit.helper.refreshes_sampler
    return submit.call.method.plain_name in _REFRESHES_SAMPLER


def occasional_sampler_refresh(model: ModelView, loop: LoopInfo) -> cst.Call | None:
    """The first call in ``loop`` that makes a new SamplingClient only under a cadence guard
    inside the loop (``if step % sync_every == 0: sc = tc.save_weights_and_get_sampling_client()``),
    when none does on every iteration: the other iterations sample from the old weights."""
    if refreshes_sampling_client(model, loop):
        return None
    # The loop must sample on every step (an SFT loop evaluating every N steps has no stale
    # sampler: it does not sample in the other steps).
    if not any(
        not site.guarded_in(loop)
        and Role.SAMPLE in model.roles_submitted_by_call(site.node, site.scope)
        for site in loop.calls
    ):
        return None
    for site in loop.calls:
        if not site.guarded_in(loop):
            continue
        for t in model.types(site.node, site.scope):
            if t.client is Client.SAMPLING and t.kind in (Kind.CLIENT, Kind.CLIENT_FUTURE):
                return site.node
    return None
