"""TNK101 wait-before-submit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

import libcst as cst

from tinker_lint.model.query import (
    Role,
    Scope,
    Submit,
    Wait,
    WaitThenSubmit,
    accumulation_waits,
    helper_wait_text,
    is_save,
    occasional_save,
    refreshes_sampler,
    separate_clients,
    waited_text,
    waits_and_next_submits,
)
from tinker_lint.prefilter.mentions import STEP_METHODS, TINKER
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk101 import plan_move_wait


# Why submitting first is safe: one client's requests run in submission order (and the cookbook's
# trainer for this kind of loop, if one does, pipelines them); two clients' requests are not
# ordered with each other at all.
def one_client(trainer: str | None) -> str:
    pipelined = f"; `{trainer}` pipelines this" if trainer else ""
    return f"requests run in submission order{pipelined}"


TWO_CLIENTS = "`{}` and `{}` are separate clients: neither's requests wait for the other's"
# The save that refreshes the sampler runs only every few steps (at line {}): on the other steps
# the next step samples from the old weights and does not need this step's update.
STALE_SAMPLER = (
    "the sampler is refreshed only every few steps, at line {}: the other steps sample from the "
    "old weights"
)


class WaitBeforeSubmit(Rule):
    code = "TNK101"
    name = "wait-before-submit"
    level = "error"
    summary = (
        "Submit the next request before waiting: a TrainingClient runs requests in submission "
        "order, so `optim_step` never needs the `forward_backward` result"
    )
    message = "Waiting for {waited} before submitting `{submit}`, which does not need it"
    help = "{through}Submit `{submit}` first, then wait for both ({reason})"
    why = """\
Tinker assigns training requests to clock cycles when they are submitted. Waiting for
`forward_backward(...)` before submitting `optim_step(...)` leaves the server idle for a round trip
and can push the update into a later cycle. Every `TrainingClient` call reserves its place in the
queue when it is made (`training_client.py` L210-263 in tinker 0.38), so the optimizer step can be
submitted at once and both results awaited afterwards.

Evidence: OpenPipe/ART PR #781 moved `optim_step` before the wait and measured a 1.106x paired
median speedup (0.54 s saved per update, tinker 0.23.4, 20 paired trials); tinker-cookbook PR #884
made the same fix in its DPO loop.

`tinker_cookbook.supervised.train` pipelines this for you, and `tinker_cookbook.rl.train` for a
loop that samples rollouts and trains on them (or trains with an RL loss such as
`"importance_sampling"` or `"ppo"`): the help points at the one that fits the loop. A DPO loop gets
no pointer: the cookbook's `preference.train_dpo` (0.6.1) waits for `forward_backward_custom` too.

Sampling requests are not ordered: a `SamplingClient` runs them concurrently, so a `sample` or
`compute_logprobs` waited for before the next sampling request is submitted costs a whole round
trip, and the help says so. The same holds between requests of different clients, or a
sampling and a training request: they are independent, and their round trips can overlap. Inside a
loop, a sampling wait whose iterations are independent is TNK103's finding instead (more specific:
it says how to fan the loop out).

The rule reports a wait on a Tinker future when the next request submitted after it, on every
path through the function or loop body, does not use the result. It stays quiet when the next
request needs the result (data or control dependence), and when the next request is a save
(`save_state`, `save_weights_for_sampler`, `save_weights_and_get_sampling_client`) that ends an RL
step. The result counts as needed also through a list a loop fills from it (whatever the loop
skips or breaks on), and through a loss function handed to `forward_backward_custom` (a closure,
a lambda or a bound method) that reads it or the attribute it was stored in. A request made in an
`except` branch (a retry, a fallback) is not the next request of a wait in the `try`: it runs
because that wait failed.

