"""What TNK104 and TNK203 skip or keep to answer each edit sooner, with the same findings:
TNK104 reads a coroutine's events without the rest of ``flow.linear_steps``; TNK203 asks the cost
shape only of loops that iterate or index a tensor; and the walks that only a loop's subtree
decides (the subscripts its body indexes by a name, what an epoch-loop candidate binds) are kept
from one lint of a buffer for the next, as ``flow.py``'s are."""

from __future__ import annotations

import itertools

import libcst as cst
import pytest

from tests.served import served_and_fresh
from tinker_lint.incremental.carry import for_buffer
from tinker_lint.io.settings import Settings
from tinker_lint.model.analyses import steps, tensor_loops
from tinker_lint.model.analyses.flow import events_in_order, linear_steps
from tinker_lint.model.query import LoopInfo, SemanticModel
from tinker_lint.rules.base import Context
from tinker_lint.rules.tnk203_per_element_array_work import PerElementArrayWork
from tinker_lint.syntax import parse

pytestmark = pytest.mark.usefixtures("fresh_buffers")

_keys = itertools.count()

# A submit or a wait in every kind of statement ``linear_steps`` goes through, and one in a
# nested function, which runs later (not here).
EVERY_STATEMENT = """\
import tinker


async def run(tc: tinker.TrainingClient, batches, adam):
    fut = tc.forward_backward(batches[0], loss_fn="cross_entropy")
    if fut.result():
        tc.optim_step(adam)
    elif tc.forward(batches[1], loss_fn="cross_entropy").result():
        pass
    else:
        await tc.optim_step_async(adam)
    while tc.forward(batches[2], loss_fn="cross_entropy").result():
        break
    else:
        tc.optim_step(adam)
    for batch in tc.forward(batches[3], loss_fn="cross_entropy").result():
        tc.forward_backward(batch, loss_fn="cross_entropy")
    else:
        tc.optim_step(adam).result()
    with tc.forward(batches[4], loss_fn="cross_entropy").result() as out:
        tc.optim_step(adam)
    try:
        tc.forward_backward(batches[5], loss_fn="cross_entropy").result()
    except ValueError:
        tc.optim_step(adam)
    else:
        tc.optim_step(adam)
    finally:
        tc.optim_step(adam)
    match tc.forward(batches[6], loss_fn="cross_entropy").result():
        case _:
            tc.optim_step(adam)

    def later():
        tc.optim_step(adam).result()

    if fut: tc.optim_step(adam); tc.optim_step(adam)
"""


def test_events_in_order_are_those_of_linear_steps() -> None:
    model = SemanticModel(cst.parse_module(EVERY_STATEMENT))
    run, _later = model.functions  # ``later``, nested: its events are not run's
    body = run.node.body
    assert isinstance(body, cst.IndentedBlock)
    events = list(events_in_order(model, body.body, run.scope))
    # The very events (``events_in`` memoises them), in the same order.
    stepped = [event for step in linear_steps(model, body.body, run.scope) for event in step.events]
    assert len(events) == len(stepped) and all(a is b for a, b in zip(events, stepped, strict=True))
    assert [(type(e).__name__, model.line_of(e.node)) for e in events] == [
        ("Submit", 5),
        ("Wait", 6),
        ("Submit", 7),
        ("Submit", 8),
        ("Wait", 8),
        ("Submit", 11),
        ("Submit", 12),
        ("Wait", 12),
        ("Submit", 15),
        ("Submit", 16),
        ("Wait", 16),
        ("Submit", 17),
        ("Submit", 19),
        ("Wait", 19),
        ("Submit", 20),
        ("Wait", 20),
        ("Submit", 21),
        ("Submit", 23),
        ("Wait", 23),
        ("Submit", 25),
        ("Submit", 27),
        ("Submit", 29),
        ("Submit", 30),
        ("Wait", 30),
        ("Submit", 32),
        ("Submit", 37),
        ("Submit", 37),
    ]


PER_ELEMENT = """\
import torch


def note(batch):
    print(len(batch))


for batch in batches:
    for datum in batch:
        w = torch.tensor(datum["weights"])
        kept = [t for t in range(len(w)) if w[t] > 0]
    note(batch)
    training_client.forward_backward(make_datums(batch), loss_fn="cross_entropy")
"""
FINDING = (
    11,
    28,
    "TNK203",
    "Loop on line 11 goes through the tensor `w` per element in the step loop on line 8\n"
    "help: The Python loop over `range(len(w))` runs once per element of `w` (line 11), for each "
    "of `batch` (line 9), on every iteration of a loop that submits `forward_backward` (line 13): "
    "vectorize it with a mask or an index tensor",
)


def test_only_loops_over_a_tensor_get_a_cost_shape() -> None:
    model = SemanticModel(cst.parse_module(PER_ELEMENT))
    ctx = Context(model, Settings().tinker_version, "train.py")
    findings = list(PerElementArrayWork().check(ctx))
    found = [(model.line_of(f.node), f"{f.message}\nhelp: {f.help}") for f in findings]
    assert found == [(11, FINDING[3])]
    # The comprehension indexes the tensor ``w``; the two ``for`` loops neither iterate nor index
    # one, and their shapes are not worked out (``torch.tensor`` is asked as a call, not a loop).
    shaped = [model.line_of(k.node) for k in model.costs._shapes if isinstance(k, LoopInfo)]
    assert shaped == [11]


def test_findings_after_edits_are_a_fresh_lints() -> None:
    noted = PER_ELEMENT.replace("print(len(batch))", "print(len(batch), flush=True)")
    unindexed = PER_ELEMENT.replace("range(len(w)) if w[t] > 0", 'datum["weights"] if t > 0')
    found = served_and_fresh(
        [PER_ELEMENT, noted, unindexed, PER_ELEMENT], f"/rule-costs-test/{next(_keys)}/train.py"
    )
    assert found == [[FINDING], [FINDING], [], [FINDING]]


def _model(text: str, key: str) -> SemanticModel:
    return SemanticModel(parse.parse_module(text, key=key), carry=for_buffer(key))


def test_an_unchanged_loop_is_not_walked_again() -> None:
    key = f"/rule-costs-test/{next(_keys)}/train.py"
    first = _model(PER_ELEMENT, key)
    comprehension = first.loops[-1]
    assert isinstance(comprehension.node, cst.ListComp)
    subscripts = tensor_loops._indexed_subscripts(first, comprehension.node)
    assert [(first.line_of(s), sorted(names), stored) for s, names, stored in subscripts] == [
        (11, ["t"], False)
    ]
    outer = first.loops[0].node
    bound = steps._bound_in_loop(first, outer)
    assert sorted(bound) == [f"{k}{n}" for k in "=^" for n in ("batch", "datum", "kept", "t", "w")]
    # Another function edited: the parse hands the loops back, and their walks are served.
    second = _model(PER_ELEMENT.replace("print(len(batch))", "print(batch)"), key)
    assert second.loops[-1].node is comprehension.node and second.loops[0].node is outer
    assert tensor_loops._indexed_subscripts(second, comprehension.node) is subscripts
    assert steps._bound_in_loop(second, outer) is bound
    # The loop edited: walked again.
    third = _model(PER_ELEMENT.replace("w[t] > 0", "w[t] > 1"), key)
    again = tensor_loops._indexed_subscripts(third, third.loops[-1].node)
    assert again is not subscripts and [third.line_of(s) for s, _, _ in again] == [11]
