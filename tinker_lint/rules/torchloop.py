"""What the TNK4xx rules share: saying which training step a place runs on every iteration of."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tinker_lint.model.semantic import CallSite
from tinker_lint.model.torch_steps import TorchStep
from tinker_lint.rules.base import Context


def calls_on_every_step(
    ctx: Context, wanted: Callable[[CallSite], bool]
) -> Iterator[tuple[CallSite, TorchStep]]:
    """The calls ``wanted`` keeps (asked first: it is the cheap question) that run on every step
    of a torch training loop, each with that step."""
    steps = ctx.model.torch_steps
    for site in ctx.model.calls:
        if not wanted(site):
            continue
        step = steps.of_call(site)
        if step is not None:
            yield site, step


def every_torch_step(ctx: Context, step: TorchStep) -> str:
    """ "on every step of the training loop on line 12", "..., in `log_metrics()`, which the loop
    calls", or "on every step of the training loop (`training_step()` runs once per step)"."""
    if step.loop is not None:
        via = f", in `{step.via.name}()`, which the loop calls" if step.via is not None else ""
        return f"on every step of the training loop on line {ctx.line_of(step.loop.node)}{via}"
    hook = step.hook
    name = hook.name if hook is not None else "the hook"
    return f"on every step of the training loop (`{name}()` runs once per step)"
