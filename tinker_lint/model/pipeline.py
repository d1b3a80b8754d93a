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

import libcst as cst

from tinker_lint.model.flow import (
    NESTED_CODE,
    Step,
    Submit,
    Wait,
    events_in,
    has_jump,
    linear_steps,
    names_read,
    names_written,
    reads_when_run,
    rebound_mutations,
    submit_reads,
    target_keys,
)
from tinker_lint.model.sdk import Client, Role
from tinker_lint.model.semantic import LoopInfo, Scope, SemanticModel
from tinker_lint.model.types import Kind


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

    def copy(self) -> _Pending:
        return _Pending(self.wait, set(self.tainted))


def _merge(*states: list[_Pending]) -> list[_Pending]:
    merged: dict[int, _Pending] = {}
    for state in states:
        for pending in state:
            key = id(pending.wait.node)
            if key in merged:
                merged[key].tainted |= pending.tainted
            else:
                merged[key] = pending.copy()
    return list(merged.values())


class _PathWalker:
    def __init__(self, model: SemanticModel, scope: Scope, guarded_waits: set[int]) -> None:
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
        for stmt in body:
            state = self.statement(stmt, state)
        return state

    def suite(self, suite: cst.BaseSuite | None, state: list[_Pending]) -> list[_Pending]:
        if suite is None:
            return state
        if isinstance(suite, cst.IndentedBlock):
            return self.block(suite.body, state)
        if isinstance(suite, cst.SimpleStatementSuite):
            return self.simple(suite.body, state)
        return state

    def simple(self, smalls: Sequence[cst.CSTNode], state: list[_Pending]) -> list[_Pending]:
        for small in smalls:
            state = self.expression(small, state, names_written(self.model, small))
            if isinstance(small, cst.Break | cst.Continue) and self._jumps:
                self._jumps[-1].append(state)  # what it built leaves the loop (``_loop_body``)
            if isinstance(small, cst.Return | cst.Raise | cst.Break | cst.Continue):
                return []  # this path of the pass ends here
        return state

    def expression(
        self, node: cst.CSTNode, state: list[_Pending], writes: set[str]
    ) -> list[_Pending]:
        state = [p.copy() for p in state]
        fresh: list[_Pending] = []
        for event in events_in(self.model, node, self.scope):
            if isinstance(event, Submit):
                reads = submit_reads(self.model, event.node, self.scope)
                for pending in [*state, *fresh]:
                    dependent = bool(reads & pending.tainted) or self.model.contains(
                        event.node, pending.wait.node
                    )
                    self.pairs.append(WaitThenSubmit(pending.wait, event, dependent))
                state, fresh = [], []
            elif not self._in_submitting_comprehension(event, node):
                if self._guard_depth:
                    self.guarded_waits.add(id(event.node))
                fresh.append(_Pending(event))
        # ``data = build()``, a closure reading the result: ``data`` holds it too.
        reads = reads_when_run(self.model, node, self.scope) if state else set()
        for pending in state:
            if reads & pending.tainted:
                pending.tainted |= writes
        for pending in fresh:
            pending.tainted |= writes
        return [*state, *fresh]

    def _in_submitting_comprehension(self, wait: Wait, statement: cst.CSTNode) -> bool:
        """``[sc.sample(p).result() for p in ps]``: submit and wait per element is TNK103's."""
        for loop in self.model.loops:
            if (
                loop.is_comprehension
                and any(self.model.submit_of(s.node, s.scope) for s in loop.calls)
                and self.model.contains(statement, loop.node)
                and self.model.contains(loop.node, wait.node)
            ):
                return True
        return False

    def _loop_body(self, body: cst.BaseSuite, state: list[_Pending]) -> list[_Pending]:
        """A wait made inside a loop body belongs to that body's pass; what follows the loop is
        TNK102's wrap-around question, not this one."""
        before = {id(p.wait.node) for p in state}
        self._jumps.append([])
        self._branched.append({})
        out = self.suite(body, [p.copy() for p in state])
        jumps, branched = self._jumps.pop(), self._branched.pop()
        # The loop is left from the end of its body and from every ``break``/``continue``: what
        # was stored on any of those paths (``kept.append(x); continue``) is there after it.
        exits = [p for path in (out, *jumps) for p in path if id(p.wait.node) in before]
        after = _merge(state, exits)
        _taint_branched(self.model, self.scope, body, after, branched)
        return after

    def _test(
        self, test: cst.BaseExpression, state: list[_Pending], control: cst.CSTNode
    ) -> list[_Pending]:
        state = self.expression(test, state, set())
        reads = names_read(self.model, test)
        # A branch on the result: what follows is control-dependent on the wait.
        branched = [p for p in state if reads & p.tainted]
        if self._branched:
            for pending in branched:
                self._branched[-1].setdefault(id(pending.wait.node), []).append(control)
        return [p for p in state if not reads & p.tainted]

    def statement(self, stmt: cst.CSTNode, state: list[_Pending]) -> list[_Pending]:
        if isinstance(stmt, cst.SimpleStatementLine):
            return self.simple(stmt.body, state)
        if isinstance(stmt, cst.If):
            state = self._test(stmt.test, state, stmt)
            guarded = id(stmt.body) in self.model.guarded_blocks
            self._guard_depth += guarded
            body = self.suite(stmt.body, [p.copy() for p in state])
            self._guard_depth -= guarded
            if isinstance(stmt.orelse, cst.If):
                orelse = self.statement(stmt.orelse, [p.copy() for p in state])
            elif stmt.orelse is not None:
                orelse = self.suite(stmt.orelse.body, [p.copy() for p in state])
            else:
                orelse = state
            return _merge(body, orelse)
        if isinstance(stmt, cst.While):
            state = self._test(stmt.test, state, stmt)
            after = self._loop_body(stmt.body, state)
            return self.suite(stmt.orelse.body, after) if stmt.orelse else after
        if isinstance(stmt, cst.For):
            state = self.expression(stmt.iter, state, target_keys(stmt.target))
            after = self._loop_body(stmt.body, state)
            return self.suite(stmt.orelse.body, after) if stmt.orelse else after
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                writes = target_keys(item.asname.name) if item.asname else set()
                state = self.expression(item.item, state, writes)
            return self.suite(stmt.body, state)
        if isinstance(stmt, cst.Try | cst.TryStar):
            before = {id(p.wait.node) for p in state}
            body = self.suite(stmt.body, [p.copy() for p in state])
            entry = _merge(state, _handler_entry(body, before))
            handlers = [self.suite(h.body, [p.copy() for p in entry]) for h in stmt.handlers]
            orelse = self.suite(stmt.orelse.body, body) if stmt.orelse else body
            out = _merge(orelse, *handlers)
            return self.suite(stmt.finalbody.body, out) if stmt.finalbody else out
        if isinstance(stmt, cst.Match):
            state = self._test(stmt.subject, state, stmt)
            cases = [self.suite(c.body, [p.copy() for p in state]) for c in stmt.cases]
            return _merge(state, *cases)
        return state  # FunctionDef, ClassDef: their bodies run later


