"""Text for a person: ``text`` shows each finding with its source lines and a caret under it, as
ruff's ``full`` output does; ``concise`` is one ``path:line:col: CODE [*] message`` line each (what
editors and problem matchers parse). Both end with the same summary."""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TextIO

from tinker_lint.codes import level_of, name_of
from tinker_lint.diagnostics import UNSAFE, Diagnostic, is_applicable
from tinker_lint.io.files import DecodeError, decode_source, read_bytes
from tinker_lint.io.terminal import printable
from tinker_lint.report.colour import BLUE, BOLD, CYAN, PLAIN, RED, Style

CONTEXT_LINES = 2  # source lines shown before and after the finding's line, as ruff shows
WIDTH = 100  # the columns the ``= help:`` lines are wrapped to
TAB = "    "  # tabs are shown as four spaces, so that the caret lines up whatever the terminal
# Where Python (and so a finding's line number) sees a line break: not at ``\f`` or ``\x1c``.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('x') else 's'}"


def write_text(
    diagnostics: Sequence[Diagnostic],
    out: TextIO,
    *,
    files: int,
    fixed: int = 0,
    unsafe_fixes: bool = False,
    full: bool = False,
    sources: Mapping[str, str] | None = None,
    style: Style = PLAIN,
    summary: bool = True,
) -> None:
    """``[*]`` marks a finding ``--fix`` would fix (an unsafe fix only with ``--unsafe-fixes``);
    ``fixed`` is how many ``--fix`` fixed before this report. ``full``: the source lines under each
    finding, read from ``sources`` (path: text) or else from the file. ``style``: colour, on a
    terminal (``report/colour.py``). ``summary``: False for ``--quiet``, the findings alone."""
    fixable = hidden = 0
    lines = _SourceLines(sources or {})
    for d in diagnostics:
        shown = d.fix is not None and is_applicable(d.fix.applicability, unsafe_fixes)
        fixable += shown
        hidden += d.fix is not None and not shown and d.fix.applicability == UNSAFE
        mark = style("[*]", CYAN) + " " if shown else ""
        # The path and message come from the files linted: a name may hold an escape sequence.
        head, message = printable(where(d)), printable(d.message)
        out.write(f"{style(head, BOLD)}: {style(d.code, BOLD, RED)} {mark}{message}\n")
        if full:
            out.write(_snippet(d, lines.of(d.path, d.cell), style))
    if not summary:
        return
    _summary(out, len(diagnostics), files, fixed)
    hint = (
        f" ({_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option)"
        if hidden
        else ""
    )
    if fixable:
        out.write(f"[*] {fixable} fixable with the `--fix` option{hint}.\n")
    elif hidden:
        out.write(f"No fixes available{hint}.\n")


def where(d: Diagnostic) -> str:
    """``path:line:col``, or ``nb.ipynb:cell 3:12:5`` in a notebook's cell (as ruff writes it)."""
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{d.path}:{cell}{d.line}:{d.col}"


def _summary(out: TextIO, found: int, files: int, fixed: int) -> None:
    checked = f"{_plural(files, 'file')} checked"
    if fixed:
        total = found + fixed
        out.write(
            f"Found {_plural(total, 'error')} ({fixed} fixed, {found} remaining) in {checked}.\n"
        )
    elif found:
        out.write(f"Found {_plural(found, 'error')} in {checked}.\n")
    else:
        out.write(f"All checks passed! ({checked})\n")


def _lines(text: str) -> list[str]:
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and not lines[-1] else lines  # no line after the last break


