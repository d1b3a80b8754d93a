"""The walks of ``flow.py`` that depend on a node's subtree only (``names_read``, the writes of a
statement), kept from one lint of a buffer to the next: a node the parse hands back unchanged is
not walked again, an edited one is, and the findings after each edit are a fresh lint's."""

from __future__ import annotations

import itertools

import libcst as cst
import pytest

from tests.served import served_and_fresh
from tinker_lint.incremental import buffers
from tinker_lint.incremental.carry import BufferCarry, for_buffer
from tinker_lint.model.analyses import flow
from tinker_lint.model.query import SemanticModel
from tinker_lint.syntax import parse

_keys = itertools.count()


pytestmark = pytest.mark.usefixtures("fresh_buffers")


PROGRAM = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
adam = tinker.AdamParams(learning_rate=1e-4)


def log(metrics):
    print(metrics)


def train(batches):
    for batch in batches:
        out = tc.forward_backward(batch, loss_fn="cross_entropy").result()
        tc.optim_step(adam)
        log(out)
"""
MESSAGE = (
    "Waiting for `forward_backward` before submitting `optim_step`, which does not need it\n"
    "help: Submit `optim_step` first, then wait for both (requests run in submission order; "
    "`tinker_cookbook.supervised.train` pipelines this)"
)


def _path() -> str:
    return f"/flow-reuse-test/{next(_keys)}/train.py"


def _model(text: str, key: str | None) -> SemanticModel:
    return SemanticModel(parse.parse_module(text, key=key), carry=for_buffer(key))


def _loop_statements(model: SemanticModel) -> list[cst.CSTNode]:
    """The small statements of ``train``'s loop body."""
    train = next(f for f in model.functions if f.node.name.value == "train")
    loop = train.node.body.body[0]
    assert isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock)
    return [line.body[0] for line in loop.body.body if isinstance(line, cst.SimpleStatementLine)]


def test_an_unchanged_statement_is_not_walked_again() -> None:
    key = _path()
    first = _model(PROGRAM, key)
    before = [
        (flow.names_read(first, s), flow.names_written(first, s)) for s in _loop_statements(first)
    ]
    edited = PROGRAM.replace("    print(metrics)", "    print(metrics, flush=True)")
    second = _model(edited, key)
    statements = _loop_statements(second)
    assert statements == _loop_statements(first)  # the parse handed them back
    after = [(flow.names_read(second, s), flow.names_written(second, s)) for s in statements]
    # The very sets of the last lint: served, not walked again.
    assert all(a[0] is b[0] and a[1] is b[1] for a, b in zip(after, before, strict=True))
    assert sorted(after[0][1]) == ["=out", "^out"]
    assert sorted(after[2][0]) == ["=log", "=out", "^log", "^out"]


def test_an_edited_statement_is_walked_again() -> None:
    key = _path()
    first = _model(PROGRAM, key)
    old = [flow.names_read(first, s) for s in _loop_statements(first)]
    edited = PROGRAM.replace("        log(out)", "        log(out, batch)")
    second = _model(edited, key)
    new = [flow.names_read(second, s) for s in _loop_statements(second)]
    assert new[2] is not old[2]
    assert sorted(new[2]) == ["=batch", "=log", "=out", "^batch", "^log", "^out"]


def test_nothing_is_kept_without_a_key_or_in_a_batch_run() -> None:
    first = _model(PROGRAM, None)
    old = [flow.names_read(first, s) for s in _loop_statements(first)]
    second = _model(PROGRAM, None)
    assert all(
        a is not b
        for a, b in zip(
            old, map(lambda s: flow.names_read(second, s), _loop_statements(second)), strict=True
        )
    )
    key = _path()
    with buffers.parses_kept(0):
        model = _model(PROGRAM, key)
        flow.names_read(model, _loop_statements(model)[0])
    assert BufferCarry(key).get("walks") is None


def test_a_dependent_submit_added_in_another_function_silences_the_wait() -> None:
    # ``log`` made to submit with the result: while ``optim_step`` comes first the wait is still
    # reported; once ``log(out)`` comes first, its request needs the result: not reported, and
    # reported again when ``log`` submits nothing.
    submits = PROGRAM.replace("    print(metrics)", "    tc.forward_backward(metrics, loss_fn='x')")
    moved = PROGRAM.replace(
        "        tc.optim_step(adam)\n        log(out)\n",
        "        log(out)\n        tc.optim_step(adam)\n",
    )
    both = moved.replace("    print(metrics)", "    tc.forward_backward(metrics, loss_fn='x')")
    found = served_and_fresh([PROGRAM, submits, PROGRAM, both, moved], _path())
    finding = [(13, 67, "TNK101", MESSAGE)]
    assert found == [finding, finding, finding, [], finding]


def test_a_line_added_above_moves_the_findings() -> None:
    above = PROGRAM.replace("def log(metrics):\n", "def log(metrics):\n    # shown\n\n")
    found = served_and_fresh([PROGRAM, above], _path())
    assert found == [[(13, 67, "TNK101", MESSAGE)], [(15, 67, "TNK101", MESSAGE)]]
