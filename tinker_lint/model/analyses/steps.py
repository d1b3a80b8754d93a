"""What runs on every step: the one owner of "hot loop", "epoch loop" and "per step".

The spec measures a finding's cost by how many times it runs per step (``rules.md``, "Cost
shape"). A loop is hot when it submits a training or sampling request, in its body or through a
function of this module it calls. The step loop of a place is the innermost hot loop around it.
Work runs on every step when it is in the step loop (or in a function the step loop calls, on every
step) and neither a cadence guard inside that loop (``if step % log_every == 0:``) nor the epoch
level makes it occasional. An epoch loop encloses the step loop (``for epoch in ...: for batch in
...: forward_backward(...)``): work at its own level runs once per epoch, not per step, so no rule
reports it. TNK107 and TNK201-TNK205 all ask ``model.steps``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.batches import dict_view, loop_iterables, names_batch, small
from tinker_lint.model.analyses.bindings import argument, bound_in, parameters
from tinker_lint.model.analyses.flow import _kept_walk, names_read, target_keys
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import names_hot_call
from tinker_lint.model.facts.scopes import (
    CallSite,
    FunctionInfo,
    LoopInfo,
    functions_reaching,
    resolve_function,
)
from tinker_lint.model.facts.sdk import Role

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView


_FUNCTION_TYPES = (cst.FunctionDef,)
_LOOP_TYPES = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class StepContext:
    """How a place runs on every step."""

    loop: LoopInfo  # the step loop the work runs in (directly or through calls)
    entry: CallSite  # the call in that loop that submits, or calls the function that does
    submit: CallSite  # the training or sampling submit itself
    via: tuple[FunctionInfo, ...] = ()  # functions from the loop down to the site's, if any
    calls: tuple[CallSite, ...] = ()  # the call of each function of ``via``, in its caller
    # The innermost loop over a batch, inside the step, that runs the site once per element.
    element_loop: LoopInfo | None = None


class Steps:
    """The step questions of one module, memoised by record (records hash by identity)."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        self._entries: dict[LoopInfo, CallSite | None] = {}
        self._epoch: dict[LoopInfo, bool] = {}
        self._runs: dict[FunctionInfo, bool] = {}
        self._contexts: dict[CallSite | LoopInfo, StepContext | None] = {}
        self._lexicals: dict[tuple[tuple[LoopInfo, ...], int], StepContext | None] = {}
        self._roles: dict[CallSite, Role | None] = {}
        self._training_runs: dict[FunctionInfo, bool] = {}

    # ======================================================================================
    # Which calls submit a step, and which loops are hot
    # ======================================================================================
    def is_step_submit(self, site: CallSite) -> bool:
        """A training or sampling submit, or a call the project names in ``hot-loop-calls``."""
        submit = self.model.submit_of(site.node, site.scope)
        if submit is not None and submit.method.role in (Role.TRAIN, Role.SAMPLE):
            return True
        return self.model.hot_loop_calls is not None and self._names_hot_call(site)

    def _names_hot_call(self, site: CallSite) -> bool:
        """A call the project names in ``hot-loop-calls``."""
        pattern = self.model.hot_loop_calls
        if pattern is None:
            return False
        name = dotted_name(site.node.func)
        return name is not None and names_hot_call(name, pattern)

    @cached_property
    def submitting_functions(self) -> dict[FunctionInfo, CallSite]:
        """Functions of this module that submit a step, directly or through another function of
        the module: function -> the call site that submits."""
        model = self.model
        return functions_reaching(model.functions, model.methods, self.is_step_submit)

    def entry(self, loop: LoopInfo) -> CallSite | None:
        """The call in ``loop`` that makes it hot: the submit itself, or the call of a function of
        this module that submits (``train_step(batch)``). None if the loop is not hot."""
        if loop in self._entries:
            return self._entries[loop]
        found = None
        for site in loop.calls:
            if self.is_step_submit(site):
                found = site
                break
            target = resolve_function(self.model.methods, site.node.func, site.scope)
            if target is not None and target in self.submitting_functions:
                found = site
                break
        self._entries[loop] = found
        return found

    def submit(self, loop: LoopInfo) -> CallSite | None:
        """The submit that makes ``loop`` hot: a training or sampling submit in its body, or the one
        inside the function of this module that the loop calls. None if the loop is not hot."""
        entry = self.entry(loop)
        if entry is None or self.is_step_submit(entry):
            return entry
        target = resolve_function(self.model.methods, entry.node.func, entry.scope)
        return self.submitting_functions[target] if target is not None else None

    def is_epoch_loop(self, loop: LoopInfo) -> bool:
        """A loop around the step loop (``for epoch in ...: ... for batch in ...: fb(...)``): it
        submits nothing at its own level, and a nested ``for``/``while`` submits training requests.
        Work at its level runs once per epoch, before the step loop: the recommended place, not a
        finding. A step loop whose requests go out from a nested loop or comprehension of samples
        stays one.

        A run loop counts as one too (``for config in configs: train(config)``): at its own level
        it only calls functions that submit from a loop of their own (``runs_own_loop``). The
        callee's work outside its loop is per-run setup and teardown, not per-step work."""
        cached = self._epoch.get(loop)
        if cached is not None:
            return cached
        own_submit = False
        nested_steps = False
        for site in loop.calls:
            role = self._step_role(site)
            if role is None:
                continue
            if site.loops[-1] is loop:
                target = resolve_function(self.model.methods, site.node.func, site.scope)
                if (
                    target is not None
                    and self.runs_own_loop(target)
                    and not self._loops_over_fresh_data(target, site, loop)
                ):
                    nested_steps = True
                    continue
                own_submit = True
                break
            inner = site.loops[site.loops.index(loop) + 1 :]
            if role is Role.TRAIN and any(isinstance(i.node, cst.For | cst.While) for i in inner):
                nested_steps = True
        result = self._epoch[loop] = not own_submit and nested_steps
        return result

    def runs_own_loop(self, function: FunctionInfo) -> bool:
        """Whether ``function`` submits its steps only from ``for``/``while`` loops of its own, or
        through calls of such functions: a whole run (``def train(config): load(config); for batch
        in ...: fb(batch)``), not one step. A function that also submits outside its loops
        (``grpo_step``: samples per prompt in a loop, then ``forward_backward``) is one step."""
        return self._runs_own_loop(function, frozenset())

    def _runs_own_loop(self, function: FunctionInfo, seen: frozenset[FunctionInfo]) -> bool:
        cached = self._runs.get(function)
        if cached is not None:
            return cached
        looped = False
        for site in function.calls:
            if self._step_role(site) is None:
                continue
            if any(self._repeats(site, loop) for loop in site.loops):
                looped = True
                continue
            target = resolve_function(self.model.methods, site.node.func, site.scope)
            if target is None or target in seen or target is function:
                looped = False
                break
            if not self._runs_own_loop(target, seen | {function}):
                looped = False
                break
            looped = True
        if not seen:
            self._runs[function] = looped  # memoised only when no cycle cut the search short
        return looped

    def once_per_run(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` runs once per run, not on every step: outside every loop, at the top
        level of the module or of a function that runs the training loop itself
        (``runs_training_loop``). Such code runs before or after all the steps (a final save, a
        final evaluation): a round trip there is paid once, not per step. A ``for``'s iterable is
        evaluated once, outside its loop; a ``while``'s test on every pass."""
        model = self.model
        came_from, current = node, model.parent(node)
        while current is not None and type(current) not in _FUNCTION_TYPES:
            kind = type(current)
            if kind in _LOOP_TYPES and not (kind is cst.For and came_from is current.iter):  # type: ignore[attr-defined]
                return False
            if kind is cst.Lambda:
                return False  # runs when called: who knows how often
            came_from, current = current, model.parent(current)
        if current is None:
            return True  # the module's own statements run once
        function = model.function_of_node.get(id(current))
        return function is not None and self.runs_training_loop(function)

    def runs_training_loop(self, function: FunctionInfo) -> bool:
        """Whether ``function`` runs the training loop itself: a loop of its own submits training
        requests on every iteration, and none is submitted outside its loops (a function that
        accumulates gradients over micro-batches in a loop and then steps the optimizer once is
        one step, not a run)."""
        cached = self._training_runs.get(function)
        if cached is not None:
            return cached
        in_loop = outside = False
        for site in function.calls:
            if Role.TRAIN not in self.model.roles_submitted_by_call(site.node, site.scope):
                continue
            if site.loops or self._runs_steps(site):
                in_loop = True  # a loop of its own, or a call of a function that loops
            else:
                outside = True
                break
        self._training_runs[function] = found = in_loop and not outside
        return found

    def _runs_steps(self, site: CallSite) -> bool:
        """Whether ``site`` calls a function that runs training steps in a loop of its own: one
        of this module (``runs_own_loop``), or of the project or the cookbook whose summary
        waits in a loop (``await do_training(...)`` in a ``main`` that first loads a state)."""
        target = resolve_function(self.model.methods, site.node.func, site.scope)
        if target is not None:
            return self.runs_own_loop(target)
        summary = self.model.helper_of(site.node, site.scope)
        return summary is not None and summary.waits_in_loop

    def _loops_over_fresh_data(
        self, function: FunctionInfo, call: CallSite, loop: LoopInfo
    ) -> bool:
        """Whether a loop of ``function`` that submits iterates what ``call`` passes it afresh on
        each iteration of ``loop`` (``for prompt in prompts`` inside ``collect(prompts)``, with
        ``prompts`` bound in ``loop``): ``function`` then works through one step's data, and
        ``loop`` is the step loop, not a loop over runs."""
        model = self.model
        params = set(parameters(function))
        bound: set[str] | None = None
        for site in function.calls:
            if self._step_role(site) is None:
                continue
            for inner in site.loops:
                node = inner.node
                header = node.iter if isinstance(node, cst.For) else getattr(node, "test", None)
                if header is None:
                    continue
                for key in sorted(names_read(model, header)):
                    if not key.startswith("=") or key[1:] not in params:
                        continue
                    passed = argument(function, call, key[1:])
                    if passed is None:
                        return True  # unseen: take it for this step's data
                    bound = _bound_in_loop(model, loop.node) if bound is None else bound
                    if names_read(model, passed) & bound:
                        return True
        return False

    def _step_role(self, site: CallSite) -> Role | None:
        """TRAIN or SAMPLE if ``site`` submits a step, itself or through a function of this
        module."""
        # Memoised: asked of every call of each loop around the step loop and of each function
        # it calls (a nested loop's calls are its outer loop's too).
        if site in self._roles:
            return self._roles[site]
        role = self._roles[site] = self._find_step_role(site)
        return role

    def _find_step_role(self, site: CallSite) -> Role | None:
        model = self.model
        submit = model.submit_of(site.node, site.scope)
        if submit is not None and submit.method.role in (Role.TRAIN, Role.SAMPLE):
            return submit.method.role
        if self._names_hot_call(site):
            return Role.TRAIN  # a call the project counts as a step (``hot-loop-calls``)
        target = resolve_function(model.methods, site.node.func, site.scope)
        if target is not None:
            inner = self.submitting_functions.get(target)
            if inner is not None:
                found = model.submit_of(inner.node, inner.scope)
                return found.method.role if found is not None else Role.TRAIN
        return None

    def _repeats(self, site: CallSite, loop: LoopInfo) -> bool:
        """Whether ``loop`` is a ``for``/``while`` that runs ``site`` again and again, not a retry
        loop that ends once it succeeds (``for attempt in range(3): try: return fb(...)``: a
        ``return`` or ``break`` in a block between the site and the loop)."""
        if not isinstance(loop.node, cst.For | cst.While):
            return False
        node: cst.CSTNode | None = site.node
        while node is not None and node is not loop.node:
            parent = self.model.parent(node)
            if isinstance(parent, cst.IndentedBlock) and any(
                isinstance(line, cst.SimpleStatementLine)
                and any(isinstance(small, cst.Return | cst.Break) for small in line.body)
                for line in parent.body
            ):
                return False
            node = parent
        return True

    # ======================================================================================
    # Where a place runs on every step
    # ======================================================================================
    def step_of(self, site: CallSite) -> StepContext | None:
        """The step ``site`` runs in, or None when it does not run on every step of a step loop
        (outside any hot loop, under a cadence guard inside it, or at an epoch loop's level)."""
        return self._memo(site, site.loops, site.function, site.guard_depth)

    def of_loop(self, loop: LoopInfo) -> StepContext | None:
        """The step a (non-hot) loop runs in, as for a call at its header."""
        if self.entry(loop) is not None:
            return None
        outer: list[LoopInfo] = []
        parent = loop.parent
        while parent is not None:
            outer.append(parent)
            parent = parent.parent
        return self._memo(loop, tuple(reversed(outer)), loop.function, loop.guard_depth)

    def _memo(
        self,
        owner: CallSite | LoopInfo,
        loops: tuple[LoopInfo, ...],
        function: FunctionInfo | None,
        guard_depth: int,
    ) -> StepContext | None:
        if owner in self._contexts:
            return self._contexts[owner]
        result = self._lexical(loops, guard_depth)
        if result is None and function is not None and guard_depth == 0 and not self._hot(loops):
            caller = self._per_step_functions.get(function)
            if caller is not None:
                result = replace(
                    caller,
                    via=(*caller.via, function),
                    element_loop=self._element_loop(loops, caller) or caller.element_loop,
                )
        self._contexts[owner] = result
        return result

    def _hot(self, loops: tuple[LoopInfo, ...]) -> bool:
        return any(self.entry(loop) is not None for loop in loops)

    def _lexical(self, loops: tuple[LoopInfo, ...], guard_depth: int) -> StepContext | None:
        """The innermost hot loop around a place in its own function, unless a cadence guard
        inside that loop makes the place occasional, or that loop is an epoch loop. Memoised:
        every call and loop of a module asks, and those in one loop ask the same."""
        key = (loops, guard_depth)
        if key in self._lexicals:
            return self._lexicals[key]
        found = self._lexicals[key] = self._innermost_step(loops, guard_depth)
        return found

    def _innermost_step(self, loops: tuple[LoopInfo, ...], guard_depth: int) -> StepContext | None:
        for index in range(len(loops) - 1, -1, -1):
            loop = loops[index]
            entry = self.entry(loop)
            if entry is None:
                continue
            submit = self.submit(loop)
            if submit is None or guard_depth > loop.guard_depth or self.is_epoch_loop(loop):
                return None
            step = StepContext(loop, entry, submit)
            return replace(step, element_loop=self._element_loop(loops[index + 1 :], step))
        return None

    @cached_property
    def _per_step_functions(self) -> dict[FunctionInfo, StepContext]:
        """Functions of this module that run on every step: called, outside a cadence guard, from
        a step loop or from another such function; each with the context of its first call."""
        model = self.model
        found: dict[FunctionInfo, StepContext] = {}
        methods = model.methods
        # The queue holds only calls of a function of this module not found yet: a call skipped
        # when queued would be skipped when taken (``found`` only grows), and the step context of
        # every call that is not one (most) need not be made.
        work: deque[tuple[CallSite, FunctionInfo, StepContext]] = deque()
        for site in model.calls:
            if site.loops:
                target = resolve_function(methods, site.node.func, site.scope)
                if target is None or target is site.function:
                    continue
                step = self._lexical(site.loops, site.guard_depth)
                if step is not None:
                    work.append((site, target, step))
        while work:
            site, target, step = work.popleft()
            if target in found:
                continue
            step = found[target] = replace(step, calls=(*step.calls, site))
            for inner in target.calls:
                callee = resolve_function(methods, inner.node.func, inner.scope)
                if callee is None or callee in found or callee is inner.function:
                    continue
                if inner.guarded or self._hot(inner.loops):
                    continue  # a hot loop inside the function is its own context (found above)
                element = self._element_loop(inner.loops, step) or step.element_loop
                work.append(
                    (inner, callee, replace(step, via=(*step.via, target), element_loop=element))
                )
        return found

    def _element_loop(self, loops: tuple[LoopInfo, ...], step: StepContext) -> LoopInfo | None:
        """The innermost of ``loops`` (all inside one step) that runs once per element of a
        batch: it iterates per-example data by name, the step loop's own item or what the step
        submits, and is not bounded by a small literal (``groups[:2]``)."""
        if not loops:
            return None
        model = self.model
        step_names = _step_data_names(step, loops[0].function)
        for loop in reversed(loops):
            for iterable in loop_iterables(loop):
                if small(iterable) or dict_view(iterable):
                    continue
                reads = names_read(model, iterable)
                if reads & step_names or any(names_batch(key.rsplit(".", 1)[-1]) for key in reads):
                    return loop
        return None


@_kept_walk("bound in loop")
def _bound_in_loop(model: ModelView, loop: cst.CSTNode) -> set[str]:
    """``bound_in`` of a loop that may be an epoch loop (a walk of the whole of it, often the
    step loop's function's biggest statement): its own subtree only, so kept from one lint of a
    buffer for the next (``flow.py``). Read, never changed."""
    return bound_in(model, loop)


def _step_data_names(step: StepContext, function: FunctionInfo | None) -> set[str]:
    """In the step loop's own function: its target (``for batch in loader``) and the names its
    submit sends (``forward_backward(datums, ...)``)."""
    names: set[str] = set()
    node = step.loop.node
    if step.loop.function is function and isinstance(node, cst.For):
        names |= target_keys(node.target)
    if step.submit.function is function:
        names |= {
            arg.value.value for arg in step.submit.node.args if isinstance(arg.value, cst.Name)
        }
    return names
