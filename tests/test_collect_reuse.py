"""The model's pass kept per top-level statement from one lint of a buffer to the next
(``model/facts/collect.py``: the server's lint on every edit): after each edit, the index made from the
kept records must be the one a fresh pass makes, table by table, to the order of the call sites."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.fixture_expectations import FIXTURES_ROOT
from tinker_lint.incremental.carry import for_buffer
from tinker_lint.model.facts.collect import ModuleIndex, collect
from tinker_lint.model.facts.scopes import Binding, FunctionInfo, LoopInfo, Scope
from tinker_lint.syntax.parse import parse_module

pytestmark = pytest.mark.usefixtures("fresh_buffers")

KEY = "buffer.py"

PROGRAM = """\
import tinker
from tinker import types as tt

pending = []
tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()


class Trainer:
    steps: int

    def __init__(self, client):
        self.client = client
        self.futures = []

    def step(self, batch):
        fut = self.client.forward_backward(batch, loss_fn="cross_entropy")
        self.futures.append(fut)
        return fut


def remember(fut):
    pending.append(fut)  # the module's list: this statement reads what others bound


def train(batches, step):
    for batch in batches:
        out = tc.forward_backward(batch, loss_fn="cross_entropy").result()
        if step % 10 == 0:
            print(out)
        results = [f.result() for f in pending]
        tc.optim_step(tt.AdamParams(learning_rate=1e-4))
    return results
