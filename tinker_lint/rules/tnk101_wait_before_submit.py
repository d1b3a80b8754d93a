"""TNK101 wait-before-submit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

import libcst as cst

from tinker_lint.model.flow import Submit, Wait, waited_text
from tinker_lint.model.imports import dotted_name
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
        "Waiting for {waited} before submitting `{submit}`, which does not need its result: "
        "submit `{submit}` first, then wait for both ({reason})"
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

Sampling requests are not ordered: a `SamplingClient` runs them concurrently, so a `sample` or
`compute_logprobs` waited for before the next sampling request is submitted costs a whole round
trip, and the message says so. The same holds between requests of different clients, or a
sampling and a training request: they are independent, and their round trips can overlap. Inside a
loop, a sampling wait whose iterations are independent is TNK103's finding instead (more specific:
it says how to fan the loop out).

The rule reports a wait on a Tinker future when the next request submitted after it, on every
path through the function or loop body, does not use the result. It stays quiet when the next
request needs the result (data or control dependence), and when the next request is a save
(`save_state`, `save_weights_for_sampler`, `save_weights_and_get_sampling_client`) that ends an RL
step.

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
            expect=((5, 66),),
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
    sees_helpers = True
    prefilter = TINKER & Needs(text=(STEP_METHODS,), tree=(lambda s: s.wait_then_submit,))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        # Only a body that submits something can wait before a submit; its calls are known (a
        # function's call sites include those of classes inside it, not of nested functions), so
        # the others are not walked.
        submitting = {
            id(site.function.node) if site.function is not None else None
            for site in model.calls
            if model.roles_submitted_by_call(site.node, site.scope)
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
                if any(p.dependent or Role.SAVE in p.submit.roles for p in group):
                    continue
                submit = group[0].submit
                # A helper's wait is reported at its call, and moved by hand: no fix.
                fix = (
                    None
                    if wait.helper is not None
                    else partial(plan_move_wait, ctx, wait, scope, [p.submit.node for p in group])
                )
                yield self.finding(
                    wait.anchor,
                    fix,
                    waited=waited_text(wait, ctx.path),
                    submit=submit.name,
                    reason=_reason(wait, submit),
                )


# Why submitting first and waiting for both is right, by what is waited for and what is submitted.
IN_ORDER = "requests run in submission order; `tinker_cookbook.supervised.train` pipelines this"
CONCURRENT = "sampling requests are not ordered: they run concurrently, and the round trips overlap"
INDEPENDENT = "the two requests are independent: their round trips overlap"
_ONE_QUEUE = (Role.TRAIN, Role.SAVE)  # requests of a TrainingClient: one queue, in order


def _reason(wait: Wait, submit: Submit) -> str:
    """The true reason for one finding: a training client's requests run in submission order;
    sampling requests, and requests of two different clients, are not ordered at all."""
    roles = {t.method.role for t in wait.futures if t.method is not None}
    submitted = submit.roles
    if roles and roles <= {Role.SAMPLE} and submitted and submitted <= {Role.SAMPLE}:
        return CONCURRENT
    if roles and roles <= set(_ONE_QUEUE) and submitted and submitted <= set(_ONE_QUEUE):
        clients = {_receiver(t.origin) for t in wait.futures} | {_receiver(submit.node)}
        # Known to be two clients (a policy and its critic): their queues are not one.
        return INDEPENDENT if None not in clients and len(clients) > 1 else IN_ORDER
    return INDEPENDENT


def _receiver(call: cst.CSTNode | None) -> str | None:
    """The client a submit is made on, as written (``self.policy`` in ``self.policy.sample(...)``),
    or None when it is not a plain dotted name."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return dotted_name(call.func.value)
    return None
