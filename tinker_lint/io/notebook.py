"""Jupyter notebooks as Python text: the code cells joined, each finding mapped back to its cell.

As ruff's notebook support does: the code cells are joined with a line break between them (and
one at the end), so a cell's line ``n`` is one line of the joined text; a cell that IPython runs as
something else (a cell magic such as ``%%time`` or ``%%bash``, or an automagic line such as
``pip install x``) is left out whole. Lines IPython rewrites (line magics ``%pip ...``, shell lines
``!nvidia-smi``, ``x = !ls``, help ``x?``) become a ``pass`` with the same indentation, so that
every line keeps its number and the code around them still parses.

``--fix`` edits the joined text; ``CellLayout`` follows the cells through each pass of edits (an
edit that would cross a cell boundary or touch a masked line is not allowed), and
``Notebook.rewrite`` writes only the changed cells' ``"source"`` back into the JSON text, in the
form it had (a list of lines or one string, the same indentation and escapes): every other byte
of the file stays as it was.
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from json.decoder import scanstring  # type: ignore[attr-defined]

from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.io.files import NOTEBOOK_SUFFIX as NOTEBOOK_SUFFIX
from tinker_lint.io.files import is_notebook as is_notebook

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_END = re.compile(r"(?:\r\n|\r|\n)\Z")
_BREAKS = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Lines IPython rewrites before Python sees them (at the start of a logical line).
_ESCAPE = re.compile(r"[ \t]*[%!]")
_ASSIGNED_ESCAPE = re.compile(r"[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[%!]")
_HELP = re.compile(r"[ \t]*(?:\?{1,2}[\w.*]+|[\w.*]+(?:\(\))?\?{1,2})[ \t]*\Z")
# IPython's automagics: a cell starting with one (``pip install x``) is not Python, and Jupyter
# allows no Python after it. As ruff's list (``crates/ruff_notebook/src/cell.rs``).
_AUTOMAGIC_NAMES = """alias alias_magic autoawait autocall automagic bookmark cd code_wrap colors conda config
    debug dhist dirs doctest_mode edit env gui history killbgscripts load load_ext loadpy logoff
    logon logstart logstate logstop lsmagic macro magic mamba matplotlib micromamba notebook page
    pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource
    pushd pwd pycat pylab quickref recall rehashx reload_ext rerun reset reset_selective run save
    sc set_env sx system tb time timeit unalias unload_ext who who_ls whos xdel xmode"""
AUTOMAGICS = frozenset(_AUTOMAGIC_NAMES.split())


class NotebookError(Exception):
    """Bytes that are not a Jupyter notebook; ``line``/``col`` (1-based) locate the problem in the
    file's JSON text."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based among all the notebook's cells, as Jupyter and ruff count them
    source: str  # as the file holds it
    first_line: int  # its first line in the joined text (1-based)
    # Each line of the cell in the joined text: None where it is the cell's own line, else the
    # line IPython rewrites (masked as ``pass``), without its line end.
    masks: tuple[str | None, ...]


