"""Loops over a batch: which loops run once per element of the step's data (``for datum in
batch``), and which iterate an array element by element. Naming heuristics only; which loop is the
step is ``steps.py``'s question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.flow import names_read
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.scopes import CallSite, LoopInfo
from tinker_lint.model.facts.types import Kind

if TYPE_CHECKING:
    from tinker_lint.model.analyses.steps import StepContext
    from tinker_lint.model.analyses.view import ModelView

# What one example is called (``datum``, ``sequence``, ``prompt``); the cost shape (``cost.py``)
# tells a loop over examples from one over the tokens of one example with it, names last.
EXAMPLE_WORDS = frozenset(
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
        "sample",
        "example",
        "sequence",
        "seq",
        "response",
        "completion",
        "prompt",
        "conversation",
        "message",
        "turn",
        "group",
        "row",
        "record",
        "output",
        "problem",
        "question",
        "env",
        "text",
        "doc",
        "document",
        "sentence",
        "transition",
    }
)

# Words that name per-example data in training code (`batch`, `datums_D`, `sampled_tokens_G_T`,
# `trajectory_groups`, `positions`): a loop over such a value runs once per element of the step.
# A loop over `metrics.items()` or `range(num_substeps)` is bookkeeping and is not one.
_BATCH_WORDS = (
    EXAMPLE_WORDS - {"doc", "document", "env", "problem", "sentence", "text", "turn"}
) | {
    "advantage",
    "convo",
    "logit",
    "logprob",
    "position",
    "reward",
    "token",
}
_WORD_SPLIT = re.compile(r"[_\W]+")


# Names that stand for many examples in the singular: a trajectory's turns, a group's samples
# are each a datum (a ``sequence``, a ``prompt`` are one example, made of tokens).
COLLECTIVE_WORDS = frozenset(
    {
        "batch",
        "minibatch",
        "chunk",
        "data",
        "dataset",
        "group",
        "trajectory",
        "traj",
        "episode",
        "rollout",
        "conversation",
        "convo",
        "dialog",
        "history",
    }
)


def name_words(name: str) -> set[str]:
    """``sampled_tokens_G_T`` -> ``{"sampled", "tokens", "g", "t"}``."""
    return {w for w in _WORD_SPLIT.split(name.lower()) if w}


def names_collection(name: str) -> bool:
    """``batch``, ``prompts``, ``trajectories``, ``rollouts_P``: a name for many examples."""
    words = name_words(name)
    if words & COLLECTIVE_WORDS:
        return True
    return any(
        (w.endswith("s") and w[:-1] in EXAMPLE_WORDS)
        or (w.endswith("ies") and w[:-3] + "y" in EXAMPLE_WORDS)
        for w in words
    )


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


def iterates_array(model: ModelView, loop: LoopInfo) -> cst.BaseExpression | None:
    """The iterable, if ``loop`` iterates a numpy array or torch tensor element by element."""
    for iterable in loop_iterables(loop):
        if any(t.kind is Kind.ARRAY for t in model.types(iterable, loop.scope)):
            return iterable
    return None


def iterates_batch_array(model: ModelView, loop: LoopInfo) -> cst.BaseExpression | None:
    """The iterable, if ``loop`` iterates per-example data held in an array (``for lp in
    logprobs``): a Python loop over its elements. ``for i in np.linspace(0, n, 4)`` is not."""
    iterable = iterates_array(model, loop)
    if iterable is None or small(iterable):
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


def dict_view(iterable: cst.BaseExpression) -> bool:
    """``batch.items()``, ``metrics.values()``: the keys of a mapping (a batch's columns, metric
    names), not the elements of a batch."""
    iterable = _unwrap(iterable)
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in ("items", "keys", "values")
    )


def small(iterable: cst.BaseExpression) -> bool:
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


def is_payload(
    model: ModelView,
    site: CallSite,
    value: cst.BaseExpression,
    hot: StepContext,
    own_item: bool = True,
) -> bool:
    """A per-step payload: what the step submits (``forward_backward(datums, ...)``), the result
    of a Tinker request, the hot loop's own item (with ``own_item``), or a value named like a
    collection of per-example data (``batch``, ``self.rollouts``, ``datums[i]``). Displays
    (``{"step": step, ...}``) and single records (``record``, ``metrics``) are log lines or
    request bodies, not payloads."""
    while isinstance(value, cst.Subscript | cst.Call):
        if isinstance(value, cst.Subscript):
            value = value.value
        elif isinstance(value.func, cst.Attribute):
            value = value.func.value  # ``rollout.to_dict()``
        elif value.args:
            value = value.args[0].value  # ``asdict(rollout)``
        else:
            return False
    dotted = dotted_name(value)
    if dotted is None:
        return False
    parts = dotted.split(".")
    if not hot.via and parts[0] in _step_sends(hot, site):
        return True
    if any(names_collection(part) for part in parts[-2:]):
        return True
    loop = hot.loop.node
    if (
        own_item
        and not hot.via
        and isinstance(loop, cst.For)
        and isinstance(loop.target, cst.Name)
        and parts[0] == loop.target.value
    ):
        return True
    return any(t.kind is Kind.RESULT for t in model.types(value, site.scope))


def _step_sends(hot: StepContext, site: CallSite) -> set[str]:
    """The names the step's submit sends (``forward_backward(datums, ...)``), when ``site`` is in
    the submit's own function: the step's data itself."""
    submit = hot.submit
    if submit.function is not site.function:
        return set()
    values = [arg.value for arg in submit.node.args]
    return {value.value for value in values if isinstance(value, cst.Name)}
