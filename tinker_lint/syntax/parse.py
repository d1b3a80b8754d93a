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

import ast
import contextlib
import difflib
import itertools
import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import libcst as cst
from libcst._nodes.base import CSTNode
from libcst._nodes.internal import CodegenState

from tinker_lint.incremental import buffers
from tinker_lint.incremental.buffers import BufferStore, common_prefix, common_suffix


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


def parse_module(text: str, key: str | None = None) -> cst.Module:
    """``cst.parse_module(text)``, its nodes not validated (``text`` compiles: CPython said so).
    ``key`` (the file's path): the previous parse under it is reused where the text is the same
    (below)."""
    if key is None or not buffers.keeps(key):
        return _parse(text)
    old = _recent.get(key)
    found = None
    if old is not None and old.text == text:
        found = old
    elif old is not None:
        try:
            found = _reparse(old, text)
        except Exception:  # whatever it was, the whole parse below gives the true answer
            found = None
    if found is None:
        found = _Parsed(text, _parse(text))
    if found is not old:
        with contextlib.suppress(Exception):  # a shortcut only: ``_inner_starts`` prints the rest
            _describe_blocks(found, key, old)
    _recent.put(key, found)
    return found.module


def _parse(text: str) -> cst.Module:
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


# ==========================================================================================
# Re-parsing an edited text: only the top-level statements that changed
# ==========================================================================================
# An editor lints the whole buffer on every keystroke, and libcst's parse is about half of that
# (docs/performance.md). The previous parse of the same file (``key``: its path) is kept with
# where each of its top-level statements starts in its text; a new text that shares a prefix and
# a suffix of whole statements with it is parsed only in between, and the module is put together
# from the kept statements and the new ones. The result is the tree ``cst.parse_module`` gives
# (tests/test_parse_reuse.py compares them node for node over edits of every cookbook file); where
# that is not certain (the conditions below), the text is parsed whole.
# A statement to parse before and after the changed part, so that the lines at its edges are
# given to the statements a whole parse gives them to (a simple statement keeps no lines after
# it; before a statement at column 0, a block keeps only the comments indented to its level).
_SENTINEL = "pass"


# The top-level statement it is in (the entry lives while that is kept), the statement, and the
# starts of its block's statements.
_BlockStarts = tuple[cst.CSTNode, cst.CSTNode, list[int]]
_Described = cst.FunctionDef | cst.ClassDef | cst.For | cst.While | cst.With | cst.If


@dataclass
class _Parsed:
    text: str
    module: cst.Module
    starts: list[int] | None = None  # where each of ``module.body`` starts in ``text``; its end
    first_indent: int | None = None  # the first statement with an indented block (-1: none)
    # For a ``def``/``class`` (by id): where each statement of its block starts, from the
    # statement's own start, and where the last one ends (``_inner_starts``).
    inner: dict[int, _BlockStarts] = field(default_factory=dict)


_recent: BufferStore[_Parsed] = BufferStore()


def _code_length(module: cst.Module, node: cst.CSTNode) -> int:
    return len(module.code_for_node(node))


def _lines_length(module: cst.Module, lines: Sequence[cst.EmptyLine]) -> int:
    if not lines:
        return 0
    empty = module.with_changes(body=(), header=tuple(lines), footer=(), has_trailing_newline=True)
    return len(empty.code)


def _starts(parsed: _Parsed) -> list[int]:
    """Offsets of the statements of ``parsed.module`` in its text, and of its footer."""
    if parsed.starts is None:
        module = parsed.module
        offset = _lines_length(module, module.header)
        starts = []
        for statement in module.body:
            starts.append(offset)
            offset += _code_length(module, statement)
        starts.append(offset)
        parsed.starts = starts
    return parsed.starts


