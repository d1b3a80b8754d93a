"""From a fix plan to a text edit, and from edits to fixed text.

A plan is applied to the parsed module as a libcst transform (only the changed nodes and their
ancestors are visited), the module's code is regenerated, and the edit is the smallest span of the
original text that differs, widened to whole lines when it spans lines. By construction, applying
the edit to the text gives exactly the transformed module's code; ``--fix`` applies edits, so the
JSON ``fix`` and ``--fix`` can never disagree.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence

import libcst as cst

from tinker_lint.diagnostics import Edit, Fix
from tinker_lint.fix.plan import FixPlan, Replacement

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class _Replace(cst.CSTTransformer):
    def __init__(self, changes: Sequence[tuple[cst.CSTNode, Replacement]], ancestors: set[int]):
        super().__init__()
        self.changes = {id(node): new for node, new in changes}
        self.ancestors = ancestors

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.ancestors

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.changes.get(id(original_node), updated_node)


def apply_plan(module: cst.Module, plan: FixPlan, parent_of: dict[int, cst.CSTNode]) -> cst.Module:
    ancestors: set[int] = {id(module)}
    for node, _ in plan.changes:
        current: cst.CSTNode | None = node
        while current is not None and id(current) not in ancestors:
            ancestors.add(id(current))
            current = parent_of.get(id(current))
    fixed = module.visit(_Replace(plan.changes, ancestors))
    assert isinstance(fixed, cst.Module)
    return fixed


class LineIndex:
    """Offsets <-> 1-based (row, column) in a text, with the line breaks Python itself knows."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        return row + 1, offset - self.starts[row] + 1

    def offset(self, row: int, column: int) -> int:
        if not 1 <= row <= len(self.starts):
            raise ValueError(f"row {row} outside the text")
        return self.starts[row - 1] + column - 1

    def line_start(self, offset: int) -> int:
        return self.starts[bisect.bisect_right(self.starts, offset) - 1]

    def next_line_start(self, offset: int) -> int:
        """``offset`` if a line starts there, else where the next line starts (or the end)."""
        i = bisect.bisect_left(self.starts, offset)
        return self.starts[i] if i < len(self.starts) else len(self.text)


def text_edit(old: str, new: str, index: LineIndex | None = None) -> Edit | None:
    """The one edit that turns ``old`` into ``new``."""
    if old == new:
        return None
    index = index or LineIndex(old)
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    end = len(old) - tail
    if _LINE_BREAK.search(old, start, end) or _LINE_BREAK.search(new, start, len(new) - tail):
        start = index.line_start(start)
        end = index.next_line_start(end)
    # Never cut a CRLF in two.
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        end += 1
    content = new[start : len(new) - (len(old) - end)]
    return Edit(content, index.position(start), index.position(end))


def plan_fix(
    text: str,
    module: cst.Module,
    plan: FixPlan,
    parent_of: dict[int, cst.CSTNode],
    index: LineIndex | None = None,
) -> Fix | None:
    edit = text_edit(text, apply_plan(module, plan, parent_of).code, index)
    if edit is None:
        return None
    return Fix(plan.message, (edit,), plan.applicability)


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """``text`` with every fix applied whose edits do not overlap (or touch) those of a fix applied
    before it, and the fixes applied; the others wait for the next pass. A fix is all or nothing."""
    index = LineIndex(text)
    spans = []
    for n, fix in enumerate(fixes):
        edits = sorted(
            (index.offset(*e.location), index.offset(*e.end_location), e.content) for e in fix.edits
        )
        if edits:
            spans.append((edits[0][0], max(end for _, end, _ in edits), n, edits, fix))
    spans.sort(key=lambda span: span[:3])
    pieces: list[str] = []
    applied: list[Fix] = []
    cursor, last_end = 0, -1
    for start, end, _, edits, fix in spans:
        if start <= last_end or any(a[1] > b[0] for a, b in itertools.pairwise(edits)):
            continue
        for edit_start, edit_end, content in edits:
            pieces.append(text[cursor:edit_start])
            pieces.append(content)
            cursor = edit_end
        last_end = end
        applied.append(fix)
    pieces.append(text[cursor:])
    return "".join(pieces), applied
