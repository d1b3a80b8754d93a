"""Run the engine over paths: discover files, read them, lint each, collect diagnostics."""

from __future__ import annotations

import os
from collections.abc import Sequence

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.engine import io_error, lint_bytes
from tinker_lint.io.files import NotReadable, Skipped, discover, read_bytes
from tinker_lint.settings import Settings


def lint_paths(paths: Sequence[str], settings: Settings) -> tuple[list[Diagnostic], int, list[str]]:
    """Diagnostics for every file under ``paths``, the number of files, and warnings."""
    diagnostics: list[Diagnostic] = []
    warnings: list[str] = []
    files = 0
    for item in discover(paths, settings.exclude):
        if isinstance(item, Skipped):
            warnings.append(f"{item.path}: skipped: {item.reason}")
            continue
        try:
            raw = read_bytes(item)
        except NotReadable as error:
            warnings.append(f"{item}: skipped: {error.strerror}")
            continue
        except OSError as error:
            files += 1
            # A file we were meant to check and could not: a finding (as ruff's E902), not a pass.
            diagnostics.extend(io_error(_display(item), error, settings))
            continue
        files += 1
        result = lint_bytes(raw, _display(item), settings)
        diagnostics.extend(result.diagnostics)
        warnings.extend(result.warnings)
    return diagnostics, files, warnings


def _display(path: str) -> str:
    return os.path.normpath(path)
