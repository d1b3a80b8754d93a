"""A function's summary does not depend on which question the model was asked first (issue 32, H:
a body walked before the summaries were settled left the function holding it summarised as
doing nothing)."""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.model.analyses.flow import events_in
from tinker_lint.model.query import SemanticModel

SOURCE = """\
import tinker

def make(n):
    return [n]

def step(tc, data):
    out = tc.forward_backward(make(data), "cross_entropy").result()
    return out
"""


def _summary(first: str | None) -> dict[str, object]:
    model = SemanticModel(cst.parse_module(SOURCE))
    step = next(f for f in model.functions if f.name == "step")
    line = step.node.body.body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    assign = line.body[0]
    assert isinstance(assign, cst.Assign)
    asked = {"statement": line, "assignment": assign, "value": assign.value}
    if first is not None:
        events_in(model, asked[first], step.scope)
    return model.helpers.summaries.of_function(step).to_json()


@pytest.mark.parametrize("first", ["statement", "assignment", "value"])
def test_the_summary_is_the_same_whatever_was_asked_first(first: str) -> None:
    summary = _summary(first)
    assert summary == _summary(None)
    assert summary["submits"] == ["train"] and summary["blocks"] is True
