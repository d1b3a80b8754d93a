"""``--statistics``: how many findings per code, as ruff prints them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TextIO, TypedDict

from tinker_lint.codes import name_of
from tinker_lint.diagnostics import Diagnostic


class Row(TypedDict):
    code: str
    name: str
    count: int
    fixable: bool  # every finding of the code has a fix


def statistics(diagnostics: Sequence[Diagnostic]) -> list[Row]:
    """One row per code, most frequent first (then by code)."""
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        Row(code=code, name=name_of(code), count=n, fixable=fixable[code] == n) for code, n in rows
    ]


def write_statistics(diagnostics: Sequence[Diagnostic], out: TextIO, *, as_json: bool) -> None:
    rows = statistics(diagnostics)
    if as_json:
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    if not rows:
        return
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    for row in rows:
        mark = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
        out.write(
            f"{row['count']:>{count_width}}\t{row['code']:<{code_width}}\t{mark}{row['name']}\n"
        )
