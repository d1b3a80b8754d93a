"""tinker-lint's records in LSP's terms.

tinker-lint counts lines and columns from 1, columns in code points; LSP counts both from 0, and
columns in the ``positionEncoding`` agreed at ``initialize``: UTF-16 code units unless the client
offers another (pygls takes the client's first of UTF-8, UTF-16, UTF-32). So a character outside
the Basic Multilingual Plane (an emoji) is one column to us, two in UTF-16, four in UTF-8. Lines
end where Python and LSP both end them: CRLF, CR or LF (not at a form feed).
"""

from __future__ import annotations

import re

from lsprotocol import types

from tinker_lint.codes import Level, level_of
from tinker_lint.diagnostics import SAFE, Diagnostic, Edit, docs_url

SOURCE = "tinker-lint"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# The project's levels as LSP severities, as docs/configuration.md maps them for VS Code's Flake8
# extension (a note is Information).
SEVERITY: dict[Level, types.DiagnosticSeverity] = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}


def split_lines(text: str) -> list[str]:
    """The text's lines without their ends (one more than its line breaks)."""
    if "\r" not in text:
        return text.split("\n")  # the usual case, about 5 times faster than the pattern
    return _LINE_BREAK.split(text)


UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"  # PositionEncodingKind's values


def lsp_column(line: str, column: int, encoding: str = UTF16) -> int:
    """The offset, in ``encoding``'s code units, of the 0-based code-point ``column`` of ``line``."""
    head = line[:column]
    if encoding == UTF32 or head.isascii():
        return len(head)
    if encoding == UTF8:
        return len(head.encode("utf-8", "surrogatepass"))
    return len(head.encode("utf-16-le", "surrogatepass")) // 2


def position(lines: list[str], line: int, column: int, encoding: str = UTF16) -> types.Position:
    """LSP's position of tinker-lint's 1-based (line, column)."""
    row = max(line - 1, 0)
    text = lines[row] if row < len(lines) else ""
    return types.Position(row, lsp_column(text, max(column - 1, 0), encoding))


def diagnostic(found: Diagnostic, lines: list[str], encoding: str = UTF16) -> types.Diagnostic:
    start = position(lines, found.line, found.col, encoding)
    end = start
    if found.end_line:
        end = position(lines, found.end_line, found.end_col, encoding)
    return types.Diagnostic(
        range=types.Range(start, end),
        message=found.message,
        severity=SEVERITY[level_of(found.code)],
        code=found.code,
        code_description=types.CodeDescription(href=docs_url(found.code)),
        source=SOURCE,
    )


def text_edit(edit: Edit, lines: list[str], encoding: str = UTF16) -> types.TextEdit:
    start = position(lines, *edit.location, encoding)
    end = position(lines, *edit.end_location, encoding)
    return types.TextEdit(range=types.Range(start, end), new_text=edit.content)


def fix_title(found: Diagnostic) -> str:
    """A quick fix's title: the fix's own message, ``(unsafe)`` when it may change behaviour."""
    assert found.fix is not None
    title = f"{found.code}: {found.fix.message}"
    return title if found.fix.applicability == SAFE else f"{title} (unsafe)"


_CODE_WORD = re.compile(r"TNK\d{3}")


def code_at(line: str, column: int) -> str | None:
    """The tinker-lint code written at the 0-based code-point ``column`` of ``line`` (in a
    ``# noqa: TNK101``, a ``per-file-ignores`` list, a docstring), if there is one."""
    for match in _CODE_WORD.finditer(line):
        if match.start() <= column <= match.end():
            return match.group()
    return None


def code_point_column(line: str, column: int, encoding: str = UTF16) -> int:
    """The 0-based code-point column of LSP's ``column`` (in ``encoding``'s units) in ``line``."""
    if encoding == UTF32 or line.isascii():
        return min(column, len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        if encoding == UTF8:
            units += len(char.encode("utf-8", "surrogatepass"))
        else:
            units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def rule_hover(code: str, help: str = "") -> str:
    """Markdown for a code: its name, level, what to do, and its page; over a finding, the
    finding's help (why, and what to do here) instead of the rule's summary: the diagnostic's own
    message stays the short one the editor lists."""
    from tinker_lint.docs import rule_name, rule_summary

    return (
        f"**{code}** `{rule_name(code)}` ({level_of(code)})\n\n{help or rule_summary(code)}\n\n"
        f"[{code}]({docs_url(code)})"
    )
