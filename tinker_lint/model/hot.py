"""Where CPU work runs on every step: the hot loop a call site runs in, directly or through functions
of this module that the loop calls, and whether it runs once per element of a batch in that step.

The TNK2xx rules ask ``hot_context(model, site)``. A site has one when it is in a hot loop of its own
function, or in a function that a hot loop calls (transitively, through this module's functions),
and no cadence guard inside the loop, or on the way to the function, makes it occasional.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace

import libcst as cst

from tinker_lint.model.flow import names_read, target_keys
from tinker_lint.model.sdk import Role
from tinker_lint.model.semantic import CallSite, FunctionInfo, LoopInfo, SemanticModel
from tinker_lint.model.types import Kind


@dataclass(frozen=True)
class HotContext:
    loop: LoopInfo  # the hot loop the work runs in (directly or through calls)
    entry: CallSite  # the call in that loop that submits, or calls the function that does
    submit: CallSite  # the training or sampling submit itself
    via: tuple[FunctionInfo, ...] = ()  # functions from the loop down to the site's, if any
    # The innermost loop over a batch, inside the step, that runs the site once per element.
    element_loop: LoopInfo | None = None


_NONE = object()
_PER_STEP = -1  # hot_cache key of the per-step functions table (other keys are node ids)


def hot_context(model: SemanticModel, site: CallSite) -> HotContext | None:
    """The step ``site`` runs in, or None when it does not run on every step of a hot loop."""
    return _memo(model, site, site.loops, site.function, site.guard_depth)


def loop_hot_context(model: SemanticModel, loop: LoopInfo) -> HotContext | None:
    """The step a (non-hot) loop runs in, as for a call at its header."""
    if model.hot_entry(loop) is not None:
        return None
    outer: list[LoopInfo] = []
    parent = loop.parent
    while parent is not None:
        outer.append(parent)
        parent = parent.parent
    return _memo(model, loop, tuple(reversed(outer)), loop.function, loop.guard_depth)


def _memo(
    model: SemanticModel,
    owner: object,
    loops: tuple[LoopInfo, ...],
    function: FunctionInfo | None,
    guard_depth: int,
) -> HotContext | None:
    key = id(owner)
    cached = model.hot_cache.get(key, _NONE)
    if cached is None or isinstance(cached, HotContext):
        return cached
    result = _lexical(model, loops, guard_depth)
    if (
        result is None
        and function is not None
        and guard_depth == 0
        and not _in_hot_loop(model, loops)
    ):
        caller = _per_step_functions(model).get(id(function.node))
        if caller is not None:
            result = replace(
                caller,
                via=(*caller.via, function),
                element_loop=element_loop(model, loops, caller) or caller.element_loop,
            )
    model.hot_cache[key] = result
    return result


def _in_hot_loop(model: SemanticModel, loops: tuple[LoopInfo, ...]) -> bool:
    return any(model.hot_entry(loop) is not None for loop in loops)


def _lexical(
    model: SemanticModel, loops: tuple[LoopInfo, ...], guard_depth: int
) -> HotContext | None:
    """The innermost hot loop around a place in its own function, unless a cadence guard inside
    that loop makes the place occasional."""
    for index in range(len(loops) - 1, -1, -1):
        loop = loops[index]
        entry = model.hot_entry(loop)
        if entry is None:
            continue
        submit = model.hot_submit(loop)
        if submit is None or guard_depth > loop.guard_depth or is_epoch_loop(model, loop):
            return None
        hot = HotContext(loop, entry, submit)
        return replace(hot, element_loop=element_loop(model, loops[index + 1 :], hot))
    return None


def is_epoch_loop(model: SemanticModel, loop: LoopInfo) -> bool:
    """A loop around the training loop (``for epoch in ...: ... for batch in ...: fb(...)``): it
    submits nothing at its own level, and a nested ``for``/``while`` submits training requests. Work
    at its level runs once per epoch, before the step loop: the recommended place, not a finding.
    A step loop whose requests go out from a nested loop or comprehension of samples stays one."""
    key = ("epoch", id(loop))
    cached = model.hot_cache.get(key)
    if isinstance(cached, bool):
        return cached
    own_submit = False
    nested_training = False
    for site in loop.calls:
        role = _step_role(model, site)
        if role is None:
            continue
        if site.loops[-1] is loop:
            own_submit = True
            break
        inner = site.loops[site.loops.index(loop) + 1 :]
        if role is Role.TRAIN and any(isinstance(i.node, cst.For | cst.While) for i in inner):
            nested_training = True
    result = not own_submit and nested_training
    model.hot_cache[key] = result
    return result


def _step_role(model: SemanticModel, site: CallSite) -> Role | None:
    """TRAIN or SAMPLE if ``site`` submits a step, itself or through a function of this module."""
    submit = model.submit_of(site.node, site.scope)
    if submit is not None and submit.method.role in (Role.TRAIN, Role.SAMPLE):
        return submit.method.role
    if model._is_step_submit(site):
        return Role.TRAIN  # a call the model counts as a step by other evidence
    target = model.resolve_function(site.node.func, site.scope)
    if target is not None:
        inner = model.submitting_functions.get(id(target.node))
        if inner is not None:
            found = model.submit_of(inner.node, inner.scope)
            return found.method.role if found is not None else Role.TRAIN
    return None


def _per_step_functions(model: SemanticModel) -> dict[int, HotContext]:
    """Functions of this module that run on every step: called, outside a cadence guard, from a
    hot loop or from another such function. Function node id -> the context of its first call."""
    cached = model.hot_cache.get(_PER_STEP)
    if isinstance(cached, dict):
        return cached
    found: dict[int, HotContext] = {}
    model.hot_cache[_PER_STEP] = found
    work: deque[tuple[CallSite, HotContext]] = deque()
    for site in model.calls:
        if site.loops:
            hot = _lexical(model, site.loops, site.guard_depth)
            if hot is not None:
                work.append((site, hot))
    while work:
        site, hot = work.popleft()
        target = model.resolve_function(site.node.func, site.scope)
        if target is None or id(target.node) in found or target is site.function:
            continue
        found[id(target.node)] = hot
        for inner in target.calls:
            if inner.guarded or _in_hot_loop(model, inner.loops):
                continue  # a hot loop inside the function is its own context (found above)
            element = element_loop(model, inner.loops, hot) or hot.element_loop
            work.append((inner, replace(hot, via=(*hot.via, target), element_loop=element)))
    return found


# ==========================================================================================
# Loops over a batch
# ==========================================================================================
# Words that name per-example data in training code (`batch`, `datums_D`, `sampled_tokens_G_T`,
# `trajectory_groups`, `positions`): a loop over such a value runs once per element of the step.
# A loop over `metrics.items()` or `range(num_substeps)` is bookkeeping and is not one.
_BATCH_WORDS = frozenset(
    {
        "batch",
        "minibatch",
        "datum",
        "data",
        "dataset",
        "rollout",
        "trajectory",
        "traj",
        "episode",
        "transition",
        "sample",
        "example",
        "sequence",
        "seq",
        "response",
        "completion",
        "prompt",
        "question",
        "conversation",
        "convo",
        "message",
        "token",
        "logprob",
        "logit",
        "advantage",
        "reward",
        "output",
        "row",
        "record",
        "position",
        "group",
    }
)
_WORD_SPLIT = re.compile(r"[_\W]+")


def names_batch(name: str) -> bool:
    """Whether an identifier names per-example data (``batch_rows``, ``datums_D``, ``tokens``)."""
    for word in _WORD_SPLIT.split(name.lower()):
        if word in _BATCH_WORDS or word[:-1] in _BATCH_WORDS or word[:-2] in _BATCH_WORDS:
            return True
        if word.endswith("ies") and word[:-3] + "y" in _BATCH_WORDS:
            return True
    return False


def loop_iterables(loop: LoopInfo) -> Iterator[cst.BaseExpression]:
    """What a ``for`` loop or a comprehension iterates over (every ``for`` clause of it)."""
    node = loop.node
    if isinstance(node, cst.For):
        yield node.iter
    elif isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            yield clause.iter
            clause = clause.inner_for_in


def iterates_array(model: SemanticModel, loop: LoopInfo) -> cst.BaseExpression | None:
    """The iterable, if ``loop`` iterates a numpy array or torch tensor element by element."""
    for iterable in loop_iterables(loop):
        if any(t.kind is Kind.ARRAY for t in model.types(iterable, loop.scope)):
            return iterable
    return None


def iterates_batch_array(model: SemanticModel, loop: LoopInfo) -> cst.BaseExpression | None:
    """The iterable, if ``loop`` iterates per-example data held in an array (``for lp in
    logprobs``): a Python loop over its elements. ``for i in np.linspace(0, n, 4)`` is not."""
    iterable = iterates_array(model, loop)
    if iterable is None or _small(iterable):
        return None
    if any(names_batch(key.rsplit(".", 1)[-1]) for key in names_read(model, iterable)):
        return iterable
    return None


_SMALL = 16  # a loop over at most this many items (``groups[:2]``, ``range(4)``) is bookkeeping
_PASS_THROUGH = frozenset({"enumerate", "reversed", "sorted", "list", "tuple", "iter"})


def _unwrap(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """``enumerate(xs)``, ``sorted(xs)`` -> ``xs``."""
    while (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value in _PASS_THROUGH
        and iterable.args
    ):
        iterable = iterable.args[0].value
    return iterable


def _dict_view(iterable: cst.BaseExpression) -> bool:
    """``batch.items()``, ``metrics.values()``: the keys of a mapping (a batch's columns, metric
    names), not the elements of a batch."""
    iterable = _unwrap(iterable)
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in ("items", "keys", "values")
    )


def _small(iterable: cst.BaseExpression) -> bool:
    """A loop bounded by a small literal: ``xs[:2]``, ``range(4)``, ``enumerate(xs[1:3])``."""
    iterable = _unwrap(iterable)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        if iterable.func.value == "range" and len(iterable.args) == 1:
            bound = iterable.args[0].value
            return isinstance(bound, cst.Integer) and int(bound.value, 0) <= _SMALL
        return False
    if isinstance(iterable, cst.Subscript) and len(iterable.slice) == 1:
        part = iterable.slice[0].slice
        if isinstance(part, cst.Slice) and part.step is None:
            lower = part.lower
            upper = part.upper
            if isinstance(upper, cst.Integer) and (lower is None or isinstance(lower, cst.Integer)):
                start = int(lower.value, 0) if isinstance(lower, cst.Integer) else 0
                return 0 <= int(upper.value, 0) - start <= _SMALL
    if isinstance(iterable, cst.List | cst.Tuple | cst.Set):
        return len(iterable.elements) <= _SMALL
    return False


def element_loop(
    model: SemanticModel, loops: tuple[LoopInfo, ...], hot: HotContext
) -> LoopInfo | None:
    """The innermost of ``loops`` (all inside one step of ``hot``) that runs once per element of a
    batch: it iterates per-example data by name, the hot loop's own item or what the step submits,
    and is not bounded by a small literal (``groups[:2]``)."""
    if not loops:
        return None
    step_names = _step_data_names(hot, loops[0].function)
    for loop in reversed(loops):
        for iterable in loop_iterables(loop):
            if _small(iterable) or _dict_view(iterable):
                continue
            reads = names_read(model, iterable)
            if reads & step_names or any(names_batch(key.rsplit(".", 1)[-1]) for key in reads):
                return loop
    return None


def _step_data_names(hot: HotContext, function: FunctionInfo | None) -> set[str]:
    """In the hot loop's own function: its target (``for batch in loader``) and the names its
    submit sends (``forward_backward(datums, ...)``)."""
    names: set[str] = set()
    node = hot.loop.node
    if hot.loop.function is function and isinstance(node, cst.For):
        names |= target_keys(node.target)
    if hot.submit.function is function:
        names |= {
            arg.value.value for arg in hot.submit.node.args if isinstance(arg.value, cst.Name)
        }
    return names
