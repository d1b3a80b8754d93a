"""The engine's libcst parse (``syntax/parse.py``): the same tree as ``cst.parse_module``, without
validating the parser's nodes, and nodes made afterwards are validated again."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import libcst as cst
import pytest

from tinker_lint.syntax import parse

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURES[:40], ids=lambda p: p.name)
def test_same_tree_as_libcst(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    ours = parse.parse_module(text)
    assert ours.deep_equals(cst.parse_module(text))
    assert ours.code == text


def test_parser_nodes_are_not_validated() -> None:
    assert parse._SKIPPABLE  # libcst 1.x: otherwise this module parses as libcst does
    broken = cst.CSTValidationError("validate is broken")
    with mock.patch("libcst._nodes.expression.Name._validate", side_effect=broken):
        with pytest.raises((SyntaxError, cst.ParserSyntaxError)):
            cst.parse_module("foo\n")  # libcst validates what its parser makes ...
        assert parse.parse_module("foo\n").code == "foo\n"  # ... the engine's parse does not


def test_nodes_made_after_a_parse_are_validated() -> None:
    parse.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_a_failed_parse_restores_validation() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        parse.parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
