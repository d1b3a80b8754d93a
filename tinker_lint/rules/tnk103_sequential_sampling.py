"""TNK103 sequential-sampling."""

from __future__ import annotations

from collections.abc import Iterator

from tinker_lint.model.pipeline import (
    LoopWait,
    loop_waits,
    may_make_requests,
    refreshes_sampling_client,
)
from tinker_lint.model.sdk import Role
from tinker_lint.prefilter.mentions import TINKER, methods
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule


class SequentialSampling(Rule):
    code = "TNK103"
    name = "sequential-sampling"
    level = "error"
    summary = (
        "Submit all sampling requests, then gather them (`asyncio.gather(*futures)`, or collect "
        "the futures and call `.result()` afterwards)"
    )
    message = (
        "Sampling one request at a time: each `{method}` is waited for before the next is "
        "submitted, though the iterations are independent; submit all requests, then gather them"
    )
    why = """\
`SamplingClient` requests are not ordered: the server runs them concurrently (the SDK dispatches up
to 400 at once and allows 2,000 in flight). A loop that submits one `sample` or `compute_logprobs`
request and waits for it before submitting the next pays a full round trip per prompt. When the
iterations are independent, submit every request first and wait afterwards.

Not reported: multi-turn rollouts, where the next prompt is built from this result (data or control
dependence), loops that sample from a client refreshed in the loop, and retry loops, which are
left once the request succeeds (the next attempt runs only when this one failed).
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
            expect=((3, 22),),
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
messages = [first]
for turn in range(max_turns):
    reply = sampling_client.sample(render(messages), num_samples=1, sampling_params=params).result()
    messages.append(reply)
"""
        ),
    )

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
            for item in loop_waits(model, loop):
                if (
                    item.fresh
                    and Role.SAMPLE in item.roles
                    and not item.needed_next
                    and not item.branches_on_result
                    and not item.loop_gated
                ):
                    if id(item.wait.node) not in reported:
                        reported.add(id(item.wait.node))
                        yield self.finding(item.wait.node, method=_method(item))
                    break


def _method(item: LoopWait) -> str:
    names = sorted(n for n in item.wait.methods if n in ("sample", "compute_logprobs"))
    return names[0] if names else "sample"