"""

# Each edit of PROGRAM, in turn (each applied to the text before it).
EDITS = [
    ("    for batch in batches:\n", "    for batch in batches:\n        _edit = 1\n"),
    # A call more before the functions: theirs come one later in the module.
    ("ServiceClient().create", "ServiceClient(api_key=str(0)).create"),
    ("        _edit = 1\n", ""),
    ("class Trainer:\n", "class Trainer(object):\n"),
    ("from tinker import types as tt\n", "from tinker import types as tt\nimport asyncio\n"),
    ("def remember(fut):\n", "def remember(fut, pending=None):\n"),
    ("pending = []\n", ""),
    ("        if step % 10 == 0:\n", "        if step % 7 == 0:\n"),
    ("    return results\n", "    return results\n\n\ndef train(batches):\n    return batches\n"),
]


def _edited_texts() -> list[str]:
    texts = [PROGRAM]
    for old, new in EDITS:
        assert old in texts[-1], old
        texts.append(texts[-1].replace(old, new, 1))
    return texts


def _tables(index: ModuleIndex) -> dict[str, Any]:
    """Every table of ``index``, with the records named by their nodes (two passes over the same
    module have the same nodes, and their own record objects)."""

    def scope(s: Scope | None) -> Any:
        if s is not None and s.kind == "module":
            return ("module", s is index.module_scope)  # this pass's own, not a last pass's
        return None if s is None else (s.kind, id(s.node), s.class_name)

    def function(f: FunctionInfo | None) -> Any:
        return None if f is None else id(f.node)

    def loop(info: LoopInfo | None) -> Any:
        return None if info is None else id(info.node)

    def binding(b: Binding) -> Any:
        return (
            b.kind,
            id(b.expr),
            scope(b.scope),
            function(b.function),
            b.index,
            b.size,
            b.site,
            id(b.node),
            scope(b.namespace),
            b.order,
        )

    scopes: dict[Any, Any] = {}
    reached = [f.scope for f in index.functions] + [b.scope for b in index.bindings]
    for start in reached + [c.scope for c in index.calls] + index.scopes:
        s: Scope | None = start
        while s is not None:
            scopes[scope(s)] = (
                scope(s.parent),
                {name: [binding(b) for b in found] for name, found in s.bindings.items()},
                function(s.function),
                s.registry is index.bindings,
                {name: [binding(b) for b in found] for name, found in s.names.items()},
            )
            s = s.parent
    return {
        "parents": {key: id(node) for key, node in index.tree.parent_of.items()},
        "scope order": [scope(s) for s in index.scopes],
        "children": {key: [id(n) for n in kids] for key, kids in index.tree.children_of.items()},
        "imports": dict(index.imports.aliases),
        "bindings": [binding(b) for b in index.bindings],
        "scopes": scopes,
        "functions": [
            (
                id(f.node),
                scope(f.scope),
                function(f.parent),
                f.class_name,
                f.self_name,
                [id(r) for r in f.returns],
                [id(c.node) for c in f.calls],
            )
            for f in index.functions
        ],
        "function_of_node": {k: id(v.node) for k, v in index.function_of_node.items()},
        "methods": {c: {n: id(f.node) for n, f in m.items()} for c, m in index.methods.items()},
        "class_attrs": {
            c: {a: [binding(b) for b in found] for a, found in attrs.items()}
            for c, attrs in index.class_attrs.items()
        },
        "classes": {name: id(node) for name, node in index.classes.items()},
        "loops": [
            (
                id(info.node),
                scope(info.scope),
                function(info.function),
                loop(info.parent),
                info.guarded,
                info.guard_depth,
                [id(c.node) for c in info.calls],
            )
            for info in index.loops
        ],
        "loop_of_node": {k: id(v.node) for k, v in index.loop_of_node.items()},
        "calls": [
            (
                id(c.node),
                scope(c.scope),
                function(c.function),
                tuple(loop(info) for info in c.loops),
                c.guarded,
                c.guard_depth,
                c.order,
            )
            for c in index.calls
        ],
        "call_site_of": {k: id(v.node) for k, v in index.call_site_of.items()},
        "guarded_blocks": sorted(index.guarded_blocks),
        "guarded_statements": sorted(index.guarded_statements),
    }


def _differences(kept: ModuleIndex, fresh: ModuleIndex) -> list[str]:
    """The tables in which ``kept`` differs from ``fresh``."""
    mine, theirs = _tables(kept), _tables(fresh)
    return [name for name in mine if mine[name] != theirs[name]]


def _assert_same_as_fresh(texts: list[str]) -> list[int]:
    """Each text's index through the kept records equals a fresh pass's; how many functions'
    records each pass after the first took over (the same ``FunctionInfo`` objects)."""
    reused = []
    before: set[int] = set()
    for text in texts:
        module = parse_module(text, key=KEY)
        kept = collect(module, None, carry=for_buffer(KEY))
        differences = _differences(kept, collect(module, None))
        assert differences == []  # (no index in the assertion: pytest would print it whole)
        now = {id(f) for f in kept.functions}
        reused.append(len(now & before))
        before = now
    return reused[1:]


def test_each_edit_gives_the_fresh_pass_index() -> None:
    # Of ``__init__``, ``step``, ``remember`` and ``train``, the records of the statements each
    # edit left alone are taken over; ``remember`` only once ``pending`` is its own parameter
    # (edit 5): before, it stores into the module's list, and is walked every time.
    assert _assert_same_as_fresh(_edited_texts()) == [2, 3, 2, 1, 3, 3, 4, 3, 4]


def test_a_statement_that_reads_the_module_scope_is_walked_again() -> None:
    """``pending.append(fut)`` in ``remember`` stores into the module's ``pending`` when there is
    one: with ``pending = []`` added back, the kept record (made when there was none) would miss
    that store; the statement is walked again instead, both ways."""
    without = PROGRAM.replace("pending = []\n", "")
    seen: list[FunctionInfo] = []
    for text in (PROGRAM, without, PROGRAM):
        module = parse_module(text, key=KEY)
        index = collect(module, None, carry=for_buffer(KEY))
        differences = _differences(index, collect(module, None))
        assert differences == []
        remember = next(f for f in index.functions if f.name == "remember")
        walked_again = all(remember is not before for before in seen)
        assert walked_again
        seen.append(remember)
        stored = [b.kind for b in index.module_scope.bindings.get("pending", [])]
        assert stored == (["value", "element"] if text == PROGRAM else [])
    # An untouched statement that reads nothing bound elsewhere is the same record each time.
    steps = [f for f in index.functions if f.name == "step"]
    assert steps and steps[0] is next(
        f
        for f in collect(parse_module(PROGRAM, key=KEY), None, carry=for_buffer(KEY)).functions
        if f.name == "step"
    )


def test_a_changed_cadence_pattern_walks_everything_again() -> None:
    """``cadence-names`` decides which ``if`` is a cadence guard: records made under another
    pattern are not taken over."""
    module = parse_module(PROGRAM.replace("if step % 10 == 0:", "if report_now(step):"), key=KEY)
    first = collect(module, re.compile(r"report_now"), carry=for_buffer(KEY))
    guarded = len(first.guarded_blocks)
    assert guarded == 1
    other = re.compile(r"nothing_matches")
    again = collect(module, other, carry=for_buffer(KEY))
    differences = _differences(again, collect(module, other))
    assert differences == []
    guarded = len(again.guarded_blocks)
    assert guarded == 0
    shared = {id(f) for f in again.functions} & {id(f) for f in first.functions}
    assert shared == set()


@pytest.mark.parametrize("name", ["tnk1xx", "tnk2xx", "tnk4xx"])
def test_fixtures_with_a_line_added_to_a_function(name: str) -> None:
    """Every fixture with two functions or more, then with a statement added to its last one."""
    for path in sorted(Path(FIXTURES_ROOT, name).glob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        defs = [
            n for n, line in enumerate(lines) if line.startswith("def ") and line.endswith(":\n")
        ]
        if len(defs) < 2:
            continue
        edited = [*lines[: defs[-1] + 1], "    _edit = 0\n", *lines[defs[-1] + 1 :]]
        (reused,) = _assert_same_as_fresh([text, "".join(edited)])
        assert reused >= 1, path  # the first function was left alone


def test_a_pass_that_fails_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk that fails (too deep for the stack) after some records were added again leaves them
    pointing at its own module scope: the next pass must not take them over."""
    from tinker_lint.model.facts import collect as collect_module

    collect(parse_module(PROGRAM, key=KEY), None, carry=for_buffer(KEY))
    failing = PROGRAM.replace("    return results\n", "    return results  # changed\n")
    walk = collect_module._Collector._walk_recorded

    def too_deep(self: Any, statement: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(collect_module._Collector, "_walk_recorded", too_deep)
    with pytest.raises(RecursionError):
        collect(parse_module(failing, key=KEY), None, carry=for_buffer(KEY))
    monkeypatch.setattr(collect_module._Collector, "_walk_recorded", walk)
    module = parse_module(failing, key=KEY)
    index = collect(module, None, carry=for_buffer(KEY))
    differences = _differences(index, collect(module, None))
    assert differences == []


def test_a_guard_whose_modulus_is_a_module_constant_is_walked_again() -> None:
    """``step % SYNC == 0`` is no cadence while ``SYNC = 1`` (true on every step), and one once
    ``SYNC = 4``: the guarded statement reads the module's binding, so an edit of the constant
    above it gives the fresh pass's guards, not the kept ones."""
    program = (
        "SYNC = {}\n"
        "\n"
        "def train(tc, batches, adam):\n"
        "    for step, batch in enumerate(batches):\n"
        "        if step % SYNC == 0:\n"
        "            tc.save_state('s').result()\n"
        "        tc.optim_step(adam)\n"
    )
    guarded = []
    for value in (1, 4, 1):
        module = parse_module(program.format(value), key=KEY)
        index = collect(module, None, carry=for_buffer(KEY))
        assert _differences(index, collect(module, None)) == []
        guarded.append(len(index.guarded_blocks))
    assert guarded == [0, 1, 0]
