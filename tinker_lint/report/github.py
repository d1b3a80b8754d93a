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


def annotation(d: Diagnostic) -> str:
    properties = [
        ("title", f"tinker-lint ({d.code})"),
        ("file", d.path.replace("\\", "/")),
        ("line", str(d.line)),
        ("col", str(d.col)),
        ("endLine", str(d.end_line or d.line)),
        ("endColumn", str(d.end_col or d.col)),
    ]
    props = ",".join(f"{key}={_property(value)}" for key, value in properties)
    # An annotation has no cell: its line is the cell's, and the message names the cell.
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    body = f"{d.path}:{cell}{d.line}:{d.col}: {d.code} {d.message}"
    return f"::{COMMANDS[level_of(d.code)]} {props}::{_data(body)}"


def write_github(diagnostics: Sequence[Diagnostic], out: TextIO, *, files: int) -> None:
    for d in diagnostics:
        out.write(annotation(d) + "\n")