class _SourceLines:
    """Each reported file's lines, read once (None: it cannot be read or decoded any more); a
    notebook's, per code cell."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._given = sources
        self._texts: dict[str, list[str] | None] = {}
        self._cells: dict[str, dict[int, list[str]] | None] = {}

    def of(self, path: str, cell: int | None = None) -> list[str] | None:
        if cell is not None:
            cells = self._notebook(path)
            return cells.get(cell) if cells is not None else None
        if path not in self._texts:
            text: str | None = self._given.get(path)
            if text is None:
                try:
                    text = decode_source(read_bytes(path)).text
                except (OSError, DecodeError):
                    text = None
            self._texts[path] = None if text is None else _lines(text)
        return self._texts[path]

    def _notebook(self, path: str) -> dict[int, list[str]] | None:
        from tinker_lint.io.notebook import NotebookError, read_notebook  # a notebook's finding

        if path not in self._cells:
            given = self._given.get(path)
            try:
                raw = given.encode("utf-8") if given is not None else read_bytes(path)
                sources = read_notebook(raw).sources
            except (OSError, NotebookError):
                sources = None
            self._cells[path] = (
                None if sources is None else {n: _lines(t) for n, t in sources.items()}
            )
        return self._cells[path]


def _snippet(d: Diagnostic, lines: list[str] | None, style: Style = PLAIN) -> str:
    """ruff's ``full`` layout: a gutter of line numbers, the finding's line with carets under its
    range (to the end of that line for a range over several), the level and code beside them; then
    the rule's help (why, and what to do) and the fix's title, each on its own ``=`` line."""
    level = level_of(d.code)
    label = style.level(f"{d.code} {name_of(d.code) or ''} ({level})".replace("  ", " "), level)
    help_line = _note("help", d.help, style)
    if d.fix is not None:
        help_line += _note("fix", d.fix.message, style)
    if lines is None or not 1 <= d.line <= len(lines):
        return f"  = {label}\n{help_line}\n"
    first = max(1, d.line - CONTEXT_LINES)
    last = min(len(lines), d.line + CONTEXT_LINES)
    width = len(str(last))
    gutter = style(" " * width + " |", BOLD, BLUE)
    parts = [gutter]
    for number in range(first, last + 1):
        text = lines[number - 1].replace("\t", TAB)
        parts.append(f"{style(f'{number:>{width}} |', BOLD, BLUE)} {text}".rstrip())
        if number == d.line:
            line = lines[number - 1]
            start = len(line[: d.col - 1].replace("\t", TAB))
            end_col = d.end_col if d.end_line == d.line and d.end_col > d.col else len(line) + 1
            end = len(line[: end_col - 1].replace("\t", TAB))
            carets = style.level("^" * max(1, end - start), level)
            parts.append(f"{gutter} {' ' * start}{carets} {label}")
    parts.append(gutter)
    return "\n".join(parts) + "\n" + help_line + "\n"


def _note(kind: str, text: str, style: Style = PLAIN) -> str:
    """A ``  = help: ...`` line under the snippet (rustc's notes), wrapped to ``WIDTH`` columns with
    its continuation under the text: the help is the finding's long explanation, and a terminal
    would wrap it at any character, splitting words and code."""
    if not text:
        return ""
    head = f"  = {kind}: "
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=head,
        subsequent_indent=" " * len(head),
        break_long_words=False,
        break_on_hyphens=False,
    )
    # Painted after the wrap, which counts the columns of the plain text.
    lines[0] = f"  {style('=', BOLD, BLUE)} {style(kind, BOLD, CYAN)}: {lines[0][len(head) :]}"
    return "\n".join(lines) + "\n"


def write_fixes_applied(fixed: Sequence[Diagnostic], out: TextIO) -> None:
    """``--show-fixes``: how many of each code were fixed, per file, as ruff lists them."""
    out.write(f"Fixed {_plural(len(fixed), 'error')}:\n")
    by_path: dict[str, Counter[str]] = {}
    for d in fixed:
        by_path.setdefault(d.path, Counter())[d.code] += 1
    for path, counts in by_path.items():
        out.write(f"- {path}:\n")
        for code, n in sorted(counts.items()):
            name = name_of(code)
            out.write(f"    {n} \u00d7 {code}{f' ({name})' if name else ''}\n")
