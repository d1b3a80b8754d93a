"""The SDK tables in ``tinker_lint/model/facts/sdk.py`` agree with the installed, pinned ``tinker``.

The linter never imports the code it reads, but this test may import the SDK itself: it is a test
dependency (``tinker==0.38.0`` in the ``test`` extra). A new, renamed or re-typed SDK method makes
these tests fail until the table classifies it. Each check collects every disagreement, so one run
lists all the table entries to fix.
"""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import re
import textwrap

import pytest
from packaging.version import Version

from tinker_lint.model.analyses.flow import STORING_METHODS
from tinker_lint.model.facts.sdk import (
    METHODS,
    NEWEST_KNOWN_TINKER,
    NON_MUTATING_METHODS,
    Client,
    Returns,
    SdkMethod,
)

tinker = pytest.importorskip(
    "tinker", reason="tinker is a test dependency: pip install -e '.[test]'"
)

PINNED_TINKER = "0.38.0"
TABLE = "tinker_lint/model/facts/sdk.py"

# Names in a return annotation that say which client the (awaited) value is.
CLIENT_IN_ANNOTATION = {
    "BackcompatTrainingClientFuture": Client.TRAINING,
    "BackcompatSamplingClientFuture": Client.SAMPLING,
    **{c.value: c for c in Client},
}

CLIENTS = pytest.mark.parametrize("client", list(Client), ids=[c.value for c in Client])


def public_members(client: Client) -> dict[str, object]:
    cls = getattr(tinker, client.value)
    return {name: obj for name, obj in inspect.getmembers(cls) if not name.startswith("_")}


def classified(client: Client) -> dict[str, tuple[object, SdkMethod]]:
    """The SDK object and table entry of each public member; membership is checked separately."""
    table = METHODS.get(client, {})
    return {
        name: (obj, table[name]) for name, obj in public_members(client).items() if name in table
    }


def return_annotation(obj: object) -> str:
    """The annotation's text (the SDK uses ``from __future__ import annotations``); '' if none."""
    if not callable(obj):
        return ""  # a property such as ServiceClient.holder
    annotation = inspect.signature(obj).return_annotation
    return "" if annotation is inspect.Signature.empty else str(annotation)


def names_in(annotation: str) -> list[str]:
    return re.findall(r"\w+", annotation)


def is_future(annotation: str) -> bool:
    """APIFuture, AwaitableConcurrentFuture and the Backcompat*ClientFuture wrappers."""
    return any(name.endswith("Future") for name in names_in(annotation))


def is_coroutine_function(obj: object) -> bool:
    return callable(obj) and inspect.iscoroutinefunction(inspect.unwrap(obj))


def source_def(obj: object) -> ast.FunctionDef | ast.AsyncFunctionDef:
    node = ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return node


def own_returns(fn: ast.AST) -> list[ast.Return]:
    """The ``return`` statements of ``fn`` itself, not of functions nested in it."""
    found, stack = [], list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return found


def async_returns(client: Client, obj: object) -> Returns:
    """Read from the source: ``return self.<m>(...)`` with no ``await``, where ``<m>`` is a sync
    method returning a future, hands back that future (await twice); anything else is the value."""
    cls = getattr(tinker, client.value)
    for ret in own_returns(source_def(obj)):
        value = ret.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == "self"
        ):
            callee = getattr(cls, value.func.attr)
            if not is_coroutine_function(callee) and is_future(return_annotation(callee)):
                return Returns.FUTURE_AFTER_AWAIT
    return Returns.VALUE_AFTER_AWAIT


def is_experimental(obj: object) -> bool:
    """tinker marks experimental APIs with ``experimental = typing_extensions.deprecated`` and
    ``category=ExperimentalWarning``: ``__deprecated__`` is set, but nothing is deprecated."""
    return any(
        isinstance(dec, ast.Call)
        and any(
            kw.arg == "category" and ast.unparse(kw.value).endswith("ExperimentalWarning")
            for kw in dec.keywords
        )
        for dec in source_def(obj).decorator_list
    )


def assert_no_problems(problems: list[str]) -> None:
    if problems:
        pytest.fail(
            f"{TABLE} disagrees with tinker {PINNED_TINKER}:\n" + "\n".join(problems), pytrace=False
        )


def test_installed_tinker_is_the_pinned_version() -> None:
    installed = importlib.metadata.version("tinker")
    assert installed == PINNED_TINKER, (
        f"tinker {installed} is installed, but these tests check the tables against the pinned "
        f"{PINNED_TINKER}: pip install -e '.[test]'"
    )
    assert Version(PINNED_TINKER) == NEWEST_KNOWN_TINKER, (
        f"NEWEST_KNOWN_TINKER in {TABLE} should be the pinned tinker {PINNED_TINKER}"
    )


@CLIENTS
def test_every_public_method_is_classified(client: Client) -> None:
    in_sdk, in_table = set(public_members(client)), set(METHODS.get(client, {}))
    assert_no_problems(
        [
            f"{client.value}.{name} is public in the SDK: add it to METHODS[Client.{client.name}]"
            for name in sorted(in_sdk - in_table)
        ]
        + [
            f"{client.value}.{name} is in METHODS[Client.{client.name}] but not in the SDK: "
            "remove the stale entry"
            for name in sorted(in_table - in_sdk)
        ]
    )


@CLIENTS
def test_deprecated_flags_match_the_sdk(client: Client) -> None:
    members = public_members(client)
    marked = {name for name, obj in members.items() if hasattr(obj, "__deprecated__")}
    deprecated = {name for name in marked if not is_experimental(members[name])}
    problems = []
    for name, (_, method) in sorted(classified(client).items()):
        if method.deprecated and name not in deprecated:
            why = "is experimental, not deprecated" if name in marked else "is not deprecated"
            problems.append(f"{client.value}.{name} {why} in the SDK: set deprecated=False")
        elif not method.deprecated and name in deprecated:
            problems.append(
                f"{client.value}.{name} is @deprecated in the SDK: set deprecated=True "
                "(sync_deprecated=True in its _pair)"
            )
    assert_no_problems(problems)


