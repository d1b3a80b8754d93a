"""A fix plan: which nodes of the parsed module a fix replaces, with what, and how safe it is.

Rules build plans (``Finding.fix``) from what the semantic model proved; ``tinker_lint.fix.apply``
turns a plan into a text ``Edit`` and applies edits. Plans never run code: they are tree rewrites.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import libcst as cst

from tinker_lint.diagnostics import SAFE, UNSAFE, is_applicable

__all__ = ["SAFE", "UNSAFE", "FixPlan", "Replacement", "is_applicable"]

# What an original node becomes: a node, nothing (a statement removed), or several statements.
Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]  # noqa: UP007


@dataclass(frozen=True, eq=False)
class FixPlan:
    message: str
    applicability: str
    changes: tuple[tuple[cst.CSTNode, Replacement], ...]
    # Why an unsafe plan is unsafe (for docs and ``--show-fixes``); empty for safe plans.
    caveat: str = ""

    def __post_init__(self) -> None:
        if self.applicability not in (SAFE, UNSAFE):
            raise ValueError(f"unknown applicability {self.applicability!r}")