def _handler_entry(body: list[_Pending], before: set[int]) -> list[_Pending]:
    """What reaches an ``except`` handler from its ``try`` body: not the waits made in the body.
    The handler runs because something there failed, the wait itself maybe: its request (a
    retry, a fallback) depends on that failure, so it is not "the next submit" of such a wait."""
    return [p for p in body if id(p.wait.node) in before]


def _taint_branched(
    model: SemanticModel,
    scope: Scope,
    body: cst.BaseSuite,
    after: list[_Pending],
    branched: dict[int, list[cst.CSTNode]],
) -> None:
    """A test in the loop body branched on a wait's result (``if item["logprobs"] is None:
    continue`` over the result's outputs): that path stopped following the wait, so for what
    comes after the loop, what the statement it controls stores depends on the result (control
    dependence); when that statement can skip or leave the rest of the body, all the body
    stores does."""
    for pending in after:
        for control in branched.get(id(pending.wait.node), ()):
            region = body if has_jump(model, control) else control
            statements = _body_statements(region) if region is body else [control]
            for step in linear_steps(model, statements, scope):
                pending.tainted |= step.writes | step.binds


def waits_and_next_submits(
    model: SemanticModel, body: Sequence[cst.CSTNode], scope: Scope
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
    branches_on_result: bool  # an if/while later in the iteration tests the result
    guarded: bool
    roles: set[Role]  # roles of the requests waited for
    # Whether the loop goes on is decided by a result waited for in this iteration (early
    # stopping, ``while not done``): the next step cannot be in flight during this iteration's
    # waits. The same for every wait of the loop.
    loop_gated: bool = False


def _roles(wait: Wait) -> set[Role]:
    return {t.method.role for t in wait.futures if t.method is not None}


def loop_waits(model: SemanticModel, loop: LoopInfo) -> list[LoopWait]:
    if loop.is_comprehension:
        return _comprehension_waits(model, loop)
    node = loop.node
    assert isinstance(node, cst.For | cst.While)
    steps = list(linear_steps(model, _body_statements(node.body), loop.scope))
    # Steps that submit through a function of this module (``fwd, opt = submit_step(batch)``).
    via_function = [_submits_through_function(model, step, loop.scope) for step in steps]
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

    result = []
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
        tainted = set(step.writes)
        branches = ends_loop = False
        for later in steps[index + 1 :]:
            if attempt is not None and model.contains(attempt.body, later.node):
                # Runs only if the wait did not raise: ``done = True`` marks its success.
                tainted |= later.writes | later.binds
            if later.reads & tainted:
                if later.kind == "test" and _decides(model, later, loop.scope):
                    branches = True
                    ends_loop = ends_loop or later.exits
                tainted |= later.writes
        needed, ends_next = _needed_next_iteration(steps, tainted, node, model, loop.scope)
        retried = is_fresh and _success_leaves_loop(model, node, wait.node)
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
            )
        )
    if any(item.loop_gated for item in result):
        for item in result:
            item.loop_gated = True
    return result


