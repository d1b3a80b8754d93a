"""TNK102 step-not-overlapped."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import (
    Role,
    Wait,
    accumulation_waits,
    linear_steps,
    loop_waits,
    occasional_sampler_refresh,
    refreshes_sampling_client,
)
from tinker_lint.prefilter.mentions import TINKER, methods
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule

# Why the next step does not need the update, when the loop refreshes its sampler only under a
# cadence guard: the steps in between sample from the old weights.
STALE_SAMPLER = (
    " (the sampler is refreshed only every few steps, at line {}: the others sample from the "
    "old weights)"
)


class StepNotOverlapped(Rule):
    code = "TNK102"
    name = "step-not-overlapped"
    level = "error"
    # The step's own wait at its end, also followed (on some steps) by an occasional request:
    # the wrap-around is the diagnosis, and its fix (keep the next step in flight) covers both.
    supersedes = ("TNK101",)
    summary = (
        "Keep the next step in flight before waiting: submit step i+1, then wait for step i, as "
        "`tinker_cookbook.supervised.train` does"
    )
    # ``stale``: empty, or ``STALE_SAMPLER`` when the sampler is refreshed only every N steps.
    message = "Each step waits for its own results before the next is submitted{through}"
    # ``as_trainer``: the cookbook trainer that pipelines this kind of loop, if one does.
    help = (
        "The next step does not need them{stale}: submit step i+1, then wait for step i{as_trainer}"
    )
    why = """\
A training loop that submits a step and then waits for that step's results before the loop moves on
leaves the server idle between steps: nothing is queued while the client turns the result into a log
line and builds the next batch. When the next iteration does not need the result (it is only logged),
submit the next step first and wait for the previous one afterwards. tinker-cookbook PR #41 made
`supervised/train.py` do exactly this (`submit_ahead`), and `tinker_cookbook.supervised.train` runs the
pipelined loop for you; for an RL loop (one that samples rollouts and trains on them, or trains
with an RL loss), the help points at `tinker_cookbook.rl.train` instead, and a DPO loop gets no
pointer (the cookbook's `preference.train_dpo` does not pipeline its steps).

Not reported: loops that sample from a client refreshed in the loop on every step (on-policy RL,
where the wait is inherent), waits whose result the next iteration needs (data or control
dependence, e.g. early stopping), waits under a cadence guard (a checkpoint every N steps), and
retry loops, which are left once the step succeeds (the next attempt runs only when this one
failed). A sampler refreshed only every N steps (under a cadence guard) leaves the other steps
sampling from the old weights: that loop is reported, and the help says so.
Through helpers: a step loop that calls a function of the project once per step (`do_update(...)`)
is judged by what that function does. When its last wait ends the step and the next step does not
need the result, the finding is reported at that wait when the function is in the same module
(naming the loop's call), at the loop's call otherwise. A step whose helper ends by refreshing the
sampler (`save_weights_and_get_sampling_client`) is the on-policy case, and is not reported.
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
            expect=((4, 15),),
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

    sees_helpers = True
    prefilter = TINKER & Needs(
        text=(methods(lambda method: method.role is Role.TRAIN),),
        tree=(lambda s: Role.TRAIN in s.called_roles and s.waits and s.submit_loop,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        reported: set[int] = set()
        for loop in model.loops:
            # The cheap test first (both only skip the loop).
            if loop.is_comprehension or Role.TRAIN not in model.loop_submit_roles(loop):
                continue
            if refreshes_sampling_client(model, loop):
                continue
            # A micro-batch's wait before the ``optim_step`` after the loop is TNK101's.
            accumulated = {id(item.wait.node) for item in accumulation_waits(model, loop)}
            for item in loop_waits(model, loop):
                if id(item.wait.node) in accumulated:
                    continue
                if (
                    item.fresh
                    and Role.TRAIN in item.roles
                    and not item.submitted_after
                    and not item.needed_next
                    and not item.branches_on_result
                    and not item.guarded
                    and not item.loop_gated
                ):
                    helper = item.wait.helper
                    if helper is not None and helper.refreshes_sampler:
                        break  # the step ends refreshing the sampler the next one samples from
                    node, through = _where(ctx, item.wait)
                    if id(node) not in reported:
                        reported.add(id(node))
                        refresh = occasional_sampler_refresh(model, loop)
                        stale = STALE_SAMPLER.format(ctx.line_of(refresh)) if refresh else ""
                        trainer = model.training_kinds.trainer(node)
                        as_trainer = f" (as `{trainer}` does)" if trainer else ""
                        yield self.finding(
                            node, through=through, stale=stale, as_trainer=as_trainer
                        )
                    break


def _where(ctx: Context, wait: Wait) -> tuple[cst.CSTNode, str]:
    """Where the step's last wait is reported: at the wait; for a step made by a function of this
    module, at that function's last wait (the one to move), naming the loop's call; for one in
    another module, at the call."""
    helper = wait.helper
    if helper is None:
        return wait.anchor, ""
    model = ctx.model
    line = ctx.line_of(wait.node)
    function = model.helpers.summaries.function_of(helper)
    if function is not None and isinstance(function.node.body, cst.IndentedBlock):
        # Its last wait, when nothing is submitted after it in the function (then it is where
        # the step ends waiting); else the loop's call is where the step waits.
        last: Wait | None = None
        for step in linear_steps(model, function.node.body.body, function.scope):
            if step.guarded:
                continue
            for event in step.events:
                # A request after a wait: the step does not end waiting there.
                last = event if isinstance(event, Wait) else None
        if last is not None:
            return last.anchor, f" (in `{helper.name}()`, called at line {line})"
    site = helper.last_wait
    where = f", at {site.where(ctx.path)}" if site is not None else ""
    return wait.node, f" (in `{helper.name}()`{where})"
