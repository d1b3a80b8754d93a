"""``path:line:col: CODE [*] message`` lines and a summary, as ruff's concise output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from tinker_lint.diagnostics import Diagnostic


def write_text(diagnostics: Sequence[Diagnostic], out: TextIO, *, files: int) -> None:
    for d in diagnostics:
        mark = "[*] " if d.fix is not None else ""
        out.write(f"{d.path}:{d.line}:{d.col}: {d.code} {mark}{d.message}\n")
    if diagnostics:
        noun = "error" if len(diagnostics) == 1 else "errors"
        fixable = sum(1 for d in diagnostics if d.fix is not None)
        out.write(f"Found {len(diagnostics)} {noun} in {files} files checked.\n")
        if fixable:
            out.write(f"[*] {fixable} fixable with the `--fix` option.\n")
    else:
        out.write(f"All checks passed! ({files} files checked)\n")
