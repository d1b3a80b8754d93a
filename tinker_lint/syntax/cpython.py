"""CPython's verdict on an edited text (``guard.python_verdict``) and its tree (``ast.parse``), from
those of the last text of the same file that compiled: only the top-level statements that changed
are compiled again.

An editor lints the whole buffer on every edit, and these two whole-file passes cost about a tenth
of a lint of a large file (docs/performance.md). The last compiling text of a file (``key``: its
path) is kept with its tree and where each of its top-level statements begins and ends. A new text
that shares a prefix and a suffix of whole top-level statements with it is compiled only in between
(the "chunk": whole lines, after the module's ``__future__`` imports and blank lines, so that line
numbers, columns and the future flags are the text's own), and its tree is put together from the
kept statements (those after the chunk moved by the change in lines) and the chunk's.

Why the chunk alone decides, when it holds only ``def`` and ``class`` statements: a sequence of
complete top-level statements tokenizes and parses alike wherever it stands between others (each
starts at column 0, with no bracket, string or block open); inside a function or class CPython's
symbol table raises errors that depend only on that statement (``nonlocal`` looks for bindings in
the enclosing functions, none of which is the module); at the module's own level only ``global``
and ``__future__`` imports can make a statement's place matter, so neither may be in play. Anything
else (a changed statement that is not a ``def``/``class``, the chunk not compiling, a ``\\r`` or
another line end than ``\\n``, a form feed) is judged on the whole text, as before: the message and
position of every syntax error are those of the whole text (tests/test_cpython_reuse.py compares
both ways over edits of every cookbook file and every kind of error).
"""

from __future__ import annotations

import ast
import re
import symtable
import warnings
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from tinker_lint.guard import SyntaxProblem, python_verdict
from tinker_lint.incremental import buffers
from tinker_lint.incremental.buffers import BufferStore, common_prefix, common_suffix

