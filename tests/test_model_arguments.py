"""What a call passes (``model/facts/arguments.py``), the one owner the rules and the model ask."""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.model.facts.arguments import has_keyword, passed


def call(text: str) -> cst.Call:
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Call)
    return node


@pytest.mark.parametrize(
    ("text", "keyword", "position", "expected"),
    [
        ("DataLoader(ds, 8, num_workers=4)", "num_workers", 5, "4"),
        ("DataLoader(ds, 8, False, None, None, 2)", "num_workers", 5, "2"),
        ("DataLoader(ds, 8)", "num_workers", 5, None),
        ("ds.map(f, batched=True)", "function", 0, "f"),
        ("ds.map(function=g)", "function", 0, "g"),
        ("ds.map(*fs, f)", "function", 0, "f"),  # ``*args`` are not counted
        ("ds.map(**options)", "function", 0, None),
        ("x.to(device=d)", "device", None, "d"),
        ("x.to(d)", "device", None, None),  # no position asked: only the keyword
    ],
)
def test_passed(text: str, keyword: str, position: int | None, expected: str | None) -> None:
    value = passed(call(text), keyword, position)
    assert (None if value is None else cst.Module([]).code_for_node(value)) == expected


def test_has_keyword() -> None:
    assert has_keyword(call("torch.zeros(3, device=d)"), "device")
    assert not has_keyword(call("torch.zeros(3, d)"), "device")
    assert not has_keyword(call("torch.zeros(3, **kw)"), "device")
