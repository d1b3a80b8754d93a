"""Lints as the server makes them on an edited buffer, each checked against a fresh lint."""

from __future__ import annotations

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

Found = tuple[int, int, str, str]  # line, column, code, message and help (a line each)


def served_and_fresh(texts: list[str], path: str) -> list[list[Found]]:
    """Each text linted in turn as the file at ``path`` (what the last lint kept taken over, as in
    the server), asserted equal to a fresh lint of it; the findings of each."""
    settings = Settings()
    found = []
    for text in texts:
        served = [_found(d) for d in lint_text(text, path, settings).diagnostics]
        fresh = lint_text(text, path, settings, reuse_parse=False).diagnostics
        assert served == [_found(d) for d in fresh]
        found.append(served)
    return found


def _found(d: Diagnostic) -> Found:
    return (d.line, d.col, d.code, f"{d.message}\nhelp: {d.help}")
