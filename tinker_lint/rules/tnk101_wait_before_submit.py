"""TNK101 wait-before-submit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

import libcst as cst

from tinker_lint.model.flow import Wait
from tinker_lint.model.pipeline import WaitThenSubmit, waits_and_next_submits
from tinker_lint.model.sdk import Role
from tinker_lint.model.semantic import Scope
from tinker_lint.prefilter.mentions import STEP_METHODS, TINKER
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk101 import plan_move_wait


class WaitBeforeSubmit(Rule):
    code = "TNK101"
    name = "wait-before-submit"
    level = "error"
    summary = (
        "Submit the next request before waiting: a TrainingClient runs requests in submission "
        "order, so `optim_step` never needs the `forward_backward` result"
    )
    message = (
        "Waiting for `{waited}` before submitting `{submit}`, which does not need its result: "
        "submit `{submit}` first, then wait for both (requests run in submission order; "
        "`tinker_cookbook.supervised.train` pipelines this)"
    )
    why = """\
Tinker assigns training requests to clock cycles when they are submitted. Waiting for
`forward_backward(...)` before submitting `optim_step(...)` leaves the server idle for a round trip
and can push the update into a later cycle. Every `TrainingClient` call reserves its place in the
queue when it is made (`training_client.py` L210-263 in tinker 0.38), so the optimizer step can be
submitted at once and both results awaited afterwards.

Evidence: OpenPipe/ART PR #781 moved `optim_step` before the wait and measured a 1.106x paired
median speedup (0.54 s saved per update, tinker 0.23.4, 20 paired trials); tinker-cookbook PR #884
made the same fix in its DPO loop.

`tinker_cookbook.supervised.train` pipelines this for you.

The rule reports a wait on a Tinker future when the next request submitted after it, on every
path through the function or loop body, does not use the result. It stays quiet when the next
request needs the result (data or control dependence), and when the next request is a save
(`save_state`, `save_weights_for_sampler`, `save_weights_and_get_sampling_client`) that ends an RL
step. The result counts as needed also through a list a loop fills from it (whatever the loop
skips or breaks on), and through a loss function handed to `forward_backward_custom` (a closure,
a lambda or a bound method) that reads it or the attribute it was stored in. A request made in an
`except` branch (a retry, a fallback) is not the next request of a wait in the `try`: it runs
because that wait failed.

Not reported either: a wait under a cadence guard (`if step % eval_every == 0:`, a test naming
`log_every`, `save_interval`, `should_eval`..., or a name listed in `cadence-names`), even when a
submit follows it. Such a wait runs once every N steps, so it costs one round trip per N steps,
and moving it would change what the occasional branch reports.
"""
    fix_description = (
        "Move the wait after the next submit when it is a simple statement of the same block "
        "(splitting `r = tc.forward_backward(b).result()` into a future and a later wait). "
        "Unsafe when the wait sits in a `try` whose handler may skip the step, or its result is "
        "read by other functions; no fix when anything in between reads the result."
    )
    autofix = Autofix("Move the wait after the next submit", plan_move_wait)
    INVALID = (
        Example(
            """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
""",
            expect=((5, 14),),
            fixed="""\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result_future = tc.forward_backward(batch, loss_fn="cross_entropy")
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
    result = result_future.result()
""",
        ),
    )
    VALID = (
        Example(
            """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
    opt = tc.optim_step(tinker.AdamParams(learning_rate=1e-4))
    result = fwd.result()
    opt.result()
"""
        ),
    )

    # A wait before a training or sampling submit (one before a save is never reported).
    prefilter = TINKER & Needs(text=(STEP_METHODS,), tree=(lambda s: s.wait_then_submit,))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        # Only a body that submits something can wait before a submit; its calls are known (a
        # function's call sites include those of classes inside it, not of nested functions), so
        # the others are not walked.
        submitting = {
            id(site.function.node) if site.function is not None else None
            for site in model.calls
            if model.submit_of(site.node, site.scope) is not None
        }
        bodies: list[tuple[Sequence[cst.CSTNode], Scope]] = []
        if None in submitting:
            bodies.append((model.module.body, model.module_scope))
        for function in model.functions:
            body = function.node.body
            if isinstance(body, cst.IndentedBlock) and id(function.node) in submitting:
                bodies.append((body.body, function.scope))
        for statements, scope in bodies:
            pairs, guarded = waits_and_next_submits(model, statements, scope)
            by_wait: dict[int, list[WaitThenSubmit]] = {}
            for pair in pairs:
                by_wait.setdefault(id(pair.wait.node), []).append(pair)
            for group in by_wait.values():
                wait: Wait = group[0].wait
                if id(wait.node) in guarded:
                    continue
                if any(p.dependent or p.submit.call.method.role is Role.SAVE for p in group):
                    continue
                submit = group[0].submit.call.method.plain_name
                waited = ", ".join(sorted(wait.methods)) or "a Tinker request"
                yield self.finding(
                    wait.node,
                    partial(plan_move_wait, ctx, wait, scope, [p.submit.node for p in group]),
                    waited=waited,
                    submit=submit,
                )
