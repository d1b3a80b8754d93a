"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

The format is ``::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=T::message`` (``::warning``
or ``::notice`` for a rule of that level); values are escaped as the Actions toolkit does (``%``, CR
and LF everywhere, ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from tinker_lint.codes import level_of
from tinker_lint.diagnostics import Diagnostic

# SARIF's levels, in the workflow commands' words.
COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _place(d: Diagnostic) -> tuple[int, int, int, int]:
    """Where the annotation goes in the file. A notebook's cell has no place in an annotation,
    which GitHub puts on a line of the ``.ipynb`` JSON text: the finding's own line there (the
    string of the cell's ``"source"`` that holds it, ``Diagnostic.file_range``), so that a
    reviewer sees it on the code in the file's diff. ruff (0.17) puts every notebook finding at
    1:1 instead; that is our fallback when the JSON place is not known (a cache entry from an
    older version). The message still names the cell and its line."""
    if d.cell is None:
        return d.line, d.col, d.end_line or d.line, d.end_col or d.col
    return d.file_range or (1, 1, 1, 1)


def annotation(d: Diagnostic) -> str:
    line, col, end_line, end_col = _place(d)
    properties = [
        ("title", f"tinker-lint ({d.code})"),
        ("file", d.path.replace("\\", "/")),
        ("line", str(line)),
        ("col", str(col)),
        ("endLine", str(end_line)),
        ("endColumn", str(end_col)),
    ]
    props = ",".join(f"{key}={_property(value)}" for key, value in properties)
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    body = f"{d.path}:{cell}{d.line}:{d.col}: {d.code} {d.message}"
    return f"::{COMMANDS[level_of(d.code)]} {props}::{_data(body)}"


def write_github(diagnostics: Sequence[Diagnostic], out: TextIO, *, files: int) -> None:
    for d in diagnostics:
        out.write(annotation(d) + "\n")