def _has_indented_block(node: cst.CSTNode) -> bool:
    """Whether the statement holds an indented block (which sets the module's default indent)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.IndentedBlock:
            return True
        if isinstance(current, _HOLDS_BLOCKS):  # not into expressions: no block is there
            stack.extend(current.children)
    return False


_HOLDS_BLOCKS = (
    cst.BaseCompoundStatement,
    cst.BaseSuite,
    cst.Else,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.MatchCase,
)


def _first_indent(parsed: _Parsed) -> int:
    if parsed.first_indent is None:
        parsed.first_indent = next(
            (i for i, s in enumerate(parsed.module.body) if _has_indented_block(s)), -1
        )
    return parsed.first_indent


def _indented_comment(lines: Sequence[cst.EmptyLine]) -> bool:
    """A comment line indented: a block just before it could keep it (its footer)."""
    return any(line.comment is not None and line.whitespace.value for line in lines)


def _reparse(old: _Parsed, text: str, split: bool = True) -> _Parsed | None:
    """``text`` parsed by re-parsing only what changed since ``old``; None when not sure.
    ``split``: two changes far apart may be re-parsed one after the other (``_reparse_twice``)."""
    module = old.module
    body = module.body
    if not body or not module.has_trailing_newline or "\f" in text:
        return None  # its last statement's code is not its text; form feeds reset indents
    starts = _starts(old)
    old_text = old.text
    # Statements end at line starts: the prefix is cut back to one, which keeps the same ones,
    # and leaves the suffix the rest (``a\n    b\n`` to ``    b\n``: not ``    `` twice).
    prefix = old_text.rfind("\n", 0, common_prefix(old_text, text)) + 1
    suffix = common_suffix(old_text, text, min(len(old_text), len(text)) - prefix)
    # p: statements kept from the front (each ending inside the common prefix).
    p = max(0, min(bisect_right(starts, prefix) - 1, len(body)))
    # q: statements kept from the back, from body[first_kept] on (each starts inside the common
    # suffix; the footer is parsed again with the end of the text). No block before the first
    # of them may keep its leading lines.
    first_kept = max(p, min(bisect_left(starts, len(old_text) - suffix), len(body)))
    changed = body[p] if p < len(body) else None  # None: only the footer changed
    if split and (first_kept >= p + 2 or (changed is not None and _descends(changed))):
        # Two changes, in statements apart: each re-parsed on its own.
        twice = _reparse_twice(old, text, prefix, suffix)
        if twice is not None:
            return twice
    if first_kept == p + 1 and changed is not None and _descends(changed):
        # The change is inside one ``def``/``class``/loop (an edit in a function): only the
        # changed statements of its block, when that is sure; else that whole statement (below).
        inside = _reparse_inside(old, text, p, prefix, suffix)
        if inside is not None:
            return inside
    while first_kept < len(body) and _indented_comment(body[first_kept].leading_lines):
        first_kept += 1
    q = len(body) - first_kept
    start = starts[p] if p else 0
    end = len(text) - (len(old_text) - starts[first_kept]) if q else len(text)
    if end < start or (end > start and text[end - 1] != "\n") or (p == 0 and end == 0):
        return None  # ``\r\n`` cut in two, or the text's first newline not in view
    if start == 0 and end == len(text):
        return None  # nothing to keep
    newline = module.default_newline
    chunk = text[start:end]
    before = _SENTINEL + newline if p else ""
    after = _SENTINEL + newline if q else ""
    part = _parse(before + chunk + after)  # an error: the caller parses the text whole
    parsed = list(part.body)
    if p:
        if not parsed or part.header:
            return None
        parsed.pop(0)
    kept_after = list(body[first_kept:])
    moved: Sequence[cst.EmptyLine] = ()
    if q:
        if not parsed or part.footer:
            return None
        sentinel = parsed.pop()
        if not p and not parsed:
            return None  # the module's header takes every line before its first statement
        moved = sentinel.leading_lines
        if moved:
            kept_after[0] = kept_after[0].with_changes(
                leading_lines=(*moved, *kept_after[0].leading_lines)
            )
    # A block ending the kept front keeps the comments after it indented to its level (as its
    # footer): there must be none before the next statement.
    if p and type(body[p - 1]) is not cst.SimpleStatementLine:
        following = parsed[0].leading_lines if parsed else moved if q else part.footer
        if _indented_comment(following):
            return None
    # The module's defaults: its first newline and its first indented block's indent. A kept
    # statement's nodes leave the default ones out, so the new text must have the old defaults.
    if p == 0 and part.default_newline != newline:
        return None
    if any(_has_indented_block(s) for s in parsed):
        if part.default_indent != module.default_indent:
            return None  # its blocks were parsed with another default (or the module's changed)
    elif p <= _first_indent(old) < first_kept:
        return None  # the old first block is gone: a later one may indent otherwise
    new_module = module.with_changes(
        body=(*body[:p], *parsed, *kept_after),
        header=part.header if p == 0 else module.header,
        footer=part.footer if q == 0 else module.footer,
        has_trailing_newline=part.has_trailing_newline if q == 0 else module.has_trailing_newline,
    )
    # Where the statements start in the new text: the kept ones shift by the change in length.
    # The last new statement ends where the lines moved to the next one (or the footer) begin:
    # only the others are printed to measure them (printing costs about half a parse).
    new_starts = starts[:p]
    offset = start if p else _lines_length(new_module, new_module.header)
    for statement in parsed[:-1]:
        new_starts.append(offset)
        offset += _code_length(new_module, statement)
    after_new = end - _lines_length(new_module, moved) if q else None
    if parsed:
        new_starts.append(offset)
        if after_new is None:
            offset += _code_length(new_module, parsed[-1])
        else:
            offset = after_new
    if after_new is not None and offset != after_new:
        return None
    new_starts.append(offset)  # the next kept statement's (with the lines moved to it), or footer's
    shift = len(text) - len(old_text)
    new_starts.extend(start + shift for start in starts[first_kept + 1 :])
    return _Parsed(text, new_module, new_starts, inner=_kept_inner(old, new_module))


# The lines between the common prefix and suffix that are diffed at most (difflib: about 10 ms for
# 1,000 lines of a real file with two changes, the one re-parse of them about 100 ms).
_MAX_DIFFED_LINES = 2000


def _reparse_twice(old: _Parsed, text: str, prefix: int, suffix: int) -> _Parsed | None:
    """Two changes in different statements (a line taken out of one function and one put in
    another: all the statements between them differ from the common prefix and suffix): the
    text with the first change only, re-parsed from ``old``, then ``text`` from that. None when
    the changes are not two, or either step is not sure (or the text between does not parse)."""
    old_text = old.text
    halfway = _halfway_by_statements(old, text, prefix, suffix)
    if halfway is None:
        old_lines = old_text[prefix : len(old_text) - suffix].split("\n")
        new_lines = text[prefix : len(text) - suffix].split("\n")
        if len(old_lines) + len(new_lines) > _MAX_DIFFED_LINES:
            return None  # a rewrite (a formatter's): the diff would cost more than it saves
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        if len(changes) != 2:
            return None
        _, i1, i2, j1, j2 = changes[0]
        between = "\n".join([*old_lines[:i1], *new_lines[j1:j2], *old_lines[i2:]])
        halfway = old_text[:prefix] + between + old_text[len(old_text) - suffix :]
    try:
        step = _reparse(old, halfway, split=False)
        return _reparse(step, text, split=False) if step is not None else None
    except Exception:  # the text halfway may not parse: the one re-parse below does
        return None


def _halfway_by_statements(old: _Parsed, text: str, prefix: int, suffix: int) -> str | None:
    """``buffers.halfway``, when whole top-level statements lie between the two changes (edits in
    two functions far apart, which the diff below is capped for)."""
    starts = _starts(old)
    first = bisect_right(starts, prefix) - 1  # the statement the first change is in
    last = bisect_left(starts, len(old.text) - suffix) - 1  # the one the last change is in
    if first < 0 or last - first < 2 or last >= len(old.module.body):
        return None
    return buffers.halfway(old.text, text, prefix, suffix, starts[first + 1], starts[last])


def _kept_inner(old: _Parsed, module: cst.Module) -> dict[int, _BlockStarts]:
    """The block starts worked out inside the top-level statements ``module`` keeps (the same
    nodes: the same text)."""
    tops = {id(statement): statement for statement in module.body}
    return {key: entry for key, entry in old.inner.items() if tops.get(id(entry[0])) is entry[0]}


# ==========================================================================================
# Re-parsing inside a ``def``, a ``class`` or a loop
# ==========================================================================================
# An edit in a function of a long module changes one top-level statement, which may be hundreds
# of lines (a training loop's ``main``). When the change lies inside the block of a ``def``, a
# ``class``, or a ``for``, ``while``, ``with`` or ``if`` with one block (no ``else``) (at any
# depth: a method, a function nested in one, a step loop's body), with a statement of that block
# or the block's end kept after it (and one before, or the block's first line kept), only the
# statements in between are parsed, inside stand-in blocks at the same indents (``if 1:`` per
# level, ``pass`` before and after as at the top level), and the blocks are put together from the
# kept statements and the new ones. Only for blocks at the module's default indent (so the stand-in's nested blocks
# record their indents as the real ones do).
_DEFINED = frozenset({cst.FunctionDef, cst.ClassDef})
_ONE_BLOCK = frozenset({cst.For, cst.While, cst.If})  # when their ``orelse`` is None
# CPython's statements a descended one may be (``_paired``).
_AST_OF: dict[type, tuple[type[ast.stmt], ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.If: (ast.If,),
}


def _descends(node: cst.CSTNode) -> bool:
    """Whether an edit inside ``node``'s block is re-parsed there (above)."""
    kind = type(node)
    if kind in _DEFINED or kind is cst.With:
        return True
    return kind in _ONE_BLOCK and cast(cst.For, node).orelse is None


_Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


def _reparse_inside(old: _Parsed, text: str, p: int, prefix: int, suffix: int) -> _Parsed | None:
    module = old.module
    starts = _starts(old)
    found = _reparse_block(
        old, text, cast(_Described, module.body[p]), starts[p], 0, prefix, suffix
    )
    if found is None:
        return None
    new_outer, worked_out = found
    new_module = module.with_changes(body=(*module.body[:p], new_outer, *module.body[p + 1 :]))
    shift = len(text) - len(old.text)
    new_starts = [*starts[: p + 1], *(start + shift for start in starts[p + 1 :])]
    inner = _kept_inner(old, new_module)
    # The blocks inside the statement kept as they were (the same nodes: their starts, from their
    # own, stand), now under its new node.
    stack: list[cst.CSTNode] = [new_outer]
    while stack:
        for statement in _block_statements(stack.pop()):
            if _descends(statement):
                entry = old.inner.get(id(statement))
                if entry is not None and entry[1] is statement:
                    inner[id(statement)] = (new_outer, statement, entry[2])
                stack.append(statement)
    for node, relative in worked_out:
        inner[id(node)] = (new_outer, node, relative)
    return _Parsed(text, new_module, new_starts, old.first_indent, inner)


def _block_statements(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    block = cast(_Described, node).body
    return block.body if type(block) is cst.IndentedBlock else ()


def _reparse_block(
    old: _Parsed,
    text: str,
    outer: _Described,
    base: int,
    depth: int,
    prefix: int,
    suffix: int,
) -> tuple[_Described, list[tuple[cst.CSTNode, list[int]]]] | None:
    """``outer`` (at ``base`` in the old text, inside ``depth`` blocks) with its block re-parsed
    where it changed, and the block starts worked out for the new nodes; None when not sure."""
    block = outer.body
    if type(block) is not cst.IndentedBlock or block.indent is not None:
        return None
    # Statements of a parsed block, as a module's: a simple statement line or a compound one.
    inner = cast(Sequence[_Statement], block.body)
    relative = _inner_starts(old, outer, depth)
    if relative is None:
        return None
    offsets = [base + r for r in relative]  # of each statement of the block, and its end
    old_text = old.text
    shift = len(text) - len(old_text)
    # As at the top level: i statements kept from the front, from inner[first_kept] on from the
    # back (at least one: the block's footer and end stay as they are).
    i = max(0, min(bisect_right(offsets, prefix) - 1, len(inner)))
    first_kept = max(i, min(bisect_left(offsets, len(old_text) - suffix), len(inner)))
    if first_kept == i + 1 and _descends(inner[i]):
        deeper = _reparse_block(
            old, text, cast(_Described, inner[i]), offsets[i], depth + 1, prefix, suffix
        )
        if deeper is not None:
            child, worked_out = deeper
            new_outer = outer.with_changes(
                body=block.with_changes(body=(*inner[:i], child, *inner[i + 1 :]))
            )
            new_relative = [*relative[: i + 1], *(r + shift for r in relative[i + 1 :])]
            worked_out.append((new_outer, new_relative))
            return new_outer, worked_out
    while first_kept < len(inner) and _indented_comment(inner[first_kept].leading_lines):
        first_kept += 1
    # The block's last statements may change with no statement kept after them, when its end
    # does not (the change ends before it: its footer, and what follows, stay as they are).
    if len(old_text) - suffix > offsets[-1] or prefix < offsets[0]:
        return None  # the block's end, or its header, changed
    start = offsets[i]
    end = len(text) - (len(old_text) - offsets[first_kept])
    if end < start or (end > start and text[end - 1] != "\n"):
        return None
    module = old.module
    newline = module.default_newline
    indent = module.default_indent
    head = "".join(indent * level + "if 1:" + newline for level in range(depth + 1))
    sentinel = indent * (depth + 1) + _SENTINEL + newline
    try:
        part = _parse(head + (sentinel if i else "") + text[start:end] + sentinel)
    except Exception:  # the change reaches past these statements: the statement around them
        return None
    if (
        len(part.body) != 1
        or part.header
        or part.footer
        or part.default_indent != indent
        or part.default_newline != newline
    ):
        return None
    stand_in: cst.CSTNode = part.body[0]
    for level in range(depth + 1):
        if type(stand_in) is not cst.If or stand_in.orelse is not None:
            return None
        stand_in_block = stand_in.body
        if (
            type(stand_in_block) is not cst.IndentedBlock
            or stand_in_block.indent is not None
            or stand_in_block.footer
        ):
            return None
        if level < depth:
            if len(stand_in_block.body) != 1:
                return None
            stand_in = stand_in_block.body[0]
    parsed = list(cast(Sequence[_Statement], stand_in_block.body))
    if i:
        if len(parsed) < 2 or parsed[0].leading_lines:
            return None
        parsed.pop(0)
    elif not parsed:
        return None
    moved = parsed.pop().leading_lines  # the lines before the ``pass`` after: the next one's
    kept_after = list(inner[first_kept:])
    if moved and not kept_after:
        return None  # lines after the block's last statement, not in its footer: not sure
    if moved:
        kept_after[0] = kept_after[0].with_changes(
            leading_lines=(*moved, *kept_after[0].leading_lines)
        )
    # A block ending the kept front keeps the comments after it indented past its level.
    if (
        i
        and type(inner[i - 1]) is not cst.SimpleStatementLine
        and _indented_comment(parsed[0].leading_lines if parsed else moved)
    ):
        return None
    new_outer = outer.with_changes(body=block.with_changes(body=(*inner[:i], *parsed, *kept_after)))
    # Where the block's statements start: the kept ones shift by the change in length; of the
    # new ones, all but the last are printed (in the block: with its indents) to measure them.
    indents = [indent] * (depth + 1)
    new_relative = relative[:i]
    offset = start - base
    after_new = end - base - _length_in_block(module, moved, indents)
    for statement in parsed[:-1]:
        new_relative.append(offset)
        offset += _length_in_block(module, [statement], indents)
    if parsed:
        new_relative.append(offset)
        offset = after_new
    if offset != after_new:
        return None
    new_relative.append(offset)
    new_relative.extend(r + shift for r in relative[first_kept + 1 :])
    return new_outer, [(new_outer, new_relative)]


def _inner_starts(parsed: _Parsed, outer: _Described, depth: int) -> list[int] | None:
    """Where each statement of ``outer``'s block starts, from ``outer``'s own start, and where
    the last ends: one print of ``outer`` (inside ``depth`` blocks), kept with the parse for the
    next edit."""
    entry = parsed.inner.get(id(outer))
    if entry is not None and entry[1] is outer:
        return entry[2]
    block = outer.body
    if type(block) is not cst.IndentedBlock or not block.body:
        return None
    module = parsed.module
    state = _MarkingState(module.default_indent, module.default_newline)
    state.indent_tokens = [module.default_indent] * depth
    state.marked = {id(statement): -1 for statement in block.body}
    state.last = id(block.body[-1])
    outer._codegen(state)
    lengths = [0]
    for token in state.tokens:
        lengths.append(lengths[-1] + len(token))
    found = [lengths[state.marked[id(statement)]] for statement in block.body]
    found.append(lengths[state.end])
    return found


class _MarkingState(CodegenState):
    """libcst's printing state, noting how many tokens there are as each statement of a block
    begins (``marked``, by id) and as the last one ends (``end``)."""

    marked: dict[int, int]
    last: int
    end: int = -1

    def before_codegen(self, node: CSTNode) -> None:
        if id(node) in self.marked:
            self.marked[id(node)] = len(self.tokens)

    def after_codegen(self, node: CSTNode) -> None:
        if id(node) == self.last:
            self.end = len(self.tokens)


def _length_in_block(module: cst.Module, nodes: Sequence[cst.CSTNode], indents: list[str]) -> int:
    """The length of ``nodes`` printed in a block at ``indents`` of ``module``."""
    state = CodegenState(module.default_indent, module.default_newline)
    state.indent_tokens = list(indents)
    for node in nodes:
        node._codegen(state)
    return sum(map(len, state.tokens))


# ==========================================================================================
# Block starts from CPython's tree of the same text
# ==========================================================================================
# ``_inner_starts`` prints a ``def``/``class`` (about half the cost of parsing it) to find where the
# statements of its block start. The engine has CPython's tree of the same text by then
# (``cpython.py``, made before the parse), which gives each statement's first line; a libcst
# statement starts its ``leading_lines`` (one line each) before that, at a line start. So after
# each parse the blocks not yet described are described from that tree, and the next edit's
# re-parse finds them kept (tests/test_parse_reuse.py compares them with the printed starts over
# every cookbook file). Not where a line's number could mislead: a backslash joining lines (a
# decorator's ``@`` on the line before its name), line ends other than ``\n``, form feeds.
_AstDefinition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _describe_blocks(parsed: _Parsed, key: str, old: _Parsed | None) -> None:
    """Record in ``parsed.inner`` the block starts of every ``def``/``class`` (at any depth, as
    ``_reparse_block`` descends) in the top-level statements that are new since ``old`` and not
    already there, from CPython's tree of ``parsed.text``."""
    module = parsed.module
    text = parsed.text
    kept = {id(statement) for statement in old.module.body} if old is not None else set()
    new = [_descends(s) and id(s) not in kept for s in module.body]
    if not any(new) or module.default_newline != "\n" or "\r" in text or "\f" in text:
        return
    from tinker_lint.syntax import cpython  # cpython.py imports this module

    tree = cpython.known_tree(text, key)
    if tree is None:
        return
    pairs = _paired(module.body, tree.body)
    if pairs is None:
        return
    starts = _starts(parsed)
    for p, (statement, node) in enumerate(pairs):
        if new[p]:
            start, end = starts[p], starts[p + 1]
            # Where the statement's lines start (only its own: the text may be long), and the
            # number of its first line.
            lines = _Lines(
                text.count("\n", 0, start) + 1,
                [start, *(match.end() for match in _NEWLINE.finditer(text, start, end))],
            )
            _describe(parsed, statement, statement, node, start, end, lines)


_NEWLINE = re.compile("\n")


@dataclass
class _Lines:
    first: int  # the number of the line at ``starts[0]``
    starts: list[int]  # where each line from there on starts

    def start(self, line: int) -> int | None:
        index = line - self.first
        return self.starts[index] if 0 <= index < len(self.starts) else None


def _paired(
    statements: Sequence[cst.CSTNode], nodes: Sequence[ast.stmt]
) -> list[tuple[cst.CSTNode, ast.stmt]] | None:
    """Each libcst statement of a block with the first of CPython's statements it holds (a
    simple statement line holds one per small statement); None when they do not match."""
    pairs = []
    j = 0
    for statement in statements:
        if j >= len(nodes):
            return None
        node = nodes[j]
        if type(statement) is cst.SimpleStatementLine:
            j += len(statement.body)
        else:
            if _descends(statement):
                if not isinstance(node, _AST_OF[type(statement)]):
                    return None
                if (
                    type(statement) in _DEFINED
                    and cast(_AstDefinition, node).name
                    != cast(cst.FunctionDef, statement).name.value
                ):
                    return None
            j += 1
        pairs.append((statement, node))
    return pairs if j == len(nodes) else None


def _describe(
    parsed: _Parsed,
    top: cst.CSTNode,
    outer: cst.CSTNode,
    node: ast.stmt,
    start: int,
    end: int,
    lines: _Lines,
) -> None:
    """``outer`` (libcst) and ``node`` (CPython's), from ``start`` to ``end`` in the text."""
    described = cast(_Described, outer)
    block = described.body
    if type(block) is not cst.IndentedBlock or block.indent is not None or not block.body:
        return
    if "\\\n" in parsed.text[start:end]:
        return
    inner = cast(Sequence[_Statement], block.body)
    pairs = _paired(inner, cast(Sequence[ast.stmt], getattr(node, "body", ())))
    if pairs is None:
        return
    entry = parsed.inner.get(id(outer))
    if entry is not None and entry[1] is outer:  # worked out by the re-parse: its inner ones?
        _describe_inner(parsed, top, pairs, start, entry[2], lines)
        return
    relative = []
    for statement, first in pairs:
        decorators: list[ast.expr] = getattr(first, "decorator_list", [])
        leading = cast(_Statement, statement).leading_lines
        line = (decorators[0].lineno if decorators else first.lineno) - len(leading)
        offset = lines.start(line)
        if offset is None:
            return
        relative.append(offset - start)
    # The last statement ends where the block's footer (a line each) begins, before ``end``.
    line_starts = lines.starts
    end_line = bisect_left(line_starts, end)
    if end_line >= len(line_starts) or line_starts[end_line] != end:
        return
    footer_line = end_line - len(block.footer)
    if footer_line < 0:
        return
    relative.append(line_starts[footer_line] - start)
    if relative[0] <= 0 or any(b <= a for a, b in itertools.pairwise(relative)):
        return
    parsed.inner[id(outer)] = (top, outer, relative)
    _describe_inner(parsed, top, pairs, start, relative, lines)


def _describe_inner(
    parsed: _Parsed,
    top: cst.CSTNode,
    pairs: list[tuple[cst.CSTNode, ast.stmt]],
    start: int,
    relative: list[int],
    lines: _Lines,
) -> None:
    for i, (statement, first) in enumerate(pairs):
        if _descends(statement):
            _describe(
                parsed,
                top,
                statement,
                first,
                start + relative[i],
                start + relative[i + 1],
                lines,
            )
