"""A JSON list in the shape of ruff's ``--output-format json``, with each finding's ``level``
(``error``, ``warning``, ``note``: SARIF's words) beside its code."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from tinker_lint.codes import level_of
from tinker_lint.diagnostics import Diagnostic, Fix


def _fix(fix: Fix | None) -> dict | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {
                "content": e.content,
                "location": {"row": e.location[0], "column": e.location[1]},
                "end_location": {"row": e.end_location[0], "column": e.end_location[1]},
            }
            for e in fix.edits
        ],
    }


def to_json(d: Diagnostic) -> dict:
    return {
        "cell": d.cell,  # a notebook's cell (1-based), as ruff's; its rows are the cell's
        "code": d.code,
        "level": level_of(d.code),
        "message": d.message,
        "filename": d.path,
        "location": {"row": d.line, "column": d.col},
        "end_location": {"row": d.end_line or d.line, "column": d.end_col or d.col},
        "fix": _fix(d.fix),
        "url": d.url,
        "noqa_row": d.line,
    }


def write_json(diagnostics: Sequence[Diagnostic], out: TextIO, *, files: int) -> None:
    json.dump([to_json(d) for d in diagnostics], out, indent=2)
    out.write("\n")
