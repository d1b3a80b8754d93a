"""libcst's parse of a file, without validating each node as it is made.

Every libcst node checks itself when constructed (``CSTNode.__post_init__`` calls ``_validate``),
including the nodes the parser makes from text that already parsed: about 13% of the parse of the
cookbook files that reach libcst (docs/performance.md). libcst says as much (its ``__post_init__``:
"It might make more sense to move validation work into the visitor, which would allow us to avoid
validating the tree when parsing a file") but has no option for it, so here the check is skipped
for the nodes this thread makes while it parses, and only then; nodes made anywhere else, or by
the fixers later, are checked as always. The engine parses only what CPython compiled.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    stack: list[type] = [cls]
    while stack:
        subclasses: list[type] = stack.pop().__subclasses__()
        for sub in subclasses:
            found.append(sub)
            stack.append(sub)
    return found


# Only where every node validates through CSTNode's own ``__post_init__`` (libcst 1.x): a libcst
# that gives a node a ``__post_init__`` of its own is parsed as it ships.
_SKIPPABLE = "__post_init__" in CSTNode.__dict__ and not any(
    "__post_init__" in sub.__dict__ for sub in _subclasses(CSTNode)
)
_lock = threading.Lock()  # one parse at a time swaps the method


def parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)``, its nodes not validated (``text`` compiles: CPython said so)."""
    if not _SKIPPABLE:
        return cst.parse_module(text)
    with _lock:
        validate = CSTNode.__post_init__
        parsing = threading.get_ident()

        def post_init(self: CSTNode) -> None:
            if threading.get_ident() != parsing:  # another thread's nodes are checked
                validate(self)

        CSTNode.__post_init__ = post_init  # type: ignore[method-assign]
        try:
            return cst.parse_module(text)
        finally:
            CSTNode.__post_init__ = validate  # type: ignore[method-assign]
