"""TNK104 blocking-wait-in-async."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.flow import Wait, exact_paths, linear_steps, may_block, names_read
from tinker_lint.model.names import BLOCKING_WAIT_FUNCTIONS
from tinker_lint.model.semantic import SemanticModel
from tinker_lint.prefilter.mentions import TINKER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule


class BlockingWaitInAsync(Rule):
    code = "TNK104"
    name = "blocking-wait-in-async"
    level = "error"
    summary = "Use `await fut` instead of `fut.result()` inside `async def`"
    message = (
        "Blocking wait inside `async def` freezes the event loop and every concurrent rollout: "
        "use `await fut` instead of `fut.result()`"
    )
    why = """\
`fut.result()`, `fut.future().result()` and `concurrent.futures.wait(...)` block the calling thread.
Inside `async def` that thread runs the event loop, so every other coroutine stops: concurrent
rollouts, evaluations and the cookbook's async training loops all freeze until the request (which
the SDK retries for up to five minutes) comes back. Several SDK futures are `@sync_only` and log a
warning with a stack trace when this happens; the training futures do not warn at all.

`await fut` (or `await fut.result_async()`) suspends only the current coroutine.

Not reported: `.result()` on a future that this function already awaited (for example after
`await asyncio.gather(*futures)`), which returns at once.
"""
    fix_description = """\
`await fut` instead of `fut.result()` (or `await fut.result_async()`); for several futures,
`await asyncio.gather(*futures)` and then read their results. For `concurrent.futures.wait(...)`,
`await asyncio.wait(...)` on the awaitables, or wrap it: `await asyncio.to_thread(wait, fs)`. If
the function must block, make it a plain `def` and call it from sync code or through
`asyncio.to_thread`."""
    INVALID = (
        Example(
            """\
async def rollout(sampling_client, prompt, params):
    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()
""",
            expect=((2, 82),),
        ),
    )
    VALID = (
        Example(
            """\
async def rollout(sampling_client, prompt, params):
    return await sampling_client.sample(prompt, num_samples=1, sampling_params=params)
"""
        ),
        Example(
            """\
import asyncio

async def rollouts(sampling_client, prompts, params):
    futures = [sampling_client.sample(p, num_samples=1, sampling_params=params) for p in prompts]
    await asyncio.gather(*futures)
    return [f.result() for f in futures]
"""
        ),
    )

    # ``async``, and a wait ``flow.may_block`` takes for blocking: ``.result()`` or a blocking
    # function (``concurrent.futures.wait``), by the last part of its name.
    prefilter = TINKER & Needs(
        text=(
            words({"async"}),
            words({"result", *(name.rsplit(".", 1)[-1] for name in BLOCKING_WAIT_FUNCTIONS)}),
        ),
        tree=(lambda s: s.blocks_in_async,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for function in model.functions:
            if not function.is_async or not isinstance(function.node.body, cst.IndentedBlock):
                continue
            # Its calls are known (those of nested functions are theirs): without one shaped like
            # a blocking wait there is nothing to find, and the body is not flattened.
            if not any(may_block(model, site.node, site.scope) for site in function.calls):
                continue
            # What this function has already awaited: by name (``await fut`` then
            # ``fut.result()``) and by the request that made the future (``await
            # asyncio.gather(*futures)`` then ``[f.result() for f in futures]``).
            awaited_names: set[str] = set()
            awaited_origins: set[int] = set()
            for step in linear_steps(model, function.node.body.body, function.scope):
                for event in step.events:
                    if not isinstance(event, Wait):
                        continue
                    if not event.blocking:
                        # Names holding futures this coroutine awaited; not the receivers of calls
                        # awaited inline (``await client.create_...(...)``).
                        for expr in event.waited:
                            if not isinstance(expr, cst.Call):
                                awaited_names |= exact_paths(names_read(model, expr))
                        awaited_origins |= {t.origin_id for t in event.futures if t.origin_id}
                    elif not _already_awaited(model, event, awaited_names, awaited_origins):
                        yield self.finding(event.anchor)


def _already_awaited(model: SemanticModel, wait: Wait, names: set[str], origins: set[int]) -> bool:
    """Whether every future ``wait`` blocks on was awaited before: by the request that made it
    when that is known (a name may be rebound to a new future), else by name."""
    if all(t.origin_id for t in wait.futures):
        return all(t.origin_id in origins for t in wait.futures)
    return any(exact_paths(names_read(model, expr)) & names for expr in wait.waited)