@dataclass(frozen=True)
class Notebook:
    text: str  # the Python text: the code cells joined
    cells: tuple[CodeCell, ...]  # the cells in ``text``, in order
    sources: dict[int, str]  # every code cell's source by number (those left out too)
    json_text: str  # the file as read (decoded, without a BOM)
    bom: bool = False  # the file starts with a UTF-8 BOM (kept when it is written back)

    def where(self, line: int) -> tuple[int, int] | None:
        """(cell number, line in the cell) of a line of ``text``; None past the last cell."""
        for cell in reversed(self.cells):
            if line >= cell.first_line:
                local = line - cell.first_line + 1
                return (cell.number, local) if local <= len(cell.masks) else None
        return None

    def in_file(self, cell: int, line: int, col: int) -> tuple[int, int] | None:
        """The (line, column) in the file's JSON text (1-based, code points) of the character at
        ``line``/``col`` of a cell: inside the string of the cell's ``"source"`` that holds it,
        past the escapes before it. A position past the cell's end (its last line, when the source
        ends with a line break) is just before the last string's closing quote. None: the cell's
        source is not in the file (an empty list holds no string)."""
        mapped = self._raw_offsets.get(cell)
        if not mapped:
            return None
        source = self.sources[cell]
        lines = _LINES.findall(source)
        offset = sum(len(text) for text in lines[: line - 1])
        if line - 1 < len(lines):  # within its line (a masked line's column may be past it)
            body = _LINE_END.sub("", lines[line - 1])
            offset += min(max(col, 1) - 1, len(body))
        offset = min(offset, len(source))
        raw = mapped[offset]
        at_line = bisect.bisect_right(self._line_starts, raw)
        return at_line, raw - self._line_starts[at_line - 1] + 1

    @cached_property
    def _line_starts(self) -> list[int]:
        # Found once: a notebook with outputs can be megabytes, and each finding asks.
        return [0, *(match.end() for match in _BREAKS.finditer(self.json_text))]

    @cached_property
    def _raw_offsets(self) -> dict[int, list[int]]:
        """For each cell of ``text``, the JSON text offset of each character of its source and
        one more entry for its end (the last string's closing quote)."""
        spans = _source_spans(self.json_text)
        found = {}
        for cell in self.cells:
            span = spans.get(cell.number)
            if span is None:
                continue
            literals = span.items if span.items is not None else ((span.start, span.end),)
            offsets: list[int] = []
            for start, end in literals:
                offsets += _string_offsets(self.json_text, start, end)
            if literals:
                offsets.append(literals[-1][1] - 1)
            # A mismatch would mean a misread escape: no position rather than a wrong one.
            if len(offsets) == len(self.sources[cell.number]) + 1:
                found[cell.number] = offsets
        return found

    def layout(self) -> CellLayout:
        return CellLayout([(cell.number, list(cell.masks)) for cell in self.cells])

    def locate(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Diagnostics of ``text`` in cell coordinates (their fixes' edits too); a fix the
        notebook cannot take (it crosses cells or touches a masked line) is dropped."""
        layout = self.layout()
        located = []
        for d in diagnostics:
            start = self.where(d.line)
            if start is None:  # past the end (a syntax error at EOF): the last cell's last line
                if not self.cells:
                    located.append(d)
                    continue
                last = self.cells[-1]
                start = (last.number, len(last.masks))
            end = self.where(d.end_line) if d.end_line else None
            end_line = end[1] if end is not None and end[0] == start[0] else start[1]
            fix = d.fix if d.fix is not None and layout.allows(d.fix) else None
            if fix is not None:
                fix = replace(fix, edits=tuple(self._edit(e) for e in fix.edits))
            end_col = d.end_col or d.col
            if not d.end_line or (end_line, end_col) < (start[1], d.col):
                end_line, end_col = start[1], d.col
            begin = self.in_file(start[0], start[1], d.col)
            finish = self.in_file(start[0], end_line, end_col)
            file_range = (*begin, *finish) if begin and finish else None
            located.append(
                replace(
                    d,
                    line=start[1],
                    end_line=end_line if d.end_line else d.end_line,
                    cell=start[0],
                    fix=fix,
                    file_range=file_range,
                )
            )
        return located

    def _edit(self, edit: Edit) -> Edit:
        # In the cell of its start (``CellLayout.allows`` said so); a whole-line edit of the
        # cell's last line ends just past it.
        cell = next(c for c in reversed(self.cells) if edit.location[0] >= c.first_line)
        offset = cell.first_line - 1
        start, end = edit.location, edit.end_location
        return Edit(edit.content, (start[0] - offset, start[1]), (end[0] - offset, end[1]))

    def rewrite(self, layout: CellLayout, new_text: str) -> bytes:
        """The file's bytes with the cells of ``new_text`` (the joined text after fixes that
        ``layout`` followed) in place of the old ones: only changed ``"source"`` values are
        rewritten. Raises ``NotebookError`` if ``new_text`` does not fit the layout."""
        new_sources = layout.sources(new_text)
        spans = _source_spans(self.json_text)
        ascii_only = self.json_text.isascii()
        pieces: list[str] = []
        cursor = 0
        for number, source in new_sources:
            if source == self.sources[number]:
                continue
            if number not in spans:
                raise NotebookError(f"cannot find cell {number}'s source in the file")
            span = spans[number]
            pieces.append(self.json_text[cursor : span.start])
            pieces.append(_render(self.json_text, span, source, ascii_only))
            cursor = span.end
        pieces.append(self.json_text[cursor:])
        return (codecs.BOM_UTF8 if self.bom else b"") + "".join(pieces).encode("utf-8")

    def diff(self, layout: CellLayout, new_text: str, path: str) -> str:
        """A unified diff per changed cell, each headed ``path:cell N``, as ruff shows them."""
        parts = []
        for number, source in layout.sources(new_text):
            old = self.sources[number]
            if source == old:
                continue
            name = f"{path}:cell {number}"
            lines = difflib.unified_diff(
                _with_ends(old), _with_ends(source), name, name, lineterm="\n"
            )
            parts.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
        return "".join(parts)


def _with_ends(text: str) -> list[str]:
    return _LINES.findall(text)


class CellLayout:
    """Where each cell is in the joined text, followed through the fixes applied to it."""

    def __init__(self, cells: list[tuple[int, list[str | None]]]) -> None:
        self._cells = cells

    def _starts(self) -> list[int]:
        starts, line = [], 1
        for _, masks in self._cells:
            starts.append(line)
            line += len(masks)
        return starts

    def _cell_of(self, line: int, starts: Sequence[int]) -> int | None:
        for index in range(len(starts) - 1, -1, -1):
            if line >= starts[index]:
                return index if line - starts[index] < len(self._cells[index][1]) else None
        return None

    def allows(self, fix: Fix) -> bool:
        """Whether every edit stays within one cell and off its masked lines."""
        starts = self._starts()
        for edit in fix.edits:
            first, last, _ = _lines_replaced(edit)
            index = self._cell_of(first, starts)
            if index is None or self._cell_of(last, starts) != index:
                return False
            masks = self._cells[index][1]
            if any(masks[line - starts[index]] is not None for line in range(first, last + 1)):
                return False
        return True

    def applied(self, fixes: Iterable[Fix]) -> None:
        """Follow the lines each edit replaced (the edits ``allows`` admitted, applied at once)."""
        starts = self._starts()
        changes = []
        for fix in fixes:
            for edit in fix.edits:
                first, last, count = _lines_replaced(edit)
                index = self._cell_of(first, starts)
                assert index is not None
                changes.append((index, first - starts[index], last - starts[index], count))
        for index, first, last, count in sorted(changes, reverse=True):
            self._cells[index][1][first : last + 1] = [None] * count

    def sources(self, text: str) -> list[tuple[int, str]]:
        """Each cell's source in ``text`` (its masked lines as they were)."""
        lines = _LINES.findall(text)
        if len(lines) != sum(len(masks) for _, masks in self._cells):
            raise NotebookError("the fixed text no longer lines up with the notebook's cells")
        result = []
        at = 0
        for number, masks in self._cells:
            own = lines[at : at + len(masks)]
            at += len(masks)
            for n, mask in enumerate(masks):
                if mask is not None:
                    end = _LINE_END.search(own[n])
                    own[n] = mask + (end.group() if end else "")
            joined = "".join(own)
            result.append((number, _LINE_END.sub("", joined, count=1)))  # the cells' separator
        return result


def _lines_replaced(edit: Edit) -> tuple[int, int, int]:
    """The first and last lines an edit changes, and how many lines stand in their place. An
    edit of whole lines ends at column 1 of the next line (maybe the next cell's first) and its
    text ends with a line break: that next line is left as it was."""
    first, last = edit.location[0], edit.end_location[0]
    breaks = len(_BREAKS.findall(edit.content))
    if last > first and edit.end_location[1] == 1 and _LINE_END.search(edit.content):
        return first, last - 1, breaks
    return first, last, breaks + 1


def read_notebook(raw: bytes) -> Notebook:
    """The notebook in ``raw`` (UTF-8 JSON, nbformat 4), or ``NotebookError`` saying why not. An
    empty file is an empty notebook; a notebook of another language has no Python."""
    bom = raw.startswith(codecs.BOM_UTF8)
    if bom:
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        json_text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        col = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise NotebookError(f"not valid UTF-8 (byte 0x{raw[error.start]:02X})", line, col) from None
    if not json_text.strip():
        return Notebook("", (), {}, json_text, bom)
    try:
        data = json.loads(json_text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error.msg}", error.lineno, error.colno) from None
    except RecursionError:
        raise NotebookError("not a Jupyter notebook: nested too deeply") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError('not a Jupyter notebook: no "cells" list at its top level')
    nbformat = data.get("nbformat", 4)
    if nbformat != 4:
        raise NotebookError(f"nbformat {nbformat!r} is not supported (only nbformat 4)")
    sources: dict[int, str] = {}
    for number, cell in enumerate(data["cells"], 1):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a Jupyter notebook: cell {number} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f'not a Jupyter notebook: cell {number}\'s "source" is not text')
        sources[number] = source
    if not _is_python(data.get("metadata")):
        return Notebook("", (), sources, json_text, bom)
    cells: list[CodeCell] = []
    chunks: list[str] = []
    line = 1
    for number, source in sources.items():
        if _runs_as_other(source):
            continue
        masked, masks = _mask(source)
        chunk = masked + "\n"
        cell = CodeCell(number, source, line, tuple(masks))
        assert len(_LINES.findall(chunk)) == len(cell.masks)
        cells.append(cell)
        chunks.append(chunk)
        line += len(cell.masks)
    return Notebook("".join(chunks), tuple(cells), sources, json_text, bom)


