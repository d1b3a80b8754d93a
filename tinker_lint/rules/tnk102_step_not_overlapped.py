"""TNK102 step-not-overlapped."""

from __future__ import annotations

from collections.abc import Iterator

from tinker_lint.model.pipeline import loop_waits, refreshes_sampling_client
from tinker_lint.model.sdk import Role
from tinker_lint.prefilter.mentions import TINKER, methods
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule


class StepNotOverlapped(Rule):
    code = "TNK102"
    name = "step-not-overlapped"
    level = "error"
    summary = (
        "Keep the next step in flight before waiting: submit step i+1, then wait for step i, as "
        "`tinker_cookbook.supervised.train` does"
    )
    message = (
        "Each step waits for its own results before the next step is submitted, and the next "
        "step does not need them: submit step i+1, then wait for step i (as "
        "`tinker_cookbook.supervised.train` does)"
    )
    why = """\
A training loop that submits a step and then waits for that step's results before the loop moves on
leaves the server idle between steps: nothing is queued while the client turns the result into a log
line and builds the next batch. When the next iteration does not need the result (it is only logged),
submit the next step first and wait for the previous one afterwards. tinker-cookbook PR #41 made
`supervised/train.py` do exactly this (`submit_ahead`), and `tinker_cookbook.supervised.train` runs the
pipelined loop for you.

Not reported: loops that sample from a client refreshed in the loop (on-policy RL, where the wait is
inherent), waits whose result the next iteration needs (data or control dependence, e.g. early
stopping), waits under a cadence guard (a checkpoint every N steps), and retry loops, which are
left once the step succeeds (the next attempt runs only when this one failed).
"""
    fix_description = """\
Keep the futures of step i and wait for them after submitting step i+1: hold them in a variable
(`pending`) across iterations, wait for the previous step's futures once the new step is
submitted, and wait for the last step's after the loop. Or let
`tinker_cookbook.supervised.train` run the loop, which pipelines steps this way
(`submit_ahead`)."""
    INVALID = (
        Example(
            """\
for batch in batches:
    fwd = training_client.forward_backward(batch, loss_fn="cross_entropy")
    opt = training_client.optim_step(adam)
    print(fwd.result().loss)
    opt.result()
""",
            expect=((4, 11),),
        ),
    )
    VALID = (
        Example(
            """\
def finish(step):
    fwd, opt = step
    print(fwd.result().loss)
    opt.result()


pending = None
for batch in batches:
    fwd = training_client.forward_backward(batch, loss_fn="cross_entropy")
    opt = training_client.optim_step(adam)
    if pending is not None:
        finish(pending)  # step i, once step i+1 is submitted
    pending = (fwd, opt)
if pending is not None:
    finish(pending)  # the last step
"""
        ),
    )

    prefilter = TINKER & Needs(
        text=(methods(lambda method: method.role is Role.TRAIN),),
        tree=(lambda s: Role.TRAIN in s.called_roles and s.waits and s.submit_loop,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        reported: set[int] = set()
        for loop in model.loops:
            if loop.is_comprehension or refreshes_sampling_client(model, loop):
                continue
            if Role.TRAIN not in model.loop_submit_roles(loop):
                continue
            for item in loop_waits(model, loop):
                if (
                    item.fresh
                    and Role.TRAIN in item.roles
                    and not item.submitted_after
                    and not item.needed_next
                    and not item.branches_on_result
                    and not item.guarded
                    and not item.loop_gated
                ):
                    if id(item.wait.node) not in reported:
                        reported.add(id(item.wait.node))
                        yield self.finding(item.wait.node)
                    break
