"""The model's def-use questions (``model/analyses/dataflow.py``): the statement of a node, the names a
target binds, the reads of names after a statement and how they use the value; and the questions
rules used to answer with copies of their own (issue 31): where a value lives (``tensors.py``)."""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.model.analyses.dataflow import (
    assigned_names,
    chain_root,
    indexes,
    loop_targets,
    names_in,
    root_call,
    target_names,
)
from tinker_lint.model.analyses.tensors import iterated_part, to_cpu
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


# --- how a value is used after the statement that makes it --------------------------------------
USES = """\
import math


def step(t, xs):
    n = t.item()
    x = t.item()
    for i in range(n):
        pass
    if x > 0:
        pass
    y = t.item()
    z = y * 2
    w = z + 1
    v = w - 1
    if v > 0:
        pass
    g = t.item()
    if math.isnan(g):
        pass
    k = t.item()
    if len(k) > 0:
        pass
    m = t.item()
    offsets.append(m)
    for a in offsets:
        pass
    r = t.item()
    return r


c = t.item()
rows = [row for row in c]
"""


def _uses_model() -> tuple[SemanticModel, dict[str, cst.BaseSmallStatement]]:
    """The model of ``USES`` and its assignments ``name = t.item()``, by name."""
    model = SemanticModel(cst.parse_module(USES))
    reads: dict[str, cst.BaseSmallStatement] = {}
    for node in model.walk(model.module):
        if (
            isinstance(node, cst.Assign)
            and isinstance(node.value, cst.Call)
            and cst.Module([]).code_for_node(node.value) == "t.item()"
        ):
            target = node.targets[0].target
            assert isinstance(target, cst.Name)
            reads[target.value] = node
    return model, reads


def _later(name: str, guards: frozenset[str] = frozenset()) -> set[str]:
    model, reads = _uses_model()
    statement = reads[name]
    function = next((f for f in model.functions if model.contains(f.node, statement)), None)
    scope = function.scope if function is not None else model.module_scope
    return model.dataflow.later_uses(statement, scope, function, guards=guards)


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("n", {"branch"}),  # a ``range`` argument
        ("x", {"branch"}),  # an ``if`` test
        ("y", set()),  # followed two assignments (``z``, ``w``), not the third (``v``, tested)
        ("g", {"branch"}),  # ``if math.isnan(g):``: a guard only when the caller names it one
        ("k", set()),  # ``if len(k) > 0:`` reads how many, not the values
        ("m", {"data"}),  # ``offsets.append(m)``, then ``for a in offsets``
        ("r", {"returned"}),
        ("c", {"data"}),  # a comprehension's iterable, at module level
    ],
)
def test_later_uses(name: str, kinds: set[str]) -> None:
    assert _later(name) == kinds


def test_later_uses_with_guards() -> None:
    assert _later("g", guards=frozenset({"math.isnan"})) == {"guard"}
    # Near miss: another guard; the ``if`` around it is then the use.
    assert _later("g", guards=frozenset({"math.isinf"})) == {"branch"}


def test_uses_follow_assignments_up_to_a_limit() -> None:
    source = """\
def step(t):
    a = t.item()
    b = a
    c = b
    if c:
        pass
"""
    model = SemanticModel(cst.parse_module(source))
    function = model.functions[0]
    first = function.node.body.body[0].body[0]
    assert model.dataflow.uses({"a"}, first, function.scope, function) == {"branch"}
    # Near miss: one assignment followed (``b``), not the second (``c``) that is branched on.
    assert model.dataflow.uses({"a"}, first, function.scope, function, follow=1) == set()


def test_uses_after_an_append() -> None:
    source = """\
def step(t, offsets):
    offsets.append(int(t.item()))
    for start in offsets:
        pass
    other.append(t)
"""
    model = SemanticModel(cst.parse_module(source))
    function = model.functions[0]
    statement = function.node.body.body[0].body[0]
    assert isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)
    read = statement.value.args[0].value  # int(t.item())
    dataflow = model.dataflow
    assert dataflow.appended_to(read) == "offsets"
    assert dataflow.uses({"offsets"}, statement, function.scope, function, follow=1) == {"data"}
    # Near miss: the receiver of ``append`` is no argument of it.
    append = statement.value.func
    assert isinstance(append, cst.Attribute)
    assert dataflow.appended_to(append.value) is None