Two clients are not ordered with each other at all: a PPO policy and its critic (two
TrainingClients), a DPO policy and its reference model (a SamplingClient's `compute_logprobs`).
Waiting for one client's request before the other's independent submit only idles both; the
help says so when the two receivers are plainly different clients. When the next submit uses
the result (the reference logprobs go into the policy's loss), the wait is required.

Gradient accumulation counts too: a loop that submits one `forward_backward` per micro-batch and
waits for each (`for mb in micro_batches: tc.forward_backward(mb, ...).result()`) before the
`optim_step` after the loop idles the server between micro-batches, though neither the next
micro-batch nor (usually) `optim_step` needs the result. Collect the futures, submit `optim_step`,
then wait. When `optim_step` is built from the losses, the finding names the next micro-batch's
`forward_backward` instead. Not reported when the loop decides on a micro-batch's result before
the next submit (a NaN check that breaks or skips).

The save exempts the wait only when it runs on every step. A sampler refreshed only every N
steps (`if step % sync_every == 0: sc = tc.save_weights_and_get_sampling_client(...)`) leaves the
other steps sampling from the old weights: there the next submit, the next sampling request, does
not need the update, and the wait is reported (the help names the line of the refresh).

Not reported either: a wait under a cadence guard (`if step % eval_every == 0:`, a test naming
`log_every`, `save_interval`, `should_eval`..., or a name listed in `cadence-names`), even when a
submit follows it. Such a wait runs once every N steps, so it costs one round trip per N steps,
and moving it would change what the occasional branch reports.
Through helpers: a call of a function of the project (in this module or another one, a method
through `self`, an instance of a project class, a helper that waits on the future it is given) is
judged by what that function does: `result = fwd_bwd(batch)` then `tc.optim_step(...)` is reported
at the call when `fwd_bwd` waits for its `forward_backward`, and the message names the helper, the help
its wait (`steps.py:8`). Such a finding has no automatic fix: the helper has to give back the
future (or be split) so that the caller can submit first.
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
        Example(
            """\
import tinker

def dpo_step(policy, reference: tinker.SamplingClient, batch, make_datums, adam):
    # The reference logprobs go into the policy's loss: this wait is required.
    ref_logprobs = reference.compute_logprobs(batch).result()
    policy.forward_backward(make_datums(batch, ref_logprobs), loss_fn="cross_entropy")
    return policy.optim_step(adam)
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
        # One submitting call is enough to walk a body: its other calls are not asked. A function
        # that submits through the module's own functions is known to (``function_submit_roles``,
        # of the same call sites); one that submits only through another module's, asked by call.
        submitting: set[int | None] = set()
        submits_here = model.function_submit_roles
        for site in model.calls:
            function = site.function
            owner = id(function.node) if function is not None else None
            if owner not in submitting and (
                function in submits_here or model.roles_submitted_by_call(site.node, site.scope)
            ):
                submitting.add(owner)
        bodies: list[tuple[Sequence[cst.CSTNode], Scope]] = []
        if None in submitting:
            bodies.append((model.module.body, model.module_scope))
        for function in model.functions:
            body = function.node.body
            if isinstance(body, cst.IndentedBlock) and id(function.node) in submitting:
                bodies.append((body.body, function.scope))
        # Gradient accumulation: a wait per micro-batch, then ``optim_step`` after the loop.
        for loop in model.loops:
            for item in accumulation_waits(model, loop):
                waited = ", ".join(sorted(item.wait.methods))
                # The next micro-batch's request, when the optimizer step needs the results.
                submit = waited if item.needed_by_step else "optim_step"
                yield self.finding(
                    item.wait.anchor,
                    waited=f"`{waited}`",
                    submit=submit,
                    reason=one_client(model.training_kinds.trainer(item.wait.anchor)),
                    through="",
                )
        for statements, scope in bodies:
            pairs, guarded = waits_and_next_submits(model, statements, scope)
            by_wait: dict[int, list[WaitThenSubmit]] = {}
            for pair in pairs:
                by_wait.setdefault(id(pair.wait.node), []).append(pair)
            for group in by_wait.values():
                wait: Wait = group[0].wait
                if id(wait.node) in guarded:
                    continue
                if model.steps.once_per_run(wait.node):
                    continue  # a final save before a final evaluation: one round trip a run
                if any(p.dependent for p in group):
                    continue
                # A save that ends an RL step exempts the wait; one made only every N steps
                # (under a cadence guard) exempts it only there: on the other passes the next
                # submit (sampling from the stale sampler) does not need the result.
                saves = [p.submit for p in group if is_save(p.submit)]
                others = [p for p in group if not is_save(p.submit)]
                if saves and (not others or not all(occasional_save(model, s) for s in saves)):
                    continue
                reported = others or group
                first = reported[0].submit
                # The stale sampler is the reason only when what comes next is sampling.
                samples_next = all(p.submit.roles <= {Role.SAMPLE} for p in reported)
                if samples_next and any(refreshes_sampler(s) for s in saves):
                    line = min(ctx.line_of(s.node) for s in saves)
                    reason = STALE_SAMPLER.format(line)
                else:
                    clients = {separate_clients(model, wait, p.submit, scope) for p in reported}
                    two = clients.pop() if len(clients) == 1 else None
                    reason = (
                        TWO_CLIENTS.format(*two)
                        if two
                        else _reason(wait, first, model.training_kinds.trainer(wait.anchor))
                    )
                # A helper's wait is reported at its call, and moved by hand: no fix.
                fix = (
                    None
                    if wait.helper is not None
                    else partial(
                        plan_move_wait, ctx, wait, scope, [p.submit.node for p in reported]
                    )
                )
                yield self.finding(
                    wait.anchor,
                    fix,
                    waited=waited_text(wait),
                    submit=first.name,
                    reason=reason,
                    through=helper_wait_text(wait, ctx.path),
                )


# Why submitting first and waiting for both is right, by what is waited for and what is submitted.
CONCURRENT = "sampling requests are not ordered: they run concurrently, and the round trips overlap"
INDEPENDENT = "the two requests are independent: their round trips overlap"
_ONE_QUEUE = (Role.TRAIN, Role.SAVE)  # requests of a TrainingClient: one queue, in order


def _reason(wait: Wait, submit: Submit, trainer: str | None) -> str:
    """The true reason, when the requests are not known to be on two clients
    (``separate_clients`` says when they are): a training client's requests run in submission
    order; sampling requests, and a sampling and a training request, are not ordered at all."""
    roles = {t.method.role for t in wait.futures if t.method is not None}
    submitted = submit.roles
    if roles and roles <= {Role.SAMPLE} and submitted and submitted <= {Role.SAMPLE}:
        return CONCURRENT
    if roles and roles <= set(_ONE_QUEUE) and submitted and submitted <= set(_ONE_QUEUE):
        return one_client(trainer)
    return INDEPENDENT