def _is_python(metadata: object) -> bool:
    """A notebook says its language in ``language_info`` (or its kernel's); none means Python."""
    if not isinstance(metadata, dict):
        return True
    for key in ("language_info", "kernelspec"):
        info = metadata.get(key)
        if isinstance(info, dict):
            name = info.get("name" if key == "language_info" else "language")
            if isinstance(name, str):
                return name.lower() == "python"
    return True


def _runs_as_other(source: str) -> bool:
    """A cell magic anywhere (``%%time``, ``%%bash``: it takes the whole cell), or a first line
    that is an automagic (``pip install x``) and not Python."""
    lines = source.splitlines()
    if any(line.lstrip().startswith("%%") for line in lines):
        return True
    words = lines[0].split() if lines else []
    if words and words[0] in AUTOMAGICS:
        try:
            compile(lines[0], "<cell>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return True
    return False


def _mask(source: str) -> tuple[str, list[str | None]]:
    """The cell's text with IPython's own lines as ``pass``, and each line's mask (the original
    line, or None). A cell's lines are those of ``source + "\\n"``: an empty cell has one."""
    lines = _LINES.findall(source + "\n")
    masks: list[str | None] = []
    out = []
    for line, starts_statement in zip(lines, _statement_starts(lines), strict=True):
        body = _LINE_END.sub("", line)
        if starts_statement and (
            _ESCAPE.match(body) or _ASSIGNED_ESCAPE.match(body) or _HELP.match(body)
        ):
            indent = body[: len(body) - len(body.lstrip(" \t"))]
            masks.append(body)
            out.append(indent + "pass" + line[len(body) :])
        else:
            masks.append(None)
            out.append(line)
    return "".join(out)[:-1], masks  # without the "\n" added above


def _statement_starts(lines: Sequence[str]) -> list[bool]:
    """Whether each line starts a logical line: not inside brackets, a string or after a
    backslash (where ``%`` or ``!=`` may begin a continued expression)."""
    starts = []
    depth = 0
    quote = ""  # the open string's quote, if a string spans lines
    continued = False
    for line in lines:
        starts.append(depth == 0 and not quote and not continued)
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if quote:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = ""
                    continue
                i += 1
                continue
            if c == "#":
                break
            if c in "\"'":
                triple = line[i : i + 3]
                quote = triple if triple in ('"""', "'''") else c
                i += len(quote)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            i += 1
        if quote in ('"', "'"):
            quote = ""  # a one-quote string ends with its line (or is an error Python reports)
        continued = line.rstrip("\r\n").endswith("\\")
    return starts


@dataclass(frozen=True)
class _Span:
    start: int  # the "source" value's offsets in the JSON text
    end: int
    items: tuple[tuple[int, int], ...] | None  # a list's strings; None: one string


def _source_spans(text: str) -> dict[int, _Span]:
    """Where each cell's ``"source"`` value is in the JSON text, by cell number (each value is
    read, or stepped over, by the standard library's own decoder)."""
    decoder = json.JSONDecoder()
    spans: dict[int, _Span] = {}

    def skip(i: int) -> int:
        match = _WHITESPACE.match(text, i)
        assert match is not None
        return match.end()

    def value_end(i: int) -> int:
        return int(decoder.raw_decode(text, i)[1])

    def members(i: int, visit: Callable[[str, int], int]) -> int:
        """The object at ``i``: ``visit(key, value start)`` returns where each value ends."""
        i = skip(i + 1)
        while text[i] != "}":
            key, i = scanstring(text, i + 1)
            i = skip(visit(key, skip(skip(i) + 1)))  # past the ":"
            if text[i] == ",":
                i = skip(i + 1)
        return i + 1

    def items(i: int, visit: Callable[[int, int], int]) -> int:
        """The array at ``i``: ``visit(index, item start)`` returns where each item ends."""
        i, index = skip(i + 1), 0
        while text[i] != "]":
            i = skip(visit(index, i))
            index += 1
            if text[i] == ",":
                i = skip(i + 1)
        return i + 1

    def cell(index: int, i: int) -> int:
        if text[i] != "{":
            return value_end(i)

        def member(key: str, j: int) -> int:
            end = value_end(j)
            if key == "source":
                found: list[tuple[int, int]] = []

                def line(_: int, k: int) -> int:
                    found.append((k, value_end(k)))
                    return found[-1][1]

                if text[j] == "[":
                    items(j, line)
                spans[index + 1] = _Span(j, end, tuple(found) if text[j] == "[" else None)
            return end

        return members(i, member)

    def top(key: str, i: int) -> int:
        return items(i, cell) if key == "cells" and text[i] == "[" else value_end(i)

    members(skip(0), top)
    return spans


def _string_offsets(text: str, start: int, end: int) -> list[int]:
    """The offset in ``text`` of each character the JSON string at ``start:end`` (quotes
    included) decodes to: an escape is one character (a ``\\u`` surrogate pair too, as
    ``json`` decodes it)."""
    offsets = []
    i, stop = start + 1, end - 1
    while i < stop:
        offsets.append(i)
        if text[i] != "\\":
            i += 1
        elif text[i + 1] != "u":
            i += 2
        elif (
            0xD800 <= int(text[i + 2 : i + 6], 16) <= 0xDBFF
            and text.startswith("\\u", i + 6)
            and 0xDC00 <= int(text[i + 8 : i + 12], 16) <= 0xDFFF
        ):
            i += 12
        else:
            i += 6
    return offsets


def _render(text: str, span: _Span, source: str, ascii_only: bool) -> str:
    """A cell's new ``"source"`` in the form of the old: one string, or a list laid out as it was
    (its lines that did not change keep their very bytes)."""
    if span.items is None:
        return json.dumps(source, ensure_ascii=ascii_only)
    old_items = [text[a:b] for a, b in span.items]
    old_lines = [json.loads(item) for item in old_items]
    new_lines = _with_ends(source)
    if span.items:
        opening = text[span.start + 1 : span.items[0][0]]
        closing = text[span.items[-1][1] : span.end - 1]
        separator = (
            text[span.items[0][1] : span.items[1][0]] if len(span.items) > 1 else "," + opening
        )
    else:  # an empty list (never fixed: it holds no code), written on one line
        opening = closing = ""
        separator = ", "
    rendered = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            rendered.extend(old_items[a1:a2])
        else:
            rendered.extend(json.dumps(line, ensure_ascii=ascii_only) for line in new_lines[b1:b2])
    if not rendered:
        return "[]"
    return "[" + opening + separator.join(rendered) + closing + "]"
