"""Run the engine over paths: discover files, read them, lint each, collect diagnostics."""

from __future__ import annotations

import os
from collections.abc import Sequence

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.engine import lint_bytes
from tinker_lint.io.files import Skipped, discover
from tinker_lint.settings import Settings


def lint_paths(
    paths: Sequence[str], settings: Settings, *, force_exclude: bool = False
) -> tuple[list[Diagnostic], int, list[str]]:
    """Diagnostics for every file under ``paths``, the number of files, and warnings."""
    diagnostics: list[Diagnostic] = []
    warnings: list[str] = []
    files = 0
    for item in discover(
        paths, settings.exclude, project_root=settings.project_root, force_exclude=force_exclude
    ):
        if isinstance(item, Skipped):
            warnings.append(f"{item.path}: skipped: {item.reason}")
            continue
        files += 1
        try:
            with open(item, "rb") as handle:
                raw = handle.read()
        except OSError as error:
            warnings.append(f"{item}: cannot read: {error.strerror or error}")
            continue
        diagnostics.extend(lint_bytes(raw, _display(item), settings).diagnostics)
    return diagnostics, files, warnings


def _display(path: str) -> str:
    return os.path.normpath(path)