@CLIENTS
def test_async_methods_and_await_counts(client: Client) -> None:
    awaited = (Returns.FUTURE_AFTER_AWAIT, Returns.VALUE_AFTER_AWAIT)
    problems = []
    for name, (obj, method) in sorted(classified(client).items()):
        coroutine = is_coroutine_function(obj)
        where = f"{client.value}.{name}"
        if name.endswith("_async") and not coroutine:
            problems.append(f"{where} is not an async def in the SDK: classify it as a sync method")
        elif coroutine and method.returns not in awaited:
            problems.append(
                f"{where} is an async def: set returns=FUTURE_AFTER_AWAIT or VALUE_AFTER_AWAIT, "
                f"not {method.returns.name}"
            )
        elif not coroutine and method.returns in awaited:
            problems.append(f"{where} is not an async def: returns cannot be {method.returns.name}")
        if not coroutine:
            continue
        expected = async_returns(client, obj)
        if method.returns in awaited and method.returns is not expected:
            problems.append(
                f"{where}'s body makes it {expected.name} (read from its return statements): "
                f"set returns={expected.name}"
            )
        # The annotation says the same as the body; if not, the source reading above is stale.
        annotated = is_future(return_annotation(obj))
        assert annotated == (expected is Returns.FUTURE_AFTER_AWAIT), (
            f"{where}: its return annotation {return_annotation(obj)!r} and its body disagree "
            "about a future; update async_returns() in this test"
        )
    assert_no_problems(problems)


@CLIENTS
def test_sync_returns_match_annotations(client: Client) -> None:
    problems = []
    for name, (obj, method) in sorted(classified(client).items()):
        if is_coroutine_function(obj):
            continue
        annotation = return_annotation(obj)
        if annotation.startswith("Backcompat"):
            expected = {Returns.CLIENT_FUTURE}
        elif is_future(annotation):
            expected = {Returns.FUTURE}
        else:
            expected = {Returns.VALUE}
        if method.returns not in expected:
            (want,) = expected
            problems.append(
                f"{client.value}.{name} returns {annotation or 'no annotation'}: "
                f"set returns={want.name}, not {method.returns.name}"
            )
    assert_no_problems(problems)


@CLIENTS
def test_factories_match_annotations(client: Client) -> None:
    problems = []
    for name, (obj, method) in sorted(classified(client).items()):
        annotation = return_annotation(obj)
        made = {CLIENT_IN_ANNOTATION[n] for n in names_in(annotation) if n in CLIENT_IN_ANNOTATION}
        expected = made.pop() if len(made) == 1 else None
        assert not made, f"{client.value}.{name} returns {annotation}: more than one client?"
        if method.makes is not expected:
            want = f"Client.{expected.name}" if expected else "None"
            problems.append(
                f"{client.value}.{name} returns {annotation or 'no annotation'}: set makes={want}"
            )
    assert_no_problems(problems)


# A receiver of each class of NON_MUTATING_METHODS, and each method's arguments.
NON_MUTATING_SAMPLES: dict[str, tuple[object, dict[str, tuple[object, ...]]]] = {
    "ModelInput": (
        tinker.ModelInput.from_ints([1, 2, 3]),
        {"append": (tinker.EncodedTextChunk(tokens=[4, 5]),), "append_int": (4,)},
    ),
}


def test_non_mutating_methods_return_a_new_value() -> None:
    """Each method of ``NON_MUTATING_METHODS``, run on the installed SDK, returns a new value and
    leaves its receiver as it was (``prompt.append(chunk)`` does not change ``prompt``)."""
    problems = []
    for class_name, methods in sorted(NON_MUTATING_METHODS.items()):
        assert class_name in NON_MUTATING_SAMPLES, f"add a {class_name} to NON_MUTATING_SAMPLES"
        receiver, arguments = NON_MUTATING_SAMPLES[class_name]
        assert type(receiver) is getattr(tinker, class_name)
        for method in sorted(methods):
            before = receiver.model_dump()  # type: ignore[attr-defined]
            made = getattr(receiver, method)(*arguments[method])
            if made is receiver or receiver.model_dump() != before:  # type: ignore[attr-defined]
                problems.append(f"{class_name}.{method} changes its receiver: not non-mutating")
            elif type(made) is not type(receiver) or made.model_dump() == before:
                problems.append(f"{class_name}.{method} does not return a new {class_name}")
    assert_no_problems(problems)


def test_sdk_methods_named_like_storing_ones_are_classified() -> None:
    """The model takes ``x.append(v)`` (any of flow.STORING_METHODS) to store ``v`` in ``x``. An
    SDK class with a method of such a name must be in NON_MUTATING_METHODS, or this test must
    learn that it stores (none does in tinker 0.38.0)."""
    import tinker.types

    seen: set[type] = set()
    problems = []
    for module in (tinker, tinker.types):
        for class_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls in seen or not cls.__module__.startswith("tinker"):
                continue
            seen.add(cls)
            own = {
                name
                for klass in cls.__mro__
                if klass.__module__.startswith("tinker")
                for name in vars(klass)
            }
            for name in sorted(own & STORING_METHODS):
                if name not in NON_MUTATING_METHODS.get(class_name, frozenset()):
                    problems.append(f"{class_name}.{name}: classify it in NON_MUTATING_METHODS")
    assert_no_problems(problems)
