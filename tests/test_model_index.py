"""The semantic model's own tree walk must see what libcst's visitors see: the same children, in the
same (source) order, less layout and punctuation."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from tinker_lint.model.query import _TRIVIA, SemanticModel
from tinker_lint.rules import PYTHON_RULES

# Every kind of statement and expression the index must get right (not run, only parsed).
SOURCE = (Path(__file__).parent / "data" / "every_construct.txt").read_text(encoding="utf-8")


def _sources() -> list[str]:
    found = [SOURCE]
    for rule in PYTHON_RULES:
        found.extend(example.code for example in (*rule.VALID, *rule.INVALID))
    return found


def _libcst_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return [child for child in node.children if type(child) not in _TRIVIA]


@pytest.mark.parametrize("source", _sources())
def test_index_matches_libcst_children(source: str) -> None:
    module = cst.parse_module(source)
    model = SemanticModel(module)
    checked = 0
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            continue  # not entered: its body runs later
        expected = _libcst_children(node)
        assert model.children(node) == expected, type(node).__name__
        for child in expected:
            assert model.parent(child) is node
        stack.extend(expected)
        checked += 1
    assert checked > 20