# Line ends other than "\n" (Python's "\r", "\r\n"; what ``str.splitlines`` also splits at), form
# feeds (they reset the tokenizer's column) and null bytes: the text is judged whole.
# (Each looked for by ``in``, at memchr speed: a regex class with non-ASCII members is ten times
# slower on a large file.)
_UNUSUAL = ("\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _unusual(text: str) -> bool:
    return any(character in text for character in _UNUSUAL)


# The indent of the first line with code on it from where the match starts (blank and comment
# lines skipped).
_FIRST_CODE_INDENT = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*([ \t]*)")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class _Compiled:
    """A text that compiled, its tree, and per top-level statement where the lines it is on
    begin (``begins``, offsets in ``text``) and end (``ends``, after their newline); statements
    sharing a line share the bounds of all the lines they are on."""

    text: str
    tree: ast.Module
    begins: list[int]
    ends: list[int]
    head: int  # statements up to the last ``from __future__`` import (0: none)
    head_end: int  # where the line of its end ends


_recent: BufferStore[_Compiled] = BufferStore()
# The tree made with the last verdict, for ``tree`` to hand out: (key, text, tree).
_made: tuple[str, str, ast.Module] | None = None


def verdict(text: str, path: str, key: str | None) -> SyntaxProblem | None:
    """``guard.python_verdict(text, path)``, worked out on the changed statements only where the
    last compiling text of ``key`` shows that is the same answer."""
    global _made
    if key is None or not buffers.keeps(key):
        return python_verdict(text, path)
    old = _recent.get(key)
    compiled = None
    if old is not None:
        try:
            compiled = _incremental(old, text, path)
        except Exception:  # whatever it was, the whole text gives the true answer
            _recent.pop(key)  # its tree may be half moved
            compiled = None
    if compiled is None:
        return python_verdict(text, path)
    _recent.put(key, compiled)
    _made = (key, text, compiled.tree)
    return None


def tree(text: str, key: str | None) -> ast.Module | None:
    """CPython's tree of ``text`` (which compiles): the one ``verdict`` made of it, or a whole
    parse (then kept, so that the next edit's verdict and tree need only the changed part)."""
    made = _made
    if made is not None and key is not None and made[0] == key and made[1] is text:
        return made[2]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code
            parsed = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # CPython compiled it a moment ago: never here, but never fatal
    if key is not None and buffers.keeps(key):
        compiled = _whole(text, parsed)
        if compiled is not None:
            _recent.put(key, compiled)
    return parsed


def known_tree(text: str, key: str) -> ast.Module | None:
    """CPython's tree of ``text`` when this lint already made it under ``key`` (no parse here);
    valid until the next verdict under ``key`` (which moves its kept statements' lines)."""
    made = _made
    if made is not None and made[0] == key and made[1] is text:
        return made[2]
    kept = _recent.get(key)
    if kept is not None and kept.text is text:
        return kept.tree
    return None


def _whole(text: str, parsed: ast.Module) -> _Compiled | None:
    if _unusual(text):
        return None
    line_starts = [0, *(match.end() for match in re.finditer("\n", text))]
    line_starts.append(len(text))  # where the line after the last one "begins"

    def offset(line: int) -> int:  # of the start of ``line`` (1-based)
        return line_starts[min(line - 1, len(line_starts) - 1)]

    if any(not isinstance(s, _DEFINITIONS) and _declares_global(s) for s in parsed.body):
        return None  # a name's place may matter at the module's level
    begins = [offset(_first_line(s)) for s in parsed.body]
    ends = [offset((s.end_lineno or s.lineno) + 1) for s in parsed.body]
    return _bounded(text, parsed, begins, ends)


def _first_line(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return decorators[0].lineno if decorators else statement.lineno


def _bounded(text: str, parsed: ast.Module, begins: list[int], ends: list[int]) -> _Compiled:
    """The ``_Compiled`` of ``text``, once statements sharing a line are given common bounds."""
    body = parsed.body
    for i in range(1, len(body)):  # forwards: a statement on the line of the one before
        if begins[i] < ends[i - 1]:
            begins[i] = begins[i - 1]
    for i in range(len(body) - 1, 0, -1):  # backwards: the one before ends where this one does
        if begins[i] < ends[i - 1]:
            ends[i - 1] = ends[i]
    head = 0
    for i, statement in enumerate(body):
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            head = i + 1
    return _Compiled(text, parsed, begins, ends, head, ends[head - 1] if head else 0)


def _declares_global(statement: ast.stmt) -> bool:
    """A ``global`` at the module's own level in ``statement`` (not inside a function or class)."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global):
            return True
        if isinstance(node, ast.stmt | ast.excepthandler | ast.match_case):
            stack.extend(
                child
                for child in ast.iter_child_nodes(node)
                if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)
                and not isinstance(child, _DEFINITIONS)
            )
    return False


# Kept statements and the lines they move by, for a verdict made in two steps to move each node
# once, by the sum (the statements after both changes often not at all: a line taken out of one
# function and one put in another). Moving every node of a long file's tail is a walk of its whole
# tree (6 ms on rl/train.py).
_Moves = list[tuple[list[ast.stmt], int]]


def _incremental(
    old: _Compiled, text: str, path: str, moves: _Moves | None = None
) -> _Compiled | None:
    """The verdict "compiles", with the tree, when the changed statements alone show it; None
    when the whole text must be judged (it may or may not compile). ``moves``: the kept
    statements are not moved to their new lines but noted there (one step of two)."""
    if _unusual(text):
        return None
    old_text = old.text
    prefix = common_prefix(old_text, text)
    suffix = common_suffix(old_text, text, min(len(old_text), len(text)) - prefix)
    if prefix == len(text) == len(old_text):
        return old  # the same text
    # Statements kept from the front: all their lines in the common prefix; from the back: all
    # their lines in the common suffix.
    front = bisect_right(old.ends, prefix)
    back = max(front, bisect_left(old.begins, len(old_text) - suffix))
    if front < old.head:
        return None  # the docstring or a ``__future__`` import changed
    if moves is None and back - front >= 3:
        # An edit undone in one function and one made in another far away: each compiled alone.
        half = buffers.halfway(
            old_text, text, prefix, suffix, old.ends[front], old.begins[back - 1]
        )
        noted: _Moves = []
        step = _incremental(old, half, path, noted) if half is not None else None
        done = _incremental(step, text, path, noted) if step is not None else None
        if done is not None:
            _move(noted)
            return done
    compiled = _with_chunk(old, text, path, front, back, moves)
    if compiled is None and front > old.head:
        # A line added at the end of a block is in the chunk after the block, indented: the
        # block is compiled again with it.
        start = old.ends[front - 1]
        first_code = _FIRST_CODE_INDENT.match(text, start)
        if first_code is not None and first_code.group(1):
            compiled = _with_chunk(old, text, path, front - 1, back, moves)
    return compiled


def _with_chunk(
    old: _Compiled, text: str, path: str, front: int, back: int, moves: _Moves | None = None
) -> _Compiled | None:
    old_text = old.text
    body = old.tree.body
    start = old.ends[front - 1] if front else 0
    old_end = old.begins[back] if back < len(body) else len(old_text)
    shift = len(text) - len(old_text)
    end = old_end + shift
    if start == 0 and end == len(text):
        return None  # nothing kept
    if (start and text[start - 1] != "\n") or (end < len(text) and text[end - 1] != "\n"):
        return None  # the kept lines do not begin lines in the new text (an indent added)
    chunk = text[start:end]
    head = text[: old.head_end]
    lines_before = text.count("\n", 0, start)
    padded = head + "\n" * (lines_before - head.count("\n")) + chunk
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours
            part = ast.parse(padded, path)
            symtable.symtable(padded, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the whole text tells what is wrong, where
    statements = part.body[old.head :]
    if len(part.body) < old.head or not all(isinstance(s, _DEFINITIONS) for s in statements):
        return None
    line_shift = chunk.count("\n") - old_text.count("\n", start, old_end)
    kept_after = body[back:]
    # From here on the kept tree's nodes change: the old text's tree becomes the new one's.
    if moves is not None:
        moves.append((kept_after, line_shift))
    elif line_shift:
        _shift_lines(kept_after, line_shift)
    new_tree = ast.Module(body=[*body[:front], *statements, *kept_after], type_ignores=[])
    # The chunk's statements' bounds, from its own lines; the kept ones move by the change.
    line_starts = [0, *(match.end() for match in re.finditer("\n", chunk))]
    line_starts.append(len(chunk))

    def offset(line: int) -> int:  # of the start of the text's ``line`` (1-based) in the chunk
        return start + line_starts[min(line - 1 - lines_before, len(line_starts) - 1)]

    begins = [
        *old.begins[:front],
        *(offset(_first_line(s)) for s in statements),
        *(b + shift for b in old.begins[back:]),
    ]
    ends = [
        *old.ends[:front],
        *(offset((s.end_lineno or s.lineno) + 1) for s in statements),
        *(e + shift for e in old.ends[back:]),
    ]
    return _bounded(text, new_tree, begins, ends)


_FIELDS: dict[type, tuple[tuple[str, ...], bool]] = {}


def _move(moves: _Moves) -> None:
    """Each statement of ``moves`` by the sum of the lines it is noted to move by."""
    total: dict[int, int] = {}
    statements: dict[int, ast.stmt] = {}
    for kept, lines in moves:
        for statement in kept:
            total[id(statement)] = total.get(id(statement), 0) + lines
            statements[id(statement)] = statement
    by_lines: dict[int, list[ast.stmt]] = {}
    for key, lines in total.items():
        if lines:
            by_lines.setdefault(lines, []).append(statements[key])
    for lines, kept in by_lines.items():
        _shift_lines(kept, lines)


def _shift_lines(nodes: list[ast.stmt], lines: int) -> None:
    """``ast.increment_lineno`` of each of ``nodes``, about three times faster (no generator)."""
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        cls = type(node)
        known = _FIELDS.get(cls)
        if known is None:
            known = _FIELDS[cls] = (cls._fields, "lineno" in cls._attributes)
        fields, placed = known
        if placed:
            node.lineno += lines  # type: ignore[attr-defined]
            end = node.end_lineno  # type: ignore[attr-defined]
            if end is not None:
                node.end_lineno = end + lines  # type: ignore[attr-defined]
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(child for child in value if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
