"""TNK104 blocking-wait-in-async."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import (
    BLOCKING_WAIT_FUNCTIONS,
    CallSite,
    Concurrency,
    Kind,
    SemanticModel,
    Wait,
    events_in_order,
    exact_paths,
    may_block,
    names_read,
)
from tinker_lint.prefilter.mentions import TINKER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule

# What the wait does, in the message and then in the help: it always blocks the event loop for its
# round trip; it freezes other work only where other coroutines can run beside it
# (``Concurrency.runs_beside_others``).
FREEZES = (
    "freezes every concurrent rollout",
    "Nothing else on the event loop (the other rollouts) runs until the request comes back",
)
ONE_OFF = ("blocks the event loop", "Nothing else on the event loop runs for the round trip")
SDK_WARNS = (
    ", and the SDK logs a sync-from-async warning with a stack trace "
    "(the client future's `result()` is `@sync_only`)"
)
_HELPER_REMEDY = (
    "make `{helper}` an `async def` that awaits, and await it, or call it through "
    "`await asyncio.to_thread(...)`"
)


def _variants() -> dict[str, tuple[str, str]]:
    """Each kind of finding: what the wait does (``freezes``, ``blocks``), whose wait it is (the
    function's own; a helper's, with where the helper waits, or without: ``helper``,
    ``helper-unplaced``), and whether the SDK warns (``warns``): ``blocks-helper-warns``."""
    effects = {"freezes": FREEZES, "blocks": ONE_OFF}
    # Where the wait blocks (message), what a helper's wait waits for and the remedy (help).
    waits = {
        "": ("", "", "use `await fut` instead of `fut.result()`"),
        "helper": (
            " in `{helper}()`",
            "`{helper}()` waits for `{request}` at {place}. ",
            _HELPER_REMEDY,
        ),
        "helper-unplaced": (" in `{helper}()`", "", _HELPER_REMEDY),
    }
    variants: dict[str, tuple[str, str]] = {}
    for effect_name, (effect, cost) in effects.items():
        for wait_name, (through, where, remedy) in waits.items():
            for warn_name, warns in (("", ""), ("warns", SDK_WARNS)):
                name = "-".join(part for part in (effect_name, wait_name, warn_name) if part)
                variants[name] = (
                    "Blocking wait" + through + " inside `async def` " + effect,
                    where + cost + warns + ": " + remedy,
                )
    return variants


class BlockingWaitInAsync(Rule):
    code = "TNK104"
    name = "blocking-wait-in-async"
    level = "error"
    summary = "Use `await fut` instead of `fut.result()` inside `async def`"
    variants = _variants()
    message, help = variants["blocks"]
    why = """\
`fut.result()`, `fut.future().result()` and `concurrent.futures.wait(...)` block the calling thread.
Inside `async def` that thread runs the event loop: nothing else on it runs until the request
(which the SDK retries for up to five minutes) comes back. `await fut` (or
`await fut.result_async()`) suspends only the current coroutine.

Every such wait is reported, and the message (then the help) says what the wait does there:

- Where other coroutines can run beside it, it "freezes every concurrent rollout": the function is scheduled concurrently by its module (a call of it reaches
  `asyncio.gather`, `create_task`, `ensure_future`, `asyncio.wait`, `as_completed`, a task group's
  `create_task` or `start_soon`: directly, in a list or comprehension, through a name bound to the
  calls, or inside a wrapper such as a semaphore-bounded coroutine), or it is called where others
  can run, or the wait comes after the function started such work, or sits in a loop that also
  does. Work that has finished does not count: after `await asyncio.gather(...)` the gathered
  coroutines are done, and after a task group's `async with` block its tasks are. Threads
  (`asyncio.to_thread`) keep running and do not count.
- Elsewhere (setup in the `async def main` that `asyncio.run` runs, before any task starts; an
  evaluation coroutine its caller awaits one after the other; a coroutine whose callers this module
  does not show), it "blocks the event loop" for the round trip. Still worth an `await`: the same
  code moved into a task later freezes everything.

When the future is a client future (`create_sampling_client(...)`,
`create_lora_training_client(...)`, `save_weights_and_get_sampling_client(...)` in tinker 0.38),
the help adds that the SDK logs a warning: `BackcompatClientFuture.result` is `@sync_only`
(`tinker/lib/public_interfaces/backcompat_client_future.py` L34), and `sync_only`
(`tinker/lib/sync_only.py` L69-96), called inside a running event loop on a future not yet done,
logs "Synchronous method '...result()' called from async context. It blocks the event loop until
the result arrives; await the future instead (`await future`, or `await future.result_async()`)."
and then "===== Stack for calling sync from async =====" with the stack (silent in Jupyter; a
`RuntimeError` on the SDK's own loop). The training futures (`AwaitableConcurrentFuture`) and the
sample wrapper's `result()` do not warn, and the help does not say they do.

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
        # Alone (tests/robustness_support.py lints this first example): the loop blocks.
        Example(
            """\
async def rollout(sampling_client, prompt, params):
    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()
""",
            expect=((2, 82),),
        ),
        # Gathered: the wait freezes the other rollouts.
        Example(
            """\
import asyncio


async def rollout(sampling_client, prompt, params):
    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()


async def rollouts(sampling_client, prompts, params):
    return await asyncio.gather(*[rollout(sampling_client, p, params) for p in prompts])
""",
            expect=((5, 82),),
        ),
        # Setup before any task: the loop blocks for the round trip, and the SDK warns.
        Example(
            """\
import asyncio

import tinker

PARAMS = tinker.SamplingParams(max_tokens=64)


async def main(prompt):
    service_client = tinker.ServiceClient()
    sampling_client = service_client.create_sampling_client(base_model="Qwen/Qwen3-8B").result()
    print(await sampling_client.sample(prompt, num_samples=1, sampling_params=PARAMS))


asyncio.run(main(tinker.ModelInput.from_ints([1, 2, 3])))
""",
            expect=((10, 89),),
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
        concurrency = model.concurrency
        for function in model.functions:
            if not function.is_async or not isinstance(function.node.body, cst.IndentedBlock):
                continue
            # Its calls are known (those of nested functions are theirs): without one shaped like
            # a blocking wait there is nothing to find, and the body is not walked.
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
            for event in events_in_order(model, function.node.body.body, function.scope):
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
                    variant, fields = _kind(model, concurrency, event, ctx.path)
                    yield self.finding(event.anchor, None, variant, **fields)


def _kind(
    model: SemanticModel, concurrency: Concurrency, wait: Wait, here: str
) -> tuple[str, dict[str, str]]:
    """The finding's kind (``_variants``) and what the code shows: the helper, what its wait
    waits for and where."""
    site = model.call_site_of.get(id(wait.node))
    effect = "freezes" if site is not None and concurrency.runs_beside_others(site) else "blocks"
    # ``BackcompatClientFuture.result`` is ``@sync_only`` (tinker-sdk-facts.md); a training
    # future's ``result()`` and the sample wrapper's do not warn.
    warns = wait.futures and all(t.kind is Kind.CLIENT_FUTURE for t in wait.futures)
    fields: dict[str, str] = {}
    whose = ""
    helper = wait.helper
    if helper is not None:
        fields["helper"] = helper.name
        waits = helper.wait
        if waits is not None:
            whose = "helper"
            fields.update(request=waits.what, place=waits.where(here))
        else:
            whose = "helper-unplaced"
    return "-".join(part for part in (effect, whose, "warns" if warns else "") if part), fields


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
