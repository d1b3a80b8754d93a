"""The model's def-use questions (``model/analyses/dataflow.py``): the statement of a node, the names a
target binds, the reads of names after a statement."""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.model.analyses.dataflow import assigned_names, chain_root, target_names
from tinker_lint.model.query import SemanticModel


def _statement(source: str) -> cst.BaseSmallStatement:
    line = cst.parse_module(source).body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    return line.body[0]


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("x = f()\n", {"x"}),
        ("a, (b, c) = f()\n", {"a", "b", "c"}),
        ("[a, b] = f()\n", {"a", "b"}),
        ("first, *rest = f()\n", {"first", "rest"}),
        ("a = b = f()\n", {"a", "b"}),
        ("x: int = 1\n", {"x"}),
        ("total += loss\n", {"total"}),
        ("self.x = f()\n", set()),  # an attribute binds no name
        ("xs[0] = f()\n", set()),
        ("f(x)\n", set()),  # not an assignment
    ],
)
def test_assigned_names(source: str, names: set[str]) -> None:
    assert assigned_names(_statement(source)) == names


def test_target_names_of_a_loop_target() -> None:
    loop = cst.parse_module("for i, (x, *ys) in pairs:\n    pass\n").body[0]
    assert isinstance(loop, cst.For)
    assert target_names(loop.target) == {"i", "x", "ys"}


SOURCE = """\
def step(model, batch):
    loss = model(batch)
    value = loss.item()
    if value > 1:
        print(value)
    value = 0
    total = value + 1
    return total


value = 3
"""


def _model() -> SemanticModel:
    return SemanticModel(cst.parse_module(SOURCE))


def test_reads_after_a_statement_in_source_order() -> None:
    model = _model()
    function = model.functions[0].node
    read = function.body.body[1].body[0]  # value = loss.item()
    assert isinstance(read, cst.Assign)
    uses = model.dataflow.reads_after(function, {"value", "loss"}, read)
    # ``loss.item()`` (in the statement itself: its nodes come after it), ``if value > 1``,
    # ``print(value)`` and ``value + 1``; not the rebinding ``value = 0``, not ``model(batch)``'s
    # ``loss =`` before it, not the module's ``value`` (another scope).
    assert [(type(parent).__name__, model.line_of(node)) for node, parent in uses] == [
        ("Attribute", 3),
        ("Comparison", 4),
        ("Arg", 5),
        ("BinaryOperation", 7),
    ]


def test_the_statement_of_a_node() -> None:
    model = _model()
    function = model.functions[0].node
    read = function.body.body[1].body[0]
    assert isinstance(read, cst.Assign)
    call = read.value
    assert model.dataflow.statement_of(call) is read
    assert model.dataflow.statement_of(read) is function  # a line of small ones is none
    assert model.dataflow.statement_of(function) is None


@pytest.mark.parametrize(
    ("source", "attributes", "root"),
    [
        ("x.detach().float()[0]", False, "x"),
        ("self.loss.item()", False, "self.loss"),  # to the dotted name
        ("self.loss.item()", True, "self"),
        ('batch.x["ids"].cuda()', True, "batch"),
        ("f(x).item()", False, "f(x)"),  # a call of a function: its value is the root
    ],
)
def test_chain_root(source: str, attributes: bool, root: str) -> None:
    found = chain_root(cst.parse_expression(source), attributes=attributes)
    assert cst.Module([]).code_for_node(found) == root


def test_up_to_the_statement() -> None:
    model = _model()
    function = model.functions[0].node
    read = function.body.body[1].body[0]  # value = loss.item()
    assert isinstance(read, cst.Assign)
    call = read.value
    assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
    receiver = call.func.value  # loss
    assert [type(parent).__name__ for _, parent in model.dataflow.up_to_statement(receiver)] == [
        "Attribute",
        "Call",
    ]
    # From a small statement, up to the compound one around its line (a line is no statement).
    assert [type(parent).__name__ for _, parent in model.dataflow.up_to_statement(read)] == [
        "SimpleStatementLine",
        "IndentedBlock",
    ]
