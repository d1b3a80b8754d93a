"""Cadence guards: ``if step % log_every == 0:`` and friends run occasionally, not every step."""

from __future__ import annotations

import re

import libcst as cst

# *_every, *_interval, *_freq, should_log, is_eval_step, ... (spec: "Cadence guard").
DEFAULT_CADENCE_NAME = re.compile(
    r"(^|_)(every|interval|freq|frequency|period|cadence)(_|$)|^should_|^is_\w*(step|time)$",
    re.IGNORECASE,
)


class _CadenceFinder(cst.CSTVisitor):
    def __init__(self, extra: re.Pattern[str] | None) -> None:
        self.extra = extra
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> bool:
        if isinstance(node.operator, cst.Modulo) and not isinstance(
            node.left, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString
        ):
            self.found = True
        return not self.found

    def _check(self, name: str) -> None:
        if DEFAULT_CADENCE_NAME.search(name) or (self.extra and self.extra.search(name)):
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        self._check(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._check(node.attr.value)

    def visit_Call(self, node: cst.Call) -> None:
        # `if should_log(step):`, `if tracker.is_eval_step(step):`
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Name):
            name = func.value
        if name:
            self._check(name)


def is_cadence_test(test: cst.BaseExpression, extra: re.Pattern[str] | None = None) -> bool:
    finder = _CadenceFinder(extra)
    test.visit(finder)
    return finder.found
