"""Run the engine over paths: discover files, read them, lint each, collect diagnostics.

Python files go through the engine one by one; dependency files (TNK3xx) are judged after them,
since TNK303 asks whether the project's code names a Qwen VL model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from tinker_lint.deps import QwenVlUse, find_qwen_vl, is_dependency_file, lint_dependency_files
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.engine import lint_bytes
from tinker_lint.io.files import Skipped, discover, is_python_file
from tinker_lint.settings import Settings


def lint_paths(
    paths: Sequence[str], settings: Settings, *, force_exclude: bool = False
) -> tuple[list[Diagnostic], int, list[str]]:
    """Diagnostics for every file under ``paths``, the number of files, and warnings."""
    diagnostics: list[Diagnostic] = []
    warnings: list[str] = []
    files = 0
    dependency_files: list[str] = []
    qwen_vl: QwenVlUse | None = None
    for item in discover(
        paths,
        settings.exclude,
        project_root=settings.project_root,
        force_exclude=force_exclude,
        want=_is_lintable,
    ):
        if isinstance(item, Skipped):
            warnings.append(f"{item.path}: skipped: {item.reason}")
            continue
        files += 1
        if is_dependency_file(item):
            dependency_files.append(item)
            continue
        try:
            with open(item, "rb") as handle:
                raw = handle.read()
        except OSError as error:
            warnings.append(f"{item}: cannot read: {error.strerror or error}")
            continue
        qwen_vl = qwen_vl or find_qwen_vl(raw, _display(item))
        diagnostics.extend(lint_bytes(raw, _display(item), settings).diagnostics)
    if dependency_files:
        result = lint_dependency_files(dependency_files, settings, qwen_vl)
        diagnostics.extend(result.diagnostics)
        warnings.extend(result.warnings)
    return diagnostics, files, warnings


def _is_lintable(path: str) -> bool:
    return is_python_file(path) or is_dependency_file(path)


def _display(path: str) -> str:
    return os.path.normpath(path)
