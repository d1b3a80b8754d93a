"""Cadence guards: ``if step % log_every == 0:`` and friends run occasionally, not every step.

A guard whose block makes the optimizer step is not a cadence but the step's own schedule
(gradient accumulation: ``if should_step: tc.optim_step(adam)``): what it holds is the step, so
it runs on every step (issue 32: two real serial waits were hidden under such a guard)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

import libcst as cst

from tinker_lint.model.facts.tree import child_nodes

_STRINGS = (cst.SimpleString, cst.ConcatenatedString)

# *_every, *_interval, *_freq, should_log, is_eval_step, ... (spec: "Cadence guard").
DEFAULT_CADENCE_NAME = re.compile(
    r"(^|_)(every|interval|freq|frequency|period|cadence)(_|$)|^_*should_|^_*is_\w*(step|time)$",
    re.IGNORECASE,
)


def _names_cadence(name: str, extra: re.Pattern[str] | None) -> bool:
    return bool(DEFAULT_CADENCE_NAME.search(name) or (extra and extra.search(name)))


def is_cadence_test(nodes: Iterable[cst.CSTNode], extra: re.Pattern[str] | None = None) -> bool:
    """Whether an ``if`` test (given as its nodes) reads like "every N steps": a ``%`` or a name
    such as ``log_every``, ``save_interval``, ``should_log``, ``is_eval_step``."""
    # Exact types (libcst's node classes are final): ``isinstance`` on them goes through
    # ``ABCMeta``, and the collector asks this of every ``if`` test's nodes.
    for node in nodes:
        kind = type(node)
        if kind is cst.BinaryOperation:
            binary = cast(cst.BinaryOperation, node)
            if type(binary.operator) is cst.Modulo and type(binary.left) not in _STRINGS:
                return True  # ``"%s" % x`` is formatting, not a cadence
        elif kind is cst.Name and _names_cadence(cast(cst.Name, node).value, extra):
            return True
    return False


# The training step's own request: the optimizer step (the SDK table's distinctive names).
OPTIMIZER_STEPS = frozenset({"optim_step", "optim_step_async"})
_NOT_RUN_HERE = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def holds_optimizer_step(nodes: Iterable[cst.CSTNode]) -> bool:
    """Whether ``nodes`` call ``x.optim_step(...)`` themselves (not in a nested function)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            func = cast(cst.Call, node).func
            if type(func) is cst.Attribute and func.attr.value in OPTIMIZER_STEPS:
                return True
        elif kind in _NOT_RUN_HERE:
            continue
        stack.extend(child_nodes(node))
    return False
