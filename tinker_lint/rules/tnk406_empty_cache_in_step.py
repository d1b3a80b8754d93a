"""TNK406 empty-cache-in-step."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step

_EMPTY_CACHE = frozenset(
    {"torch.cuda.empty_cache", "torch.mps.empty_cache", "torch.accelerator.memory.empty_cache"}
)


class EmptyCacheInStep(Rule):
    code = "TNK406"
    name = "empty-cache-in-step"
    level = "warning"
    needs_tinker = False
    summary = (
        "Do not empty the CUDA cache on every step: it synchronises every GPU and makes the next "
        "allocations go back to `cudaMalloc`"
    )
    message = "`{call}` empties the allocator's cache {in_step}"
    help = (
        "It runs {every_torch_step}: it synchronises the device and makes the next allocations go "
        "back to `cudaMalloc`: remove it, or call it every N steps or between phases "
        "(`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` for fragmentation)"
    )
    why = """
`torch.cuda.empty_cache()` "doesn't increase the amount of GPU memory available for PyTorch"
(PyTorch docs): it hands the allocator's cached blocks back to the driver. Each call synchronises
the device (`cudaFree`), and the next step's allocations go back to `cudaMalloc`. Lightning's speed
guide: "Don't call `torch.cuda.empty_cache` unnecessarily! Every time you call this, ALL your GPUs
have to wait to sync." mmengine's `EmptyCacheHook` defaults to once per epoch, never per iteration.
No per-step figure could be measured here (no GPU); the cost is a guaranteed sync plus allocator
churn on every step.

Reported on every step of a torch training loop (or a micro-batch loop inside one). Not under a
cadence guard (`if step % 100 == 0:`), after the loop or between phases (after generation, at the
end of an epoch), or in an `except torch.cuda.OutOfMemoryError:` handler.
"""
    fix_description = (
        "Remove it, or call it every N steps or between phases; for fragmentation with variable "
        "shapes, set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`."
    )
    INVALID = (
        Example(
            """\
import torch

for batch in loader:
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    torch.cuda.empty_cache()
""",
            expect=((7, 5),),
        ),
    )
    VALID = (
        Example(
            """\
import torch

for step, batch in enumerate(loader):
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    if step % 100 == 0:
        torch.cuda.empty_cache()
torch.cuda.empty_cache()
"""
        ),
    )

    prefilter = Needs(
        text=(words({"empty_cache"}), TORCH_STEP, TORCH_STEP_RECEIVER),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model

        def found(site: CallSite) -> bool | None:
            return (empties_cache(model, site) and not in_oom_handler(model, site)) or None

        for site, _, step in calls_on_every_step(ctx, found):
            yield self.finding(
                site.node,
                call=code_of(model, site.node),
                in_step=in_torch_step(ctx, step),
                every_torch_step=every_torch_step(ctx, step),
            )


def empties_cache(model: SemanticModel, site: CallSite) -> bool:
    func = site.node.func
    if model.qualify(func, site.scope) in _EMPTY_CACHE:
        return True
    # DeepSpeed: ``get_accelerator().empty_cache()``.
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "empty_cache"
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "get_accelerator"
    )


def in_oom_handler(model: SemanticModel, site: CallSite) -> bool:
    """In an ``except`` handler of its function (``except torch.cuda.OutOfMemoryError:``)."""
    return any(
        isinstance(node, cst.ExceptHandler)
        for node in model.dataflow.enclosing(site.node, cst.FunctionDef)
    )
