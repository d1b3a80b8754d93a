"""TNK106 client-future-used-as-client."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from tinker_lint.model.query import ASYNC_DEPRECATION_VERSION, Returns
from tinker_lint.prefilter.mentions import TINKER, methods
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk106 import plan_wait_for_client


class ClientFutureUsedAsClient(Rule):
    code = "TNK106"
    name = "client-future-used-as-client"
    level = "error"
    summary = "Add `.result()` (sync) or `await` (async) to get the client from its future"
    message = "`{made}()` returns a future of the client, used here as the client"
    help = "Each call through the future warns, and the first blocks: {remedy}"
    min_tinker_version = ASYNC_DEPRECATION_VERSION
    why = """\
Since tinker 0.38, `create_lora_training_client(...)`, `create_training_client_from_state*(...)`,
`create_sampling_client(...)` and `save_weights_and_get_sampling_client(...)` return a future of the
client. Using that future as the client still works for now, but every call through it emits a
`FutureWarning`, and the first one blocks until the client exists, wherever it happens to be.
The compatibility wrapper will be removed in a later release.

Before 0.38, these methods returned the client itself.
"""
    fix_description = (
        "Add `.result()` in sync code or `await` in async code at the factory call, when every "
        "use of the value is a client-method call (unsafe when some use is something else; no "
        "fix when some use treats it as a future)."
    )
    autofix = Autofix("Wait for the client at the factory call", plan_wait_for_client)
    INVALID = (
        Example(
            """\
import tinker

service_client = tinker.ServiceClient()
training_client = service_client.create_lora_training_client(base_model="m")
training_client.forward_backward(batch, loss_fn="cross_entropy")
""",
            expect=((4, 19),),
            fixed="""\
import tinker

service_client = tinker.ServiceClient()
training_client = service_client.create_lora_training_client(base_model="m").result()
training_client.forward_backward(batch, loss_fn="cross_entropy")
""",
        ),
    )
    VALID = (
        Example(
            """\
import tinker

service_client = tinker.ServiceClient()
training_client = service_client.create_lora_training_client(base_model="m").result()
training_client.forward_backward(batch, loss_fn="cross_entropy")
"""
        ),
        Example(
            """\
import tinker

service_client = tinker.ServiceClient()
training_client = service_client.create_lora_training_client(base_model="m")
training_client.forward_backward(batch, loss_fn="cross_entropy")
""",
            tinker_version="0.36.0",
        ),
    )

    prefilter = TINKER & Needs(
        text=(methods(lambda method: method.returns is Returns.CLIENT_FUTURE),),
        tree=(lambda s: s.unwaited_client_future,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        reported: set[int] = set()
        for site in model.calls:
            call = model.sdk_call(site.node, site.scope)
            if call is None or not call.on_client_future:
                continue
            # Each factory call whose future this receiver may be (a name made before a loop and
            # again in it): every one is used as the client, so every one is reported, once.
            for origin in call.receiver_origins:
                if not isinstance(origin, cst.Call) or id(origin) in reported:
                    continue
                reported.add(id(origin))
                yield self._finding(ctx, origin)

    def _finding(self, ctx: Context, origin: cst.Call) -> Finding:
        model = ctx.model
        origin_site = model.call_site_of.get(id(origin))
        in_async = bool(origin_site and origin_site.function and origin_site.function.is_async)
        factory = model.sdk_call(origin, origin_site.scope) if origin_site else None
        made = factory.method.name if factory else "the factory"
        remedy = "`await` it" if in_async else "call `.result()` on it"
        return self.finding(
            origin,
            partial(plan_wait_for_client, ctx, origin, origin_site, factory),
            made=made,
            remedy=remedy,
        )
