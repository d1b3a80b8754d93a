"""TNK105 deprecated-async-method."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from tinker_lint.model import sdk
from tinker_lint.model.sdk import ASYNC_DEPRECATION_VERSION, Returns
from tinker_lint.prefilter.mentions import DEPRECATED_ASYNC, TINKER_EVIDENCE
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk105 import plan_plain_method


class DeprecatedAsyncMethod(Rule):
    code = "TNK105"
    name = "deprecated-async-method"
    summary = (
        "Use the plain method: since tinker 0.38 it returns an awaitable `APIFuture` at once, "
        "and the `*_async` form is deprecated"
    )
    why = """\
tinker 0.38 deprecated every `*_async` method of the clients (`FutureWarning` when called). The plain
methods submit the request immediately and return an `APIFuture` that can be awaited, so async code
no longer needs them. Beware the old double await: `await tc.forward_backward_async(...)` gave a
future, not the result; `tc.forward_backward(...)` gives that future directly.

Only reported when the project targets tinker 0.38 or newer (`--tinker-version`, `tinker-version`
in `[tool.tinker-lint]`, or the installed tinker): before 0.38, `sample()` returned a future that
could not be awaited.
"""
    fix_description = (
        "Call the plain method: `await tc.forward_backward_async(x)` becomes "
        "`tc.forward_backward(x)` (the same future), `await sc.sample_async(x)` becomes "
        "`await sc.sample(x)` (the same value). A coroutine passed to `asyncio.gather` is an unsafe "
        "fix; one used any other way is not fixed."
    )
    fixable = True
    INVALID = (
        Example(
            """\
async def step(training_client, batch):
    fut = await training_client.forward_backward_async(batch, loss_fn="cross_entropy")
    return await fut
""",
            expect=((2, 17),),
        ),
    )
    VALID = (
        Example(
            """\
async def step(training_client, batch):
    return await training_client.forward_backward(batch, loss_fn="cross_entropy")
"""
        ),
        Example(
            """\
async def step(training_client, batch):
    fut = await training_client.forward_backward_async(batch, loss_fn="cross_entropy")
    return await fut
""",
            tinker_version="0.36.0",
        ),
    )

    prefilter = Needs(
        text=(words(DEPRECATED_ASYNC), TINKER_EVIDENCE),
        tree=(lambda s: not s.called_methods.isdisjoint(DEPRECATED_ASYNC),),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        if ctx.tinker_version < ASYNC_DEPRECATION_VERSION:
            return
        for site in ctx.model.calls:
            call = ctx.model.sdk_call(site.node, site.scope)
            if (
                call is None
                or not call.method.deprecated
                or not call.method.name.endswith("_async")
            ):
                continue
            name = call.method.name
            plain = sdk.lookup(call.method.client, call.method.plain_name)
            if plain is not None and plain.returns is Returns.VALUE:
                gives = "which returns the value directly"  # get_info, get_base_model
            else:
                gives = "which returns an awaitable `APIFuture` at once"
            yield Finding(
                site.node,
                f"`{name}()` is deprecated since tinker 0.38: use `{call.method.plain_name}()`, "
                f"{gives}",
                fix=partial(plan_plain_method, ctx.model, call),
            )
