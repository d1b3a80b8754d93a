"""TNK407 tensor-built-then-moved."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from tinker_lint.model.query import CallSite, SemanticModel, has_keyword
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk407 import plan_device_argument
from tinker_lint.rules.hotloop import code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step

# Factories that build a tensor from sizes or constants: with ``device=`` they build it in place.
_FACTORIES = frozenset(
    {
        "torch.zeros",
        "torch.ones",
        "torch.full",
        "torch.empty",
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.arange",
        "torch.eye",
        "torch.tensor",
    }
)


class TensorBuiltThenMoved(Rule):
    code = "TNK407"
    name = "tensor-built-then-moved"
    level = "note"
    needs_tinker = False
    summary = (
        "Create tensors on the device they are used on (`device=`): building on the CPU and "
        "moving with `.to(device)` every step adds a host-to-device copy"
    )
    message = "`{call}` builds on the CPU, then copies to the device, {in_step}"
    help = (
        "It runs {every_torch_step}: an allocation in host memory and a host-to-device copy each "
        "time: pass `device=` to build it on the device"
    )
    why = """
`torch.zeros(n).to(device)` allocates and fills the tensor in host memory, then copies it to the
GPU: an extra allocation and a host-to-device transfer on every step. `torch.zeros(n,
device=device)` builds it where it is used (PyTorch tuning guide, "Create tensors directly on the
target device"; the profiler's `ExtraCUDACopyPattern` flags exactly this). The CPU side of the two
forms costs the same (`docs/torch-costs.md`: 0.27-0.30 us per float either way); the copy cannot
be measured without a GPU.

Reported when a constant factory (`torch.zeros`, `ones`, `full`, `empty`, `rand*`, `arange`,
`eye`) or `torch.tensor` of a literal is moved with `.to(...)`/`.cuda()` in the same expression, on
every step of a torch training loop. Not: `torch.tensor(x)` of data that lives on the CPU (an
environment's output, token ids from a tokenizer, a list built in the loop), a factory with
`device=` already, or work outside the loop.
"""
    fix_description = (
        "Pass the device to the factory: `torch.zeros(n, device=device)`. `--fix` does it: "
        "`torch.zeros(n).to(dev)` becomes `torch.zeros(n, device=dev)`, `.cuda()` becomes "
        '`device="cuda"`, a dtype passed to `.to()` moves to `dtype=` for `zeros`, `ones`, '
        "`empty` and `eye`. It is an unsafe fix for the random factories (the device's "
        "generator gives other numbers for the same seed) and for a device the module does not "
        "show to be one (`.to(x)` also takes a dtype or a tensor); there is no fix when `.to()` "
        "passes other arguments (`non_blocking=True`)."
    )
    autofix = Autofix("Pass `device=` to the factory instead of `.to()`", plan_device_argument)
    INVALID = (
        Example(
            """\
import torch

for batch in loader:
    mask = torch.ones(len(batch)).to("cuda")
    model(batch, mask).loss.backward()
    optimizer.step()
""",
            expect=((4, 12),),
            fixed="""\
import torch

for batch in loader:
    mask = torch.ones(len(batch), device="cuda")
    model(batch, mask).loss.backward()
    optimizer.step()
""",
        ),
    )
    VALID = (
        Example(
            """\
import torch

for batch in loader:
    mask = torch.ones(len(batch), device="cuda")
    model(batch, mask).loss.backward()
    optimizer.step()
"""
        ),
    )

    prefilter = Needs(
        text=(words({"to", "cuda"}), TORCH_STEP, TORCH_STEP_RECEIVER),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        found = partial(built_then_moved, model)
        for site, built, step in calls_on_every_step(ctx, found):
            qualified = model.qualify(built.func, site.scope) or ""
            yield self.finding(
                site.node,
                partial(plan_device_argument, model, site, built, qualified),
                call=f"{code_of(model, built.func)}()",
                in_step=in_torch_step(ctx, step),
                every_torch_step=every_torch_step(ctx, step),
            )


def built_then_moved(model: SemanticModel, site: CallSite) -> cst.Call | None:
    """The factory call of ``factory(...).to(dev)`` / ``factory(...).cuda()``, if it is one."""
    func = site.node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
        return None
    inner = func.value
    if not isinstance(inner, cst.Call):
        return None
    qualified = model.qualify(inner.func, site.scope)
    if qualified not in _FACTORIES:
        return None
    if has_keyword(inner, "device"):
        return None
    if qualified == "torch.tensor" and not (
        inner.args
        and isinstance(inner.args[0].value, cst.List | cst.Tuple | cst.Integer | cst.Float)
    ):
        return None  # ``torch.tensor(rewards)``: data that lives on the CPU
    if func.attr.value == "to" and not site.node.args:
        return None
    return inner