@pytest.mark.parametrize(
    ("source", "inside"),
    [
        ("x[t.item():]", True),
        ("x[t.item()]", True),
        ("range(t.item())", True),
        ("slice(0, t.item())", True),
        ("f(t.item())", False),  # near miss: an argument of another function
        ("t.item()[x]", False),  # near miss: the indexed value, not its index
    ],
)
def test_in_index(source: str, inside: bool) -> None:
    model = SemanticModel(cst.parse_module(f"y = {source}\n"))
    read = next(
        n
        for n in model.walk(model.module)
        if isinstance(n, cst.Call) and cst.Module([]).code_for_node(n) == "t.item()"
    )
    assert model.dataflow.in_index(read) is inside
    pairs = list(model.dataflow.up_to_statement(read))
    assert any(indexes(parent, child) for child, parent in pairs) is inside


@pytest.mark.parametrize(
    ("source", "root"),
    [
        ("torch.tensor(x).float().view(-1)", "torch.tensor(x)"),
        ("t.cpu().numpy()", "t.cpu()"),
        ("torch.tensor(x)[0].float()", "torch.tensor(x)[0].float()"),  # near miss: a subscript
        ("x", "x"),
    ],
)
def test_root_call(source: str, root: str) -> None:
    assert cst.Module([]).code_for_node(root_call(cst.parse_expression(source))) == root


# --- value on the CPU (``tensors.py``) ------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "index", "wrappers", "part"),
    [
        ("zip(a, b)", 1, True, "b"),
        ("zip(a, b)", 1, False, "b"),
        ("enumerate(a)", 1, False, "a"),
        ("enumerate(a)", 0, False, None),  # the counter
        ("zip(reversed(a), b)", 0, True, "a"),
        ("zip(reversed(a), b)", 0, False, "reversed(a)"),  # as written, without wrappers
        ("list(zip(a, b))", 0, True, "a"),
        ("list(zip(a, b))", 0, False, None),  # near miss: a wrapper around the zip
        ("zip(a, b)", 2, False, None),  # near miss: no third iterable
        ("t", None, True, "t"),
    ],
)
def test_iterated_part(source: str, index: int | None, wrappers: bool, part: str | None) -> None:
    found = iterated_part(cst.parse_expression(source), index, wrappers=wrappers)
    assert (None if found is None else cst.Module([]).code_for_node(found)) == part


@pytest.mark.parametrize(
    ("source", "copies"),
    [
        ('t.to("cpu")', True),
        ('t.to(device="cpu")', True),
        ('t.to("cpu", non_blocking=True)', True),
        ('t.to(torch.device("cpu"))', False),  # the string only
        ('t.to("cuda")', False),
        ('t.to(dtype="cpu")', False),  # near miss: the string, for another keyword
    ],
)
def test_to_cpu(source: str, copies: bool) -> None:
    call = cst.parse_expression(source)
    assert isinstance(call, cst.Call)
    assert to_cpu(call) is copies


LOSSES = """\
def step(self, model, batch):
    loss = model(batch)
    loss.backward()
    self.total.mean().backward()
    other = loss * 2
"""


@pytest.mark.parametrize(
    ("source", "chains", "is_loss"),
    [
        ("loss", False, True),
        ("loss", True, True),
        ("loss.detach()", True, True),  # through the chain
        ("loss.detach()", False, False),  # near miss: a plain name only
        ("self.total", True, True),  # ``self.total.mean().backward()``
        ("self.total", False, False),
        ("other", True, False),  # near miss: made from the loss, not it
    ],
)
def test_is_loss(source: str, chains: bool, is_loss: bool) -> None:
    model = SemanticModel(cst.parse_module(LOSSES))
    function = model.functions[0]
    expr = cst.parse_expression(source)
    assert model.tensors.is_loss(expr, function, through_chains=chains) is is_loss
    assert model.tensors.is_loss(expr, None, through_chains=chains) is False  # module level


