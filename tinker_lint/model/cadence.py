"""Cadence guards: ``if step % log_every == 0:`` and friends run occasionally, not every step."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

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
    for node in nodes:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            if not isinstance(node.left, cst.SimpleString | cst.ConcatenatedString):
                return True  # ``"%s" % x`` is formatting, not a cadence
        elif isinstance(node, cst.Name) and _names_cadence(node.value, extra):
            return True
    return False
