"""``node_positions`` must give exactly what libcst's ``PositionProvider`` gives."""

from __future__ import annotations

import ast
import os
import warnings
from pathlib import Path

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from libcst.metadata import MetadataWrapper, PositionProvider

from tinker_lint.syntax.positions import NodePositions, node_positions, statement_starts

SOURCE = (Path(__file__).parent / "data" / "every_construct.txt").read_text(encoding="utf-8")
CASES = {
    "every-construct": SOURCE,
    "crlf": SOURCE.replace("\n", "\r\n"),
    "no-trailing-newline": "def f():\n    if x:\n        return (\n            a.b(c)\n        )",
    "continuation-and-comments": "x = 1 + \\\n    2  # two\n\n# alone\nclass A: pass\n",
    "empty": "",
}


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    found, stack = [], [module]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_node_as_position_provider_says(name: str) -> None:
    module = cst.parse_module(CASES[name])
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = _all_nodes(module)
    got = node_positions(module, nodes)
    assert {id(n): got[id(n)] for n in nodes} == {id(n): expected[n] for n in nodes}


def test_a_few_nodes_only_those() -> None:
    module = cst.parse_module(SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    calls = [n for n in _all_nodes(module) if isinstance(n, cst.Call | cst.IndentedBlock)][::3]
    got = node_positions(module, calls)
    assert set(got) == {id(n) for n in calls}
    for node in calls:
        assert got[id(node)] == expected[node]


def test_every_node_at_once():
    module = cst.parse_module(SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    got = node_positions(module, None)
    assert {k: got[k] for k in map(id, _all_nodes(module))} == {
        id(n): expected[n] for n in _all_nodes(module)
    }


def test_positions_asked_one_by_one():
    module = cst.parse_module(SOURCE)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = NodePositions(module)
    calls = [n for n in _all_nodes(module) if isinstance(n, cst.Call)]
    assert len(calls) > NodePositions.PASSES_BEFORE_ALL + 2
    for node in calls:  # more questions than passes: the rest comes from one complete pass
        assert positions[node] == expected[node]
    assert node in positions and cst.Name("elsewhere") not in positions
    with pytest.raises(KeyError):
        positions[cst.Name("elsewhere")]


def _parents(module: cst.Module):
    parent_of = {}
    stack = [module]
    while stack:
        node = stack.pop()
        for child in node.children:
            parent_of[id(child)] = node
            stack.append(child)
    return lambda node: parent_of.get(id(node))


# CPython's tree is needed: this Python's parser may not know every construct (t-strings: 3.14).
PYTHON_SOURCE = "\n".join("" if 't"' in line else line for line in SOURCE.split("\n"))
STATEMENT_CASES = {
    **CASES,
    "every-construct": PYTHON_SOURCE,
    "crlf": PYTHON_SOURCE.replace("\n", "\r\n"),
    "cr-only": "x = 1\r\rdef f():\r    return g(\r        1)\r",
    "form-feed-and-semicolons": "a = 1; b = f(2)\n\x0c\n@dec\n# c\nclass A:\n    x = h(3)\n",
    "decorated-with-leading-comments": "# one\n\n# two\n@a(\n    1,\n)\n@b\ndef f():\n    pass\n",
    "nested-tabs-and-odd-indents": "class A:\n\tdef f(self):\n\t   if x:\n\t      return g(\n  1)\n\t   y = [\n1]\n",
    "nested-blocks-and-match": (
        "for b in bs:\n    if a:\n        x = f(1)\n    elif c:\n        y = g(2)\n"
        "match v:\n  case 1:\n        k = h(9)\n  case _:\n    pass\n"
    ),
    "fixtures": (
        Path(__file__).parent.parent / "fixtures" / "tnk1xx" / "tnk101_bad.py"
    ).read_text(),
}


@pytest.mark.parametrize("name", sorted(STATEMENT_CASES))
def test_statement_by_statement_as_position_provider_says(name: str) -> None:
    """With CPython's tree: only the statements that hold the nodes are generated, each node asked
    for alone (one partial pass per statement, then a complete one), and every node of the
    module placed as ``PositionProvider`` places it."""
    text = STATEMENT_CASES[name]
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    starts = statement_starts(ast.parse(text), module)
    assert starts is not None and len(starts) >= len(module.body)
    positions = NodePositions(module, starts, _parents(module))
    # Every node of every statement (the module's header and footer comments belong to none).
    inner = [n for statement in module.body for n in _all_nodes(statement)]
    for node in reversed(inner):  # statements are asked about again and again
        assert positions[node] == expected[node], (type(node).__name__, name)
    assert positions._starts is not None  # never fell back to the whole module
    assert positions._all is None


@pytest.mark.parametrize(
    "name", ["nested-blocks-and-match", "nested-tabs-and-odd-indents", "every-construct"]
)
def test_each_node_alone_by_its_own_statement(name: str) -> None:
    """Each node asked for first, alone, is placed from its innermost statement only (asked in
    turn, a complete pass of an outer statement would place it and hide a wrong inner start)."""
    text = STATEMENT_CASES[name]
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    starts = statement_starts(ast.parse(text), module)
    parents = _parents(module)
    for node in [n for statement in module.body for n in _all_nodes(statement)]:
        positions = NodePositions(module, starts, parents)
        assert positions[node] == expected[node], (type(node).__name__, name)
        assert positions._starts is not None


def test_statement_starts_need_trees_of_the_same_text() -> None:
    text = "a = 1; b = 2\nclass C:\n    x = 1\n\n    @d\n    def f(self):\n        pass\n"
    module = cst.parse_module(text)
    starts = statement_starts(ast.parse(text), module)
    assert starts is not None
    method = module.body[1].body.body[1]
    assert starts[id(module.body[0])] == (1, ())
    assert starts[id(method)] == (6, ("    ",))
    assert starts[id(method.body.body[0])] == (7, ("    ", "    "))
    assert statement_starts(ast.parse("a = 1\nb = 2\nc = 3\n"), module) is None
    assert statement_starts(ast.parse("a = 1; b = 2\nC = 1\n"), module) is None


def test_statement_starts_inside_every_kind_of_block() -> None:
    """Statements in loops, branches, ``with``, ``try`` and ``match`` blocks have their own starts,
    so a node deep in a training loop is placed by generating its statement, not the loop."""
    text = (
        "for b in bs:\n"
        "    if a:\n"
        "        x = 1\n"
        "    elif c:\n"
        "        while d:\n"
        "            y = 2\n"
        "        else:\n"
        "            z = 3\n"
        "    else:\n"
        "        with m:\n"
        "            w = 4\n"
        "try:\n"
        "    t = 5\n"
        "except E:\n"
        "    e = 6\n"
        "else:\n"
        "    o = 7\n"
        "finally:\n"
        "    f = 8\n"
        "match v:\n"
        "    case 1:\n"
        "        k = 9\n"
    )
    module = cst.parse_module(text)
    starts = statement_starts(ast.parse(text), module)
    assert starts is not None
    lines = {
        cst.Module([]).code_for_node(node).strip(): start
        for node in _all_nodes(module)
        if isinstance(node, cst.SimpleStatementLine)
        for start in [starts.get(id(node))]
    }
    four, eight, twelve = ("    ",), ("    ", "    "), ("    ", "    ", "    ")
    assert lines == {
        "x = 1": (3, eight),
        "y = 2": (6, twelve),
        "z = 3": (8, twelve),
        "w = 4": (11, twelve),
        "t = 5": (13, four),
        "e = 6": (15, four),
        "o = 7": (17, four),
        "f = 8": (19, four),
        "k = 9": (22, eight),
    }


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles its programs
@settings(
    max_examples=int(os.environ.get("TINKER_LINT_FUZZ_EXAMPLES", "60")),
    deadline=None,
    derandomize="TINKER_LINT_FUZZ_EXAMPLES" not in os.environ,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(hypothesmith.from_grammar())
def test_statement_by_statement_on_generated_programs(source: str) -> None:
    """Whatever the layout (continuations, semicolons, comments, odd indents), the statement way
    places every node of every statement where ``PositionProvider`` does, or declines (then the
    whole module is generated, as before)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
        module = cst.parse_module(source)
    except (SyntaxError, ValueError, RecursionError, cst.ParserSyntaxError):
        assume(False)
        return
    starts = statement_starts(tree, module)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = NodePositions(module, starts, _parents(module))
    for node in [n for statement in module.body for n in _all_nodes(statement)]:
        assert positions[node] == expected[node], (source, type(node).__name__)
