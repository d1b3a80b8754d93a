"""TNK107 setup-call-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
from packaging.version import Version

from tinker_lint.model.query import (
    CallSite,
    Client,
    LoopInfo,
    Role,
    SemanticModel,
    asks_server_per_call,
    linear_steps,
    names_read,
    target_keys,
)
from tinker_lint.prefilter.mentions import methods
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule

_SETUP_METHODS = frozenset({"get_tokenizer", "get_info"})
_MADE_BY_FACTORIES = (Client.TRAINING, Client.SAMPLING)


class SetupCallInHotLoop(Rule):
    code = "TNK107"
    needs_hot_loop = True
    # What ``_setup_call`` matches: the ServiceClient class, a factory of clients, a setup method.
    prefilter = Needs(
        text=(
            methods(
                lambda m: (
                    (m.role is Role.FACTORY and m.makes in _MADE_BY_FACTORIES)
                    or m.name in _SETUP_METHODS
                )
            )
            | words({Client.SERVICE.value}),
        )
    )
    name = "setup-call-in-hot-loop"
    level = "warning"
    summary = "Create it once before the loop: nothing it uses changes between iterations"
    message = "`{call}` runs on every iteration of a loop that submits requests"
    help = (
        "Nothing it uses changes between iterations, and a setup call can be a network round "
        "trip (a new client also drops the old one's state): create it once before the loop"
    )
    why = """\
`ServiceClient(...)`, `create_*training_client*(...)` and `create_sampling_client(...)` are setup:
each makes a session or a client on the server (`ServiceClient()` created its session eagerly up
to 0.22), and a new client per step also throws away the client's state. `get_info()` and the
clients' `get_tokenizer()` are setup where they ask the server on every call: `get_info()` up to
0.36, `get_tokenizer()` from 0.8 to 0.36 (it called `get_info` over the network each time). In
tinker 0.38 both answer from the client, so they are not reported there, nor is the cookbook's
`tokenizer_utils.get_tokenizer()`, which caches the tokenizer in every release. In a loop that
submits training or sampling requests, a setup call whose arguments do not change between
iterations can be hoisted.

Not reported: a client made from something the loop changes (a sampling client per checkpoint path),
information calls that answer from the client in the project's tinker version, and calls under a
cadence guard.
"""
    fix_description = """\
Make the client, tokenizer or info once, before the loop, and use it in every iteration. A
sampling client that must follow the training weights is refreshed after a save
(`save_weights_and_get_sampling_client`), or on a cadence (`if step % refresh_every == 0:`), not
created anew each step."""
    INVALID = (
        Example(
            """\
import tinker

service_client = tinker.ServiceClient()
for batch in batches:
    tc = service_client.create_lora_training_client(base_model="m").result()
    tc.forward_backward(batch, loss_fn="cross_entropy").result()
""",
            expect=((5, 10),),
        ),
    )
    VALID = (
        Example(
            """\
import tinker

service_client = tinker.ServiceClient()
tc = service_client.create_lora_training_client(base_model="m").result()
for path in checkpoints:
    sampling_client = service_client.create_sampling_client(model_path=path).result()
    sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()
"""
        ),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        steps = model.steps
        variant_cache: dict[LoopInfo, set[str]] = {}
        for site in model.calls:
            if not site.loops:
                continue
            what = _setup_call(model, site, ctx.tinker_version)
            if what is None:
                continue
            # Runs on every step of its own function's step loop (not at an epoch loop's level,
            # not under a cadence guard inside it): ``model.steps`` decides, as for TNK2xx.
            step = steps.step_of(site)
            if step is None or step.via:
                continue
            loop = step.loop
            variant = variant_cache.get(loop)
            if variant is None:
                variant = variant_cache[loop] = _loop_variant_names(model, loop)
            if not names_read(model, site.node) & variant:
                yield self.finding(site.node, call=what)


def _setup_call(model: SemanticModel, site: CallSite, version: Version | None) -> str | None:
    """The setup call ``site`` makes, if it is one; an information call only where it asks the
    server in ``version`` (None: any setup call, whatever it costs)."""
    node = site.node
    if model.is_constructor(node, site.scope, "ServiceClient"):
        return "ServiceClient()"
    call = model.sdk_call(node, site.scope)
    if call is None:
        # The cookbook's ``get_tokenizer`` caches the tokenizer (every release): cheap in a loop,
        # but what it gives is the same on every iteration.
        func = node.func
        cookbook = (type(func) is cst.Name and func.value == "get_tokenizer") or model.qualify(
            func, site.scope
        ) == "tinker_cookbook.tokenizer_utils.get_tokenizer"
        return "get_tokenizer()" if cookbook and version is None else None
    method = call.method
    if method.role is Role.FACTORY and method.makes in _MADE_BY_FACTORIES:
        return f"{method.name}()"
    if method.name in _SETUP_METHODS and (version is None or asks_server_per_call(method, version)):
        return f"{method.name}()"
    return None


def _loop_variant_names(model: SemanticModel, loop: LoopInfo) -> set[str]:
    """Names whose value may change from one iteration to the next. A name bound (outside a
    cadence guard) only from a setup call whose inputs do not change keeps the same kind of value:
    ``sc = tinker.ServiceClient()`` then ``sc.create_lora_training_client(...)`` can both be
    hoisted."""
    node = loop.node
    variant: set[str] = set()
    if isinstance(node, cst.For):
        variant |= target_keys(node.target)
    if not isinstance(node, cst.For | cst.While) or not isinstance(node.body, cst.IndentedBlock):
        return variant
    setup_steps = []
    for step in linear_steps(model, node.body.body, loop.scope):
        if not step.guarded and _assigns_setup_call(model, step.node):
            setup_steps.append(step)
        else:
            variant |= step.writes
    changed = True
    while changed:
        changed = False
        for step in setup_steps:
            if step.reads & variant and not step.writes <= variant:
                variant |= step.writes
                changed = True
    return variant


def _assigns_setup_call(model: SemanticModel, stmt: cst.CSTNode) -> bool:
    """``x = <setup call>``, also through ``.result()`` or ``await``."""
    if not isinstance(stmt, cst.Assign | cst.AnnAssign) or stmt.value is None:
        return False
    value = stmt.value
    if isinstance(value, cst.Await):
        value = value.expression
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value == "result"
        and not value.args
    ):
        value = value.func.value
    site = model.call_site_of.get(id(value)) if isinstance(value, cst.Call) else None
    return site is not None and _setup_call(model, site, None) is not None
