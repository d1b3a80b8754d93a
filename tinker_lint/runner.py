"""Run the engine over paths: discover files, read them, lint (or fix) each, collect diagnostics.

Python files go through the engine one by one; dependency files (TNK3xx) are judged after them,
since TNK303 asks whether the project's code names a Qwen VL model.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from tinker_lint.deps import QwenVlUse, find_qwen_vl, is_dependency_file, lint_dependency_files
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.engine import io_error, lint_bytes
from tinker_lint.io.files import (
    NotReadable,
    Skipped,
    decode_source,
    discover,
    is_python_file,
    read_bytes,
)
from tinker_lint.settings import Settings

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lint_paths(
    paths: Sequence[str], settings: Settings, *, force_exclude: bool = False
) -> tuple[list[Diagnostic], int, list[str]]:
    """Diagnostics for every file under ``paths``, the number of files, and warnings."""
    diagnostics: list[Diagnostic] = []
    warnings: list[str] = []
    files = 0
    dependency_files: list[str] = []
    qwen_vl: QwenVlUse | None = None
    for path, raw in _read(paths, settings, warnings, dependency_files, force_exclude):
        files += 1
        if isinstance(raw, OSError):
            diagnostics.extend(io_error(_display(path), raw, settings))
            continue
        qwen_vl = qwen_vl or find_qwen_vl(raw, _display(path))
        result = lint_bytes(raw, _display(path), settings)
        diagnostics.extend(result.diagnostics)
        warnings.extend(result.warnings)
    if dependency_files:
        files += len(dependency_files)
        result = lint_dependency_files(dependency_files, settings, qwen_vl)
        diagnostics.extend(result.diagnostics)
        warnings.extend(result.warnings)
    return diagnostics, files, warnings


def _read(
    paths: Sequence[str],
    settings: Settings,
    warnings: list[str],
    dependency_files: list[str] | None = None,
    force_exclude: bool = False,
) -> Iterator[tuple[str, bytes | OSError]]:
    """Each Python file's path and bytes, or the error that kept it from being read (special
    files such as FIFOs are skipped with a warning instead).
    Dependency files are collected in ``dependency_files`` when it is given, else skipped."""
    for item in discover(
        paths,
        settings.exclude,
        project_root=settings.project_root,
        force_exclude=force_exclude,
        want=_is_lintable if dependency_files is not None else is_python_file,
    ):
        if isinstance(item, Skipped):
            warnings.append(f"{item.path}: skipped: {item.reason}")
            continue
        if dependency_files is not None and is_dependency_file(item):
            dependency_files.append(item)
            continue
        try:
            raw = read_bytes(item)
        except NotReadable as error:
            warnings.append(f"{item}: skipped: {error.strerror}")
            continue
        except OSError as error:
            # A file we were meant to check and could not: a finding (as ruff's E902), not a pass.
            yield item, error
            continue
        yield item, raw


def _is_lintable(path: str) -> bool:
    return is_python_file(path) or is_dependency_file(path)


@dataclass
class FixReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what remains
    fixed: list[Diagnostic] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    files: int = 0
    warnings: list[str] = field(default_factory=list)


def fix_paths(
    paths: Sequence[str], settings: Settings, *, unsafe_fixes: bool = False, write: bool = True
) -> FixReport:
    """Fix every file under ``paths``: write the fixed files (atomically), or with ``write=False``
    collect unified diffs of what would change. A file that cannot be read or written is warned
    about and left as it was; the run goes on."""
    from tinker_lint.fix.fixer import fix_bytes
    from tinker_lint.fix.write import WriteError, write_atomic

    report = FixReport()
    for path, raw in _read(paths, settings, report.warnings):
        report.files += 1
        display = _display(path)
        if isinstance(raw, OSError):
            report.diagnostics.extend(io_error(display, raw, settings))
            continue
        outcome = fix_bytes(raw, display, settings, unsafe_fixes=unsafe_fixes)
        report.warnings.extend(f"{display}: {problem}" for problem in outcome.problems)
        if outcome.new_raw is None or outcome.result is None:
            report.diagnostics.extend(outcome.diagnostics)
            continue
        if write:
            try:
                write_atomic(path, outcome.new_raw, expected=raw)
            except WriteError as error:
                report.warnings.append(f"{display}: {error}")
                report.diagnostics.extend(outcome.result.initial)
                continue
        else:
            report.diffs.append(
                _unified_diff(decode_source(raw).text, outcome.result.text, display)
            )
        report.fixed.extend(outcome.result.fixed)
        report.diagnostics.extend(outcome.diagnostics)
    return report


def _lines(text: str) -> list[str]:
    """Lines with their ends, split only where Python sees a line break (not at ``\f``)."""
    return _LINES.findall(text)


def _unified_diff(old: str, new: str, path: str) -> str:
    lines = difflib.unified_diff(_lines(old), _lines(new), path, path)
    return "".join(
        line if line.endswith(("\n", "\r")) else f"{line}\n\\ No newline at end of file\n"
        for line in lines
    )


def _display(path: str) -> str:
    return os.path.normpath(path)
