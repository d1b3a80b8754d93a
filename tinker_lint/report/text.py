"""``path:line:col: CODE [*] message`` lines and a summary, as ruff's concise output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from tinker_lint.codes import name_of
from tinker_lint.diagnostics import UNSAFE, Diagnostic, is_applicable


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('x') else 's'}"


def write_text(
    diagnostics: Sequence[Diagnostic],
    out: TextIO,
    *,
    files: int,
    fixed: int = 0,
    unsafe_fixes: bool = False,
) -> None:
    """``[*]`` marks a finding ``--fix`` would fix (an unsafe fix only with ``--unsafe-fixes``);
    ``fixed`` is how many ``--fix`` fixed before this report."""
    fixable = hidden = 0
    for d in diagnostics:
        shown = d.fix is not None and is_applicable(d.fix.applicability, unsafe_fixes)
        fixable += shown
        hidden += d.fix is not None and not shown and d.fix.applicability == UNSAFE
        mark = "[*] " if shown else ""
        out.write(f"{d.path}:{d.line}:{d.col}: {d.code} {mark}{d.message}\n")
    if fixed:
        total = len(diagnostics) + fixed
        out.write(
            f"Found {_plural(total, 'error')} ({fixed} fixed, {len(diagnostics)} remaining) "
            f"in {files} files checked.\n"
        )
    elif diagnostics:
        out.write(f"Found {_plural(len(diagnostics), 'error')} in {files} files checked.\n")
    else:
        out.write(f"All checks passed! ({files} files checked)\n")
    hint = (
        f" ({_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option)"
        if hidden
        else ""
    )
    if fixable:
        out.write(f"[*] {fixable} fixable with the `--fix` option{hint}.\n")
    elif hidden:
        out.write(f"No fixes available{hint}.\n")


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
