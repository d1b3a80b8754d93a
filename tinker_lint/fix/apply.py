"""From a fix plan to a text edit, and from edits to fixed text.

A plan is applied as a libcst transform of the statements it touches (only the changed nodes and
their ancestors are visited), their code is regenerated with the indentation of their block, and
the edit is the smallest span of the original text that differs, widened to whole lines when it
spans lines. The regenerated original statements must equal the text where their positions say
they are, or the whole module is regenerated instead: either way, applying the edit to the text
gives exactly the transformed module's code. ``--fix`` applies these edits, so the JSON ``fix`` and
``--fix`` cannot disagree.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange

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

    # libcst's on_leave returns the node's own type; a replacement may be another node.
    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Replacement:
        return self.changes.get(id(original_node), updated_node)


def _ancestors(module: cst.Module, plan: FixPlan, parent_of: Mapping[int, cst.CSTNode]) -> set[int]:
    found: set[int] = {id(module)}
    for node, _ in plan.changes:
        current: cst.CSTNode | None = node
        while current is not None and id(current) not in found:
            found.add(id(current))
            current = parent_of.get(id(current))
    return found


def apply_plan(
    module: cst.Module, plan: FixPlan, parent_of: Mapping[int, cst.CSTNode]
) -> cst.Module:
    fixed = module.visit(_Replace(plan.changes, _ancestors(module, plan, parent_of)))
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


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by halving (string slices compare at C speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def region_edit(text: str, index: LineIndex, start: int, end: int, new: str) -> Edit | None:
    """The edit that replaces ``text[start:end]`` by ``new``, trimmed to what differs and widened
    to whole lines when it spans lines."""
    old = text[start:end]
    if old == new:
        return None
    head = _common_prefix(old, new)
    tail = _common_prefix(old[head:][::-1], new[head:][::-1])
    middle = new[head : len(new) - tail]
    first, last = start + head, end - tail
    if _LINE_BREAK.search(text, first, last) or _LINE_BREAK.search(middle):
        line_first, line_last = index.line_start(first), index.next_line_start(last)
        middle = text[line_first:first] + middle + text[last:line_last]
        first, last = line_first, line_last
    # Never cut a CRLF in two.
    if 0 < first < len(text) and text[first - 1 : first + 1] == "\r\n":
        first, middle = first - 1, "\r" + middle
    if 0 < last < len(text) and text[last - 1 : last + 1] == "\r\n":
        last, middle = last + 1, middle + "\n"
    return Edit(middle, index.position(first), index.position(last))


def text_edit(old: str, new: str, index: LineIndex | None = None) -> Edit | None:
    """The one edit that turns ``old`` into ``new``."""
    return region_edit(old, index or LineIndex(old), 0, len(old), new)


def _statement_of(node: cst.CSTNode, parent_of: Mapping[int, cst.CSTNode]) -> cst.CSTNode | None:
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, cst.BaseStatement):
        current = parent_of.get(id(current))
    return current


def _code(module: cst.Module, node: cst.CSTNode, indents: list[str]) -> str:
    """``node``'s code as it is written inside blocks with these indentations."""
    state = CodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline
    )
    state.indent_tokens.extend(indents)
    node._codegen(state)
    return "".join(state.tokens)


def _local_edit(
    text: str,
    index: LineIndex,
    module: cst.Module,
    plan: FixPlan,
    parent_of: Mapping[int, cst.CSTNode],
    positions: Mapping[cst.CSTNode, CodeRange],
) -> Edit | bool | None:
    """The edit, from regenerating only the statements the plan touches; False if they cannot be
    regenerated on their own (then the caller regenerates the module)."""
    anchors = [_statement_of(node, parent_of) for node, _ in plan.changes]
    block = parent_of.get(id(anchors[0])) if anchors and anchors[0] is not None else None
    if block is None or not isinstance(block, cst.IndentedBlock | cst.Module):
        return False
    if any(anchor is None or parent_of.get(id(anchor)) is not block for anchor in anchors):
        return False
    body = list(block.body)
    where = [next(i for i, s in enumerate(body) if s is anchor) for anchor in anchors]
    statements = body[min(where) : max(where) + 1]
    indents: list[str] = []
    current: cst.CSTNode | None = block
    while current is not None:
        if isinstance(current, cst.IndentedBlock):
            indents.insert(0, module.default_indent if current.indent is None else current.indent)
        current = parent_of.get(id(current))

    first = statements[0]
    position = positions.get(first)
    if position is None:
        return False
    row = position.start.line - len(getattr(first, "leading_lines", ()))
    if not 1 <= row <= len(index.starts):
        return False
    start = index.starts[row - 1]
    old = "".join(_code(module, s, indents) for s in statements)
    transform = _Replace(plan.changes, _ancestors(module, plan, parent_of))
    new_parts: list[str] = []
    for statement in statements:
        result = statement.visit(transform)
        if isinstance(result, cst.FlattenSentinel):
            new_parts.extend(_code(module, n, indents) for n in result.nodes)
        elif isinstance(result, cst.CSTNode):
            new_parts.append(_code(module, result, indents))
    new = "".join(new_parts)
    end = start + len(old)
    if text[start:end] != old:
        # The last line of a file without a final newline.
        newline = module.default_newline
        if not (end == len(text) + len(newline) and old.endswith(newline)):
            return False
        if text[start:] != old[: -len(newline)] or not new.endswith(newline):
            return False
        end, new = len(text), new[: -len(newline)]
    return region_edit(text, index, start, end, new)


def plan_fix(
    text: str,
    module: cst.Module,
    plan: FixPlan,
    parent_of: Mapping[int, cst.CSTNode],
    positions: Mapping[cst.CSTNode, CodeRange],
    index: LineIndex | None = None,
) -> Fix | None:
    index = index or LineIndex(text)
    edit = _local_edit(text, index, module, plan, parent_of, positions)
    if edit is False:
        edit = text_edit(text, apply_plan(module, plan, parent_of).code, index)
    if not isinstance(edit, Edit):
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
