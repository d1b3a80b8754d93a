"""``node_positions`` must give exactly what libcst's ``PositionProvider`` gives."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tinker_lint.model.positions import NodePositions, node_positions

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
