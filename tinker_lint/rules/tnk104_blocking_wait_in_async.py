"""TNK104 blocking-wait-in-async."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.flow import (
    NESTED_CODE,
    Wait,
    exact_paths,
    linear_steps,
    may_block,
    names_read,
    read_keys,
)
from tinker_lint.model.names import BLOCKING_WAIT_FUNCTIONS
from tinker_lint.model.scopes import FunctionInfo
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
                            effect=_effect(model, function, event),
                            remedy=remedy,
                        )


# What the wait does, by where it is (``_is_setup``).
FREEZES = "freezes the event loop and every concurrent rollout"
SETUP = "blocks the event loop before any task runs"
SDK_WARNS = "; the SDK logs a warning with a stack trace for it"
# Calls that start work running concurrently with the rest of the coroutine.
_SPAWNS = frozenset(
    f"asyncio.{name}"
    for name in (
        "create_task",
        "ensure_future",
        "gather",
        "wait",
        "as_completed",
        "TaskGroup",
        "to_thread",
        "run_coroutine_threadsafe",
    )
)
_SPAWN_METHODS = frozenset({"create_task", "run_in_executor", "start_soon", "submit"})
_REPEATS = (cst.For, cst.While, cst.CompFor)


def _effect(model: SemanticModel, function: FunctionInfo, wait: Wait) -> str:
    if not _is_setup(model, function, wait):
        return FREEZES
    # ``BackcompatClientFuture.result`` is ``@sync_only`` (tinker-sdk-facts.md); a training
    # future's ``result()`` does not warn.
    warns = wait.futures and all(t.kind is Kind.CLIENT_FUTURE for t in wait.futures)
    return SETUP + SDK_WARNS if warns else SETUP


def _is_setup(model: SemanticModel, function: FunctionInfo, wait: Wait) -> bool:
    """A one-off wait before any other coroutine can run: in the module's entry coroutine (a
    module-level ``async def`` named in an ``asyncio.run(...)`` of this module: nothing awaits it
    alongside others), not repeated by a loop, and before anything in it starts a task, a gather or
    a thread."""
    if function.parent is not None or function.class_name is not None:
        return False
    named = exact_paths(read_keys(function.name))  # a read of the name itself: ``^main``
    if not any(
        model.qualify(site.node.func, site.scope) == "asyncio.run"
        and any(named <= exact_paths(names_read(model, arg.value)) for arg in site.node.args)
        for site in model.calls
    ):
        return False
    node: cst.CSTNode | None = wait.node
    while node is not None and node is not function.node:
        if isinstance(node, _REPEATS):
            return False
        node = model.parent(node)
    assert isinstance(function.node.body, cst.IndentedBlock)
    for step in linear_steps(model, function.node.body.body, function.scope):
        if any(event is wait or getattr(event, "node", None) is wait.node for event in step.events):
            return True
        for call in model.walk(step.node, NESTED_CODE):
            if isinstance(call, cst.Call) and _spawns(model, call, function):
                return False
    return False


def _spawns(model: SemanticModel, call: cst.Call, function: FunctionInfo) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SPAWN_METHODS:
        return True
    return model.qualify(func, function.scope) in _SPAWNS


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
