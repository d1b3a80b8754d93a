"""TNK108 create-task-on-apifuture."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.prefilter.mentions import TINKER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule


class CreateTaskOnApiFuture(Rule):
    code = "TNK108"
    name = "create-task-on-apifuture"
    level = "error"
    summary = (
        "Pass `fut.coroutine()` to `create_task`, or `await`/`asyncio.gather` the future itself"
    )
    message = "`create_task()` of a Tinker `APIFuture` raises TypeError"
    help = (
        "An `APIFuture` is awaitable but not a coroutine: pass `fut.coroutine()`, or "
        "await/gather the future directly"
    )
    why = """\
`APIFuture` is awaitable but is not a coroutine, so `asyncio.create_task(fut)` and
`TaskGroup.create_task(fut)` raise `TypeError: a coroutine was expected` at run time. Since tinker
0.38, `fut.coroutine()` gives a coroutine for `create_task`; `asyncio.gather(fut, ...)` accepts the
futures directly.
"""
    fix_description = """\
`asyncio.create_task(fut.coroutine())` (tinker 0.38 and later) when a task is needed, e.g. to
cancel it or to run it in a `TaskGroup`; otherwise `await fut`, or `await asyncio.gather(*futures)`
for several. Before 0.38, wrap it: `async def wait(): return await fut`, then
`create_task(wait())`."""
    INVALID = (
        Example(
            """\
import asyncio

async def main(sampling_client, prompt, params):
    task = asyncio.create_task(sampling_client.sample(prompt, num_samples=1, sampling_params=params))
    return await task
""",
            expect=((4, 12),),
        ),
    )
    VALID = (
        Example(
            """\
import asyncio

async def main(sampling_client, prompt, params):
    fut = sampling_client.sample(prompt, num_samples=1, sampling_params=params)
    task = asyncio.create_task(fut.coroutine())
    return await task
"""
        ),
    )

    # ``asyncio.create_task`` (by the last part of its name) or a ``create_task`` method.
    prefilter = TINKER & Needs(
        text=(words({"create_task"}),), tree=(lambda s: s.task_of_possible_future,)
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site in model.calls:
            node = site.node
            func = node.func
            if not node.args or not (
                model.qualify(func, site.scope) == "asyncio.create_task"
                or (isinstance(func, cst.Attribute) and func.attr.value == "create_task")
            ):
                continue
            if any(t.is_future for t in model.types(node.args[0].value, site.scope)):
                yield self.finding(node)