MADE = """\
import numpy as np
import torch


def make(model, tokenizer, t, masks, out_cpu):
    a = torch.tensor([1, 2])
    b = torch.tensor([1, 2], device="cuda")
    c = np.zeros(3)
    d = t.detach().cpu().float()
    e = torch.load("x.pt", map_location="cpu")
    f = torch.load("x.pt")
    g = tokenizer(text, return_tensors="pt")
    out = model.generate(g)
    h = out[:, 3:]
    for row, mask in zip(out_cpu, masks):
        pass
    out_cpu = t.cpu()
    k = t.float()
    m = torch.cat([a, a])
    return a, b, c, d, e, f, g, h, row, mask, k, m
"""


@pytest.mark.parametrize(
    ("name", "any_binding", "on_cpu"),
    [
        ("a", True, True),
        ("b", True, False),  # near miss: ``device=``
        ("c", True, True),  # numpy
        ("d", True, True),  # a ``.cpu()`` result
        ("e", True, True),
        ("f", True, False),  # near miss: no ``map_location="cpu"``
        ("g", True, True),  # a tokenizer's output
        ("h", True, True),  # a slice of what ``generate`` returned
        ("row", True, True),  # ``zip(out_cpu, ...)`` after ``out_cpu = t.cpu()``
        ("mask", True, False),  # near miss: the other iterable, a parameter
        ("k", True, False),  # near miss: a parameter's method
        ("m", True, False),  # ops are not followed with ``any_binding``
        ("m", False, True),  # ...and are without: both inputs are on the CPU
        ("a", False, True),
        ("b", False, False),
    ],
)
def test_on_cpu(name: str, any_binding: bool, on_cpu: bool) -> None:
    model = SemanticModel(cst.parse_module(MADE))
    function = model.functions[0]
    expr = cst.parse_expression(name)
    assert model.tensors.on_cpu(expr, function.scope, any_binding=any_binding) is on_cpu


DEVICES = """\
import torch

host = "cpu"
first = torch.device("cpu:0")
maybe = "cpu"
maybe = "cuda"


def f():
    pass
"""


@pytest.mark.parametrize(
    ("source", "with_index", "cpu"),
    [
        ('"cpu"', False, True),
        ('"cpu:0"', True, True),
        ('"cpu:0"', False, False),  # near miss: with an index, for TNK405's reading
        ('torch.device("cpu")', False, True),
        ('torch.device("cuda")', True, False),
        ("torch.device()", True, False),
        ("host", False, True),  # a name bound only to one
        ("first", True, True),
        ("first", False, False),
        ("maybe", True, False),  # near miss: bound to another device too
        ("device", True, False),  # bound nowhere here
    ],
)
def test_is_cpu_device(source: str, with_index: bool, cpu: bool) -> None:
    model = SemanticModel(cst.parse_module(DEVICES))
    scope = model.functions[0].scope
    found = model.tensors.is_cpu_device(cst.parse_expression(source), scope, with_index=with_index)
    assert found is cpu


def test_chain_root_keeps_a_method_and_goes_into_a_call() -> None:
    expr = cst.parse_expression('torch.from_numpy(b["x"]).float().to(device)[0]')
    code = cst.Module([]).code_for_node
    assert code(chain_root(expr, attributes=True)) == "torch"  # through every call
    kept = chain_root(expr, attributes=True, keep=frozenset({"to"}))
    assert code(kept) == 'torch.from_numpy(b["x"]).float().to(device)'

    def into(call: cst.Call) -> cst.BaseExpression | None:
        wraps = isinstance(call.func, cst.Attribute) and call.func.attr.value == "from_numpy"
        return call.args[0].value if wraps else None

    inner = cst.parse_expression('torch.from_numpy(b["x"]).float()')
    assert code(chain_root(inner, attributes=True, into=into)) == "b"
    # Near miss: ``keep`` ends the chain before the call ``into`` would go into.
    assert code(chain_root(expr, attributes=True, keep=frozenset({"to"}), into=into)) == (
        'torch.from_numpy(b["x"]).float().to(device)'
    )