def may_make_requests(model: SemanticModel, loop: LoopInfo) -> bool:
    """Whether ``loop`` makes any Tinker request, directly or through a function of this module.
    Without one, no wait in it waits for a request of the same iteration (``LoopWait.fresh``), so
    the rules that need such a wait can skip the loop without flattening its body."""
    return any(
        model.sdk_call(site.node, site.scope) is not None
        or model.roles_submitted_by_call(site.node, site.scope)
        for site in loop.calls
    )


def _decides(model: SemanticModel, test: Step, scope: Scope) -> bool:
    """Whether a test decides something the pipelining depends on: the block it controls jumps
    (break, continue, return, raise) or submits a request. ``if out.metrics: log(out)`` does not."""
    if test.jumps or test.control is None:
        return True
    return any(
        isinstance(node, cst.Call) and model.roles_submitted_by_call(node, scope)
        for node in model.walk(test.control, NESTED_CODE)
    )


def _submits_through_function(model: SemanticModel, step: Step, scope: Scope) -> bool:
    return any(
        isinstance(node, cst.Call)
        and not model.submit_of(node, scope)
        and model.roles_submitted_by_call(node, scope)
        for node in model.walk(step.node, NESTED_CODE)
    )


def _body_statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    return (
        [cst.SimpleStatementLine(body=body.body)]
        if isinstance(body, cst.SimpleStatementSuite)
        else []
    )


def _waits_on_fresh(model: SemanticModel, wait: Wait, fresh_keys: set[str]) -> bool:
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
    model: SemanticModel,
    scope: Scope,
) -> tuple[bool, bool]:
    """Whether the next iteration needs the result before its first submit (it reads it, or a
    test branches on it), and whether that use can end the loop (the ``while`` test, or a test
    whose block breaks out)."""
    tainted = set(tainted)
    if isinstance(loop_node, cst.While) and names_read(model, loop_node.test) & tainted:
        return True, True
    for step in steps:
        for event in step.events:
            if isinstance(event, Submit):
                return bool(submit_reads(model, event.node, scope) & tainted), False
        if step.reads & tainted:
            if step.kind == "test":
                return True, step.exits
            tainted |= step.writes
    return False, False


def _success_leaves_loop(
    model: SemanticModel, loop: cst.For | cst.While, wait: cst.CSTNode
) -> bool:
    """Whether the iteration leaves ``loop`` whenever ``wait`` succeeds: a ``break``/``return``
    follows it unconditionally (``try: r = sc.sample(...).result(); break``, or after the ``try``
    whose handler retries). The next iteration then runs only when this attempt failed: a retry
    loop, whose next request depends on this one's outcome."""
    inner = model.parent(wait)
    while inner is not None and inner is not loop:
        if isinstance(inner, cst.For | cst.While | cst.FunctionDef | cst.Lambda):
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
    model: SemanticModel, loop: cst.For | cst.While, wait: cst.CSTNode
) -> cst.Try | cst.TryStar | None:
    """The innermost ``try`` of ``loop``'s body whose body holds ``wait`` and that has an
    ``except`` handler: the statements after the wait in its body run only when the wait
    succeeded, those of its handlers only when something in it failed."""
    child: cst.CSTNode = wait
    parent = model.parent(child)
    while parent is not None and parent is not loop:
        if isinstance(parent, cst.FunctionDef | cst.Lambda):
            return None
        if isinstance(parent, cst.Try | cst.TryStar) and child is parent.body and parent.handlers:
            return parent
        child, parent = parent, model.parent(parent)
    return None


def _in_handler(
    model: SemanticModel, attempt: cst.Try | cst.TryStar | None, node: cst.CSTNode
) -> bool:
    return attempt is not None and any(model.contains(h, node) for h in attempt.handlers)


def _index(siblings: Sequence[cst.CSTNode], child: cst.CSTNode) -> int:
    for index, sibling in enumerate(siblings):
        if sibling is child:
            return index
    return len(siblings)


def _any_leaves(block: cst.BaseSuite) -> bool:
    return any(_leaves(s) for s in _body_statements(block))


def _leaves(stmt: cst.CSTNode) -> bool:
    """An unconditional ``break``/``return``/``raise`` statement (or a line made of them)."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(_leaves(small) for small in stmt.body)
    return isinstance(stmt, cst.Break | cst.Return | cst.Raise)


def _comprehension_waits(model: SemanticModel, loop: LoopInfo) -> list[LoopWait]:
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


def refreshes_sampling_client(model: SemanticModel, loop: LoopInfo) -> bool:
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
