"""TNK104 blocking-wait-in-async."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.concurrency import Concurrency
from tinker_lint.model.flow import (
    Wait,
    exact_paths,
    linear_steps,
    may_block,
    names_read,
)
from tinker_lint.model.names import BLOCKING_WAIT_FUNCTIONS
from tinker_lint.model.semantic import CallSite, SemanticModel
from tinker_lint.model.types import Kind
from tinker_lint.prefilter.mentions import TINKER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule


class BlockingWaitInAsync(Rule):
    code = "TNK104"
    name = "blocking-wait-in-async"
    level = "error"
    summary = "Use `await fut` instead of `fut.result()` inside `async def`"
    message = "Blocking wait{through} inside `async def` {effect}: {remedy}"
    why = """\
`fut.result()`, `fut.future().result()` and `concurrent.futures.wait(...)` block the calling thread.
Inside `async def` that thread runs the event loop, so every other coroutine stops: concurrent
rollouts, evaluations and the cookbook's async training loops all freeze until the request (which
the SDK retries for up to five minutes) comes back. Several SDK futures are `@sync_only` and log a
warning with a stack trace when this happens; the training futures do not warn at all.

`await fut` (or `await fut.result_async()`) suspends only the current coroutine.

A one-off setup wait (`tc = service_client.create_lora_training_client(...).result()` at the top of
the `async def main` that `asyncio.run(...)` runs, not in a loop, before it starts any task or
gather) freezes nothing else yet: the message says what is true there, that the loop blocks (and
that the SDK logs a warning with a stack trace for a client future's `.result()`). It is still
worth an `await`: the same code moved into a task later freezes everything.

Not reported: `.result()` on a future that this function already awaited (for example after
`await asyncio.gather(*futures)`), which returns at once.
Through helpers: a call, inside `async def`, of a plain `def` of the project that waits
(`.result()`, `asyncio.run(...)`) blocks the event loop just the same; it is reported at the call,
naming the helper and its wait.
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
    sees_helpers = True
    prefilter = TINKER & Needs(
        text=(
            words({"async"}),
            words({"result", *(name.rsplit(".", 1)[-1] for name in BLOCKING_WAIT_FUNCTIONS)}),
        ),
        tree=(lambda s: s.blocks_in_async,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        concurrency = Concurrency(model)  # worked out when a finding first asks
        for function in model.functions:
            if not function.is_async or not isinstance(function.node.body, cst.IndentedBlock):
                continue
            # Its calls are known (those of nested functions are theirs): without one shaped like
            # a blocking wait there is nothing to find, and the body is not flattened.
            if not any(
                may_block(model, site.node, site.scope) or _blocking_helper(model, site)
                for site in function.calls
            ):
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
                        through, remedy = _message_fields(event, ctx.path)
                        yield self.finding(
                            event.anchor,
                            through=through,
                            effect=_effect(model, concurrency, event),
                            remedy=remedy,
                        )


# What the wait does: it always blocks the event loop for its round trip; it freezes other work
# only where other coroutines can run beside it (``Concurrency.runs_beside_others``).
FREEZES = "freezes the event loop and every concurrent rollout"
ONE_OFF = "blocks the event loop for the round trip"
SDK_WARNS = (
    ", and the SDK logs a sync-from-async warning with a stack trace "
    "(the client future's `result()` is `@sync_only`)"
)


def _effect(model: SemanticModel, concurrency: Concurrency, wait: Wait) -> str:
    site = model.call_site_of.get(id(wait.node))
    effect = FREEZES if site is not None and concurrency.runs_beside_others(site) else ONE_OFF
    # ``BackcompatClientFuture.result`` is ``@sync_only`` (tinker-sdk-facts.md); a training
    # future's ``result()`` and the sample wrapper's do not warn.
    warns = wait.futures and all(t.kind is Kind.CLIENT_FUTURE for t in wait.futures)
    return effect + SDK_WARNS if warns else effect


def _already_awaited(model: SemanticModel, wait: Wait, names: set[str], origins: set[int]) -> bool:
    """Whether every future ``wait`` blocks on was awaited before: by the request that made it
    when that is known (a name may be rebound to a new future), else by name."""
    if all(t.origin_id for t in wait.futures):
        return all(t.origin_id in origins for t in wait.futures)
    return any(exact_paths(names_read(model, expr)) & names for expr in wait.waited)


def _blocking_helper(model: SemanticModel, site: CallSite) -> bool:
    """A call of a sync function of the project that blocks on a Tinker request: the event loop
    blocks just the same."""
    helper = model.helper_of(site.node, site.scope)
    return (
        helper is not None and not helper.is_async and (helper.blocks or bool(helper.waits_params))
    )


def _message_fields(wait: Wait, here: str) -> tuple[str, str]:
    """Where the wait blocks, and the remedy: for a helper's, name it and its wait."""
    helper = wait.helper
    if helper is None:
        return "", "use `await fut` instead of `fut.result()`"
    site = helper.wait
    where = f" for `{site.what}` at {site.where(here)}" if site is not None else ""
    return f" in `{helper.name}()`{where}", (
        f"make `{helper.name}` an `async def` that awaits, and await it, or call it through "
        "`await asyncio.to_thread(...)`"
    )