@pytest.mark.parametrize(
    ("source", "every_name", "names"),
    [
        ("for i, (x, *ys) in pairs:\n    pass\n", False, {"i", "x", "ys"}),
        ("for self.x, k in pairs:\n    pass\n", False, {"k"}),  # an attribute binds no name
        ("for self.x, k in pairs:\n    pass\n", True, {"self", "x", "k"}),
        ("for a[i] in xs:\n    pass\n", True, {"a", "i"}),
        ("ys = [x + y for x in xs for y, _ in x]\n", False, {"x", "y", "_"}),
        ("while cond:\n    pass\n", False, set()),  # near miss: a ``while`` binds nothing
    ],
)
def test_loop_targets(source: str, every_name: bool, names: set[str]) -> None:
    model = SemanticModel(cst.parse_module(source))
    assert loop_targets(model.loops[0], every_name=every_name) == names


def test_names_in_source_order() -> None:
    assert list(names_in(cst.parse_expression("f(a.b, c[d])"))) == ["f", "a", "b", "c", "d"]


def test_assigned_in_a_loop() -> None:
    source = """\
def train(model, loader):
    device = model.device
    for batch in loader:
        logits = model(batch)
        x = batch.to(logits.device)
"""
    model = SemanticModel(cst.parse_module(source))
    loop = model.loops[0]
    scope = model.functions[0].scope
    assert model.dataflow.assigned_in("logits", loop, scope) is True
    assert model.dataflow.assigned_in("device", loop, scope) is False  # near miss: before it
    assert model.dataflow.assigned_in("model", loop, scope) is False  # a parameter


@pytest.mark.parametrize(
    ("source", "root"),
    [
        ('batch["x"].float()[0]', "batch"),
        ("torch.from_numpy(b).float()", "b"),  # the data a CPU maker wraps
        ("np.asarray(rows)", "rows"),
        ('torch.tensor(b, device="cuda")', "torch"),  # near miss: made on the device
        ("xs.to(device).float()", "xs.to(device)"),  # a copy is kept
        ("batch.x.cuda()", "batch.x.cuda()"),
    ],
)
def test_data_root(source: str, root: str) -> None:
    model = SemanticModel(cst.parse_module("import numpy as np\nimport torch\n"))
    found = model.tensors.data_root(cst.parse_expression(source), model.module_scope)
    assert cst.Module([]).code_for_node(found) == root


def test_enclosing() -> None:
    source = """\
def step(model):
    for batch in loader:
        with torch.no_grad():
            try:
                f(batch)
            except RuntimeError:
                torch.cuda.empty_cache()
"""
    model = SemanticModel(cst.parse_module(source))
    code = cst.Module([]).code_for_node
    call = next(s.node for s in model.calls if code(s.node) == "torch.cuda.empty_cache()")
    kinds = [type(node).__name__ for node in model.dataflow.enclosing(call, cst.FunctionDef)]
    assert kinds == [
        "Expr",
        "SimpleStatementLine",
        "IndentedBlock",
        "ExceptHandler",
        "Try",
        "IndentedBlock",
        "With",
        "IndentedBlock",
        "For",
        "IndentedBlock",
    ]
    # Up to the first of several kinds, or up to a given node.
    up_to_loop = list(model.dataflow.enclosing(call, (cst.For, cst.While)))
    assert type(up_to_loop[-1]).__name__ == "IndentedBlock"
    assert len(up_to_loop) == 8
    loop = model.loops[0].node
    below = list(model.dataflow.enclosing(call, below=loop))
    assert below == up_to_loop
    # Near miss: a kind not around it climbs to the module, the module included.
    outer = [type(node).__name__ for node in model.dataflow.enclosing(call, cst.ClassDef)]
    assert outer[-2:] == ["FunctionDef", "Module"]
