"""What the TNK4xx rules share: saying which training step a place runs on every iteration of."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import libcst as cst

from tinker_lint.model.query import CallSite, LoopInfo, SemanticModel, TorchStep, place
from tinker_lint.rules.base import Context

T = TypeVar("T")


def calls_on_every_step(
    ctx: Context, found: Callable[[CallSite], T | None]
) -> Iterator[tuple[CallSite, T, TorchStep]]:
    """Each call ``found`` answers (asked first: it is the cheap question; None: not this rule's
    call) that runs on every step of a torch training loop, with the answer and that step."""
    steps = ctx.model.torch_steps
    for site in ctx.model.calls:
        what = found(site)
        if what is None:
            continue
        step = steps.step_of(site)
        if step is not None:
            yield site, what, step


def every_torch_step(ctx: Context, step: TorchStep) -> str:
    """ "on every step of the training loop on line 12", "..., in `log_metrics()`, which the loop
    calls", or "on every step of the training loop (`training_step()` runs once per step)"."""
    if step.loop is not None:
        via = f", in `{step.via.name}()`, which the loop calls" if step.via is not None else ""
        return f"on every step of the training loop on line {ctx.line_of(step.loop.node)}{via}"
    hook = step.hook
    name = hook.name if hook is not None else "the hook"
    return f"on every step of the training loop (`{name}()` runs once per step)"


def in_torch_step(ctx: Context, step: TorchStep) -> str:
    """``every_torch_step`` in a few words, for a message: "in the training loop on line 12", "in
    `log_metrics()` (training loop on line 12)", or "in `training_step()` (once per step)"."""
    if step.loop is not None:
        line = ctx.line_of(step.loop.node)
        if step.via is not None:
            return f"in `{step.via.name}()` (training loop on line {line})"
        return f"in the training loop on line {line}"
    hook = step.hook
    name = hook.name if hook is not None else "the hook"
    return f"in `{name}()` (once per step)"


def loop_step(model: SemanticModel, loop: LoopInfo) -> TorchStep | None:
    """The torch step a (not itself stepping) loop runs on every iteration of, or None: asked as
    of a call standing where the loop starts (``torch_steps.place``: its enclosing loops, cadence
    guards and function, which is all ``step_of`` reads of a call)."""
    return model.torch_steps.step_of(place(model, _place(model, loop)))


def _place(model: SemanticModel, loop: LoopInfo) -> cst.CSTNode:
    """Where to ask from: the loop, or the outermost ``with`` block between it and the loop
    around it. A ``with torch.no_grad():`` block inside a training loop (an EMA update after
    ``optimizer.step()``) runs on every step; it is not eval-only code."""
    if loop.parent is None:
        return loop.node
    place: cst.CSTNode = loop.node
    for node in model.dataflow.enclosing(loop.node, below=loop.parent.node):
        if isinstance(node, cst.With):
            place = node
    return place
