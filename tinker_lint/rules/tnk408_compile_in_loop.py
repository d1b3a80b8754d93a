"""TNK408 compile-in-loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step


class CompileInLoop(Rule):
    code = "TNK408"
    name = "compile-in-loop"
    level = "warning"
    needs_tinker = False
    summary = "Compile once, before the loop: `torch.compile` on every step recompiles (or re-guards) every time"
    message = "`{call}` is called on every step, {in_step}"
    help = (
        "It runs {every_torch_step}, and each call builds and traces a new compiled callable: "
        "compile once, before the loop"
    )
    why = """
`torch.compile(fn)` returns a new compiled callable; calling it inside the training loop builds
and traces it again on every step (pytorch/ao #2500: `torch.compile` inside the optimizer step on
every call, "it can not start training"). Compile the model or function once, before the loop, and
call the compiled one. Reported on every step of a torch training loop or in a function it calls;
not a compile behind a one-time check (`if compiled is None:`), which runs once.
"""
    fix_description = "Move `torch.compile(...)` before the loop and keep the compiled callable."
    INVALID = (
        Example(
            """\
import torch

for batch in loader:
    step_fn = torch.compile(train_step)
    loss = step_fn(batch)
    loss.backward()
    optimizer.step()
""",
            expect=((4, 15),),
        ),
    )
    VALID = (
        Example(
            """\
import torch

step_fn = torch.compile(train_step)
for batch in loader:
    loss = step_fn(batch)
    loss.backward()
    optimizer.step()
"""
        ),
    )

    prefilter = Needs(
        text=(words({"compile"}), TORCH_STEP, TORCH_STEP_RECEIVER), tree=(lambda s: s.torch_step,)
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model

        def found(site: CallSite) -> bool | None:
            compiles = model.qualify(site.node.func, site.scope) == "torch.compile"
            return (compiles and not _once(model, site)) or None

        for site, _, step in calls_on_every_step(ctx, found):
            yield self.finding(
                site.node,
                call=f"{code_of(model, site.node.func)}()",
                in_step=in_torch_step(ctx, step),
                every_torch_step=every_torch_step(ctx, step),
            )


def _once(model: SemanticModel, site: CallSite) -> bool:
    """Behind ``if compiled is None:`` / ``if not compiled:``: runs once."""
    for node in model.dataflow.enclosing(site.node, (cst.FunctionDef, cst.For, cst.While)):
        if isinstance(node, cst.If):
            test = node.test
            if isinstance(test, cst.Comparison) and any(
                isinstance(c.operator, cst.Is)
                and isinstance(c.comparator, cst.Name)
                and c.comparator.value == "None"
                for c in test.comparisons
            ):
                return True
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                return True
    return False
