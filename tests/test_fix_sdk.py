"""The facts TNK105's fix rests on, read from the installed tinker (0.38.0) itself: for every
``*_async`` method the fix rewrites, the plain method takes the same parameters and the deprecated
one is a thin wrapper around it: ``return self.<plain>(<its parameters>)`` (a future after one
await: drop the ``await``) or ``return await self.<plain>(<its parameters>)`` (a value after one
await: keep it)."""

from __future__ import annotations

import ast
import inspect
import textwrap

import libcst as cst
import pytest

from tests.fix_programs import FUTURE_AFTER_AWAIT
from tinker_lint.model.facts.sdk import METHODS, Client, Returns
from tinker_lint.model.query import SdkCall, SemanticModel
from tinker_lint.rules.fixes.tnk105 import plan_plain_method

tinker = pytest.importorskip("tinker")

CLASSES = {
    Client.TRAINING: "TrainingClient",
    Client.SAMPLING: "SamplingClient",
    Client.SERVICE: "ServiceClient",
    Client.REST: "RestClient",
    Client.ADMIN: "AdminClient",
}


def _fixed_methods():
    """Every (client, method) whose call TNK105's fix rewrites when awaited, and how."""
    found = []
    for client, table in METHODS.items():
        for method in table.values():
            if not method.name.endswith("_async"):
                continue
            module = cst.parse_module(f"async def f(x):\n    await x.{method.name}()\n")
            model = SemanticModel(module)
            call = next(site.node for site in model.calls)
            plan = plan_plain_method(model, SdkCall(call, method, "dataflow"))
            if plan is not None:
                dropped = isinstance(plan.changes[0][0], cst.Await)
                found.append((client, method.name, dropped))
    return found


FIXED = _fixed_methods()


def test_the_fix_covers_the_common_methods():
    names = {name for _, name, _ in FIXED}
    assert {"forward_backward_async", "optim_step_async", "sample_async"} <= names
    assert "create_lora_training_client_async" in names
    assert not names & {"get_info_async", "load_state_async", "get_base_model_async"}
    # The oracle of the property tests agrees with the fix on which await is dropped.
    assert {name for _, name, dropped in FIXED if dropped} == FUTURE_AFTER_AWAIT


@pytest.mark.parametrize(("client", "name", "dropped"), FIXED, ids=[f[1] for f in FIXED])
def test_async_method_is_a_wrapper_of_the_plain_one(client, name, dropped):
    cls = getattr(tinker, CLASSES[client])
    deprecated = inspect.unwrap(getattr(cls, name))
    plain = inspect.unwrap(getattr(cls, name.removesuffix("_async")))
    assert inspect.iscoroutinefunction(deprecated)
    assert not inspect.iscoroutinefunction(plain)
    assert inspect.signature(deprecated).parameters == inspect.signature(plain).parameters

    function = ast.parse(textwrap.dedent(inspect.getsource(deprecated))).body[0]
    returned = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    assert len(returned) == 1, "one exit, so the plain call is all it does"
    value = returned[0].value
    if dropped:
        assert not isinstance(value, ast.Await)
    else:
        assert isinstance(value, ast.Await)
        value = value.value
    assert isinstance(value, ast.Call)
    assert ast.unparse(value.func) == f"self.{name.removesuffix('_async')}"
    # Every parameter is passed on, by position or by the same keyword, and nothing else.
    parameters = [p for p in inspect.signature(deprecated).parameters if p != "self"]
    passed = [ast.unparse(a) for a in value.args] + [
        f"{k.arg}={ast.unparse(k.value)}" for k in value.keywords
    ]
    assert sorted(passed) == sorted(
        p if p in [ast.unparse(a) for a in value.args] else f"{p}={p}" for p in parameters
    )
    # The plain method's result can be awaited: a future (or a future of a client).
    table = METHODS[client][name.removesuffix("_async")]
    assert table.returns in (Returns.FUTURE, Returns.CLIENT_FUTURE)
    assert "APIFuture" in str(inspect.signature(plain).return_annotation) or "Future" in str(
        inspect.signature(plain).return_annotation
    )
