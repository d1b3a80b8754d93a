"""TNK105 deprecated-async-method."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from tinker_lint.model.query import ASYNC_DEPRECATION_VERSION, Returns, sdk
from tinker_lint.prefilter.mentions import DEPRECATED_ASYNC, TINKER_EVIDENCE
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk105 import plan_plain_method


class DeprecatedAsyncMethod(Rule):
    code = "TNK105"
    name = "deprecated-async-method"
    level = "warning"
    summary = (
        "Use the plain method: since tinker 0.38 it returns an awaitable `APIFuture` at once, "
        "and the `*_async` form is deprecated"
    )
    message = "`{name}()` is deprecated: use `{plain}()`"
    help = (
        "tinker 0.38 deprecated the clients' `*_async` methods (a `FutureWarning` per call): "
        "call `{plain}()`, {gives}"
    )
    min_tinker_version = ASYNC_DEPRECATION_VERSION
    why = """\
tinker 0.38 deprecated every `*_async` method of the clients (`FutureWarning` when called). The plain
methods submit the request immediately and return an `APIFuture` that can be awaited, so async code
no longer needs them. Beware the old double await: `await tc.forward_backward_async(...)` gave a
future, not the result; `tc.forward_backward(...)` gives that future directly.

Before 0.38 the plain forms were no substitute: `sample()` returned a future that could not be
awaited.
"""
    fix_description = (
        "Call the plain method: `await tc.forward_backward_async(x)` becomes "
        "`tc.forward_backward(x)` (the same future), `await sc.sample_async(x)` becomes "
        "`await sc.sample(x)` (the same value). A coroutine passed to `asyncio.gather` is an unsafe "
        "fix; one used any other way is not fixed."
    )
    autofix = Autofix("Call the plain method instead of its `*_async` twin", plan_plain_method)
    INVALID = (
        Example(
            """\
async def step(training_client, batch):
    fut = await training_client.forward_backward_async(batch, loss_fn="cross_entropy")
    return await fut
""",
            expect=((2, 17),),
            fixed="""\
async def step(training_client, batch):
    fut = training_client.forward_backward(batch, loss_fn="cross_entropy")
    return await fut
""",
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
            yield self.finding(
                site.node,
                partial(plan_plain_method, ctx.model, call),
                name=name,
                plain=call.method.plain_name,
                gives=gives,
            )
