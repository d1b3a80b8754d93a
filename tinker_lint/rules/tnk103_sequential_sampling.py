"""TNK103 sequential-sampling."""

from __future__ import annotations

from collections.abc import Iterator

from tinker_lint.model.query import (
    LoopWait,
    Role,
    coroutines_awaited_one_by_one,
    loop_waits,
    may_make_requests,
    refreshes_sampling_client,
)
from tinker_lint.prefilter.mentions import TINKER, methods
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule

_AT_A_TIME = "Sampling one request at a time: "
# A request submitted and waited for in the loop (itself, or in a helper the loop calls).
_WAITED = " is waited for before the next"
_GATHER = "The iterations are independent: submit all requests, then gather them"


class SequentialSampling(Rule):
    code = "TNK103"
    name = "sequential-sampling"
    level = "error"
    # A sampling wait in a loop is often also a wait before the next submit (the next prompt's
    # `sample`, another request of the same iteration): that is TNK101's finding, said more
    # generally; this one says what to do about the loop.
    supersedes = ("TNK101",)
    summary = (
        "Submit all sampling requests, then gather them (`asyncio.gather(*futures)`, or collect "
        "the futures and call `.result()` afterwards)"
    )
    # A request submitted and waited for in the loop: by the loop itself, or by a helper it calls
    # (where the helper waits, when known); or a coroutine collected before the loop, which
    # starts its request only when awaited (spec: "Coroutines").
    variants = {
        "loop": (_AT_A_TIME + "each `{method}`" + _WAITED, _GATHER),
        "helper": (
            _AT_A_TIME + "each `{helper}()` call" + _WAITED,
            "`{helper}()` waits for `{method}` ({place}). " + _GATHER,
        ),
        "helper-unplaced": (
            _AT_A_TIME + "each `{helper}()` call" + _WAITED,
            "`{helper}()` waits for `{method}`. " + _GATHER,
        ),
        "coroutine": (
            _AT_A_TIME + "each `{coroutine}` coroutine starts only when awaited",
            "A coroutine starts its request only when awaited, so each waits for the previous "
            "one, though the iterations are independent: run them together with "
            "`await asyncio.gather(*coroutines)`",
        ),
    }
    message, help = variants["loop"]
    why = """\
`SamplingClient` requests are not ordered: the server runs them concurrently (the SDK dispatches up
to 400 at once and allows 2,000 in flight). A loop that submits one `sample` or `compute_logprobs`
request and waits for it before submitting the next pays a full round trip per prompt. When the
iterations are independent, submit every request first and wait afterwards.

The same holds for coroutines collected first and awaited one by one:
`coros = [sc.sample_async(p) for p in prompts]` (or calls of an `async def` of the module that
samples), then `for c in coros: r = await c` or `[await c for c in coros]`. A coroutine does
nothing until it is awaited, so each request starts only when the previous one has come back;
`await asyncio.gather(*coros)` runs them together. An `APIFuture` (`sc.sample(...)`) or a task
(`asyncio.create_task(...)`) is already running when it is made: awaiting those one by one is
fine.

Not reported: multi-turn rollouts, where the next prompt is built from this result (data or control
dependence), awaits whose result decides whether the loop goes on (`if good(r): break`), loops of
collected coroutines that sleep between requests (paced under a rate limit on purpose), loops that
sample from a client refreshed in the loop, retry loops, which are left once the request succeeds
(the next attempt runs only when this one failed), and a wait that is already the fan-out: `await
asyncio.gather(...)` (or `concurrent.futures.wait(...)`) of the requests of a batch or group, once
per iteration, is submitting all requests and then gathering them, in chunks.
Through helpers: a loop that calls, once per prompt, a function or method of the project that
samples and waits (`policy.generate(prompt)`, `await self.preference_model(comparison)` whose class's
`__call__` samples) is reported at the call, naming the helper and its wait. Not when the helper
does more than sample one request (it also trains or saves, runs a loop of its own, makes a client
per call, or changes its object's state, as a chat session keeping its history does), nor in a
loop that trains.
"""
    fix_description = """\
Submit every request first and keep the futures (a list comprehension of
`sampling_client.sample(...)` calls), then wait for them: `[f.result() for f in futures]` in sync
code, `await asyncio.gather(*futures)` in async code. Several samples of one prompt are one
request: pass `num_samples=n` instead of looping."""
    INVALID = (
        Example(
            """\
responses = []
for prompt in prompts:
    responses.append(sampling_client.sample(prompt, num_samples=1, sampling_params=params).result())
""",
            expect=((3, 92),),
        ),
        Example(
            """\
async def sample_all(sampling_client, prompts, params):
    coros = [sampling_client.sample_async(p, num_samples=1, sampling_params=params) for p in prompts]
    return [await c for c in coros]
""",
            expect=((3, 13),),
        ),
    )
    VALID = (
        Example(
            """\
futures = [sampling_client.sample(p, num_samples=1, sampling_params=params) for p in prompts]
responses = [f.result() for f in futures]
"""
        ),
        Example(
            """\
import asyncio

async def sample_all(sampling_client, prompts, params):
    tasks = [
        asyncio.create_task(sampling_client.sample_async(p, num_samples=1, sampling_params=params))
        for p in prompts
    ]
    return [await task for task in tasks]  # tasks run as soon as they are made
"""
        ),
        Example(
            """\
messages = [first]
for turn in range(max_turns):
    reply = sampling_client.sample(render(messages), num_samples=1, sampling_params=params).result()
    messages.append(reply)
"""
        ),
        Example(
            """\
import asyncio

async def sample_in_batches(batches):
    results = []
    for batch in batches:  # one gather per batch: the requests of a batch run concurrently
        futures = [sampling_client.sample(p, num_samples=1, sampling_params=params) for p in batch]
        results.extend(await asyncio.gather(*futures))
    return results
"""
        ),
    )

    sees_helpers = True
    prefilter = TINKER & Needs(
        text=(methods(lambda method: method.role is Role.SAMPLE),),
        tree=(lambda s: Role.SAMPLE in s.called_roles and s.waits and s.submit_loop,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        reported: set[int] = set()
        for loop in model.loops:
            if not may_make_requests(model, loop) or refreshes_sampling_client(model, loop):
                continue
            # Each independent wait of an iteration costs a round trip (a student's, then a
            # teacher's); a wait whose request reads one already reported here (the teacher
            # scoring the student's tokens) is that one's chain: one finding for both.
            chained: set[int] = set()
            for item in loop_waits(model, loop):
                if item.needs & chained:
                    chained.add(id(item.wait.node))
                    continue
                if (
                    item.fresh
                    and Role.SAMPLE in item.roles
                    and not item.wait.fan_in  # a gather per batch or group is the fan-out
                    and not item.needed_next
                    and not item.branches_on_result
                    and not item.loop_gated
                    and not item.collected  # a wave per batch: the fan-out is done
                    and not item.needed_by_inner  # the episodes of a multi-turn loop: item 5
                    and _samples_only(item, model.loop_submit_roles(loop))
                ):
                    chained.add(id(item.wait.node))
                    if id(item.wait.node) not in reported:
                        reported.add(id(item.wait.node))
                        yield self._submitted(item, ctx.path)
        for loop in model.loops:
            for waited in coroutines_awaited_one_by_one(model, loop):
                if id(waited.node) not in reported:
                    reported.add(id(waited.node))
                    yield self.finding(waited.node, None, "coroutine", coroutine=waited.what)

    def _submitted(self, item: LoopWait, here: str) -> Finding:
        """A request submitted and waited for in the loop: by the loop itself, or by a helper
        (and where that waits: ``steps.py:8``, or ``line 8`` in this file)."""
        node, method, helper = item.wait.anchor, _method(item), item.wait.helper
        if helper is None:
            return self.finding(node, None, "loop", method=method)
        site = helper.wait
        if site is None:
            return self.finding(node, None, "helper-unplaced", helper=helper.name, method=method)
        place = site.where(here)
        return self.finding(node, None, "helper", helper=helper.name, method=method, place=place)


def _samples_only(item: LoopWait, loop_roles: frozenset[Role]) -> bool:
    """A helper waited for per iteration counts as one sampling request when that is all it is:
    it only samples (no training step, no save), once (no loop of its own, which is reported
    there), makes no client (a loop over models or configs is setup, not sampling), keeps no
    state of its object (a chat session's history: each call depends on the last); and the loop
    around it is no training loop."""
    helper = item.wait.helper
    if helper is None:
        return True
    return (
        helper.submits <= {Role.SAMPLE}
        and not helper.waits_in_loop
        and not helper.makes_clients
        and not helper.mutates_self
        and Role.TRAIN not in loop_roles
    )


def _method(item: LoopWait) -> str:
    names = sorted(n for n in item.wait.methods if n in ("sample", "compute_logprobs"))
    return names[0] if names else "sample"
