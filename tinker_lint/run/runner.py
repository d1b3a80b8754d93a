"""Run the engine over paths: discover files, read them, lint each, collect diagnostics.

Python files are answered from the cache when it holds them, else linted: in this process when
there are few, else across processes (one per core, with the files in batches, largest first).
Diagnostics come out in discovery order whichever way a file was linted. Dependency files (TNK3xx)
are judged after the Python files, since TNK303 asks whether the project's code names a Qwen VL
model.

The engine (and libcst) is imported only when a file has to be linted: a run answered wholly
from the cache does not pay for it.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tinker_lint.deps.kinds import is_dependency_file
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io.files import (
    NotReadable,
    Skipped,
    decode_source,
    discover,
    is_python_file,
    read_bytes,
)
from tinker_lint.io.settings import Settings
from tinker_lint.run.cache import Cache

if TYPE_CHECKING:
    import multiprocessing.context

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

# Below these, starting processes costs more than it saves (measured: docs/performance.md).
MIN_FILES_FOR_PROCESSES = 16
MIN_BYTES_FOR_PROCESSES = 256 * 1024
# Batches per process: enough that one slow batch does not leave the other processes idle.
BATCHES_PER_PROCESS = 12


@dataclass
class Run:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    warnings: list[str] = field(default_factory=list)
    linted: int = 0  # Python files the engine ran on
    cached: int = 0  # Python files answered from the cache
    processes: int = 0  # processes that linted them (0: none was linted)


def lint_paths(
    paths: Sequence[str],
    settings: Settings,
    *,
    force_exclude: bool = False,
    cache: Cache | None = None,
    jobs: int | None = None,
) -> tuple[list[Diagnostic], int, list[str]]:
    """Diagnostics for every file under ``paths``, the number of files, and warnings."""
    run = run_paths(paths, settings, force_exclude=force_exclude, cache=cache, jobs=jobs)
    return run.diagnostics, run.files, run.warnings


def run_paths(
    paths: Sequence[str],
    settings: Settings,
    *,
    force_exclude: bool = False,
    cache: Cache | None = None,
    jobs: int | None = None,
) -> Run:
    """As ``lint_paths``, with how each file was answered. ``jobs``: processes to use at most
    (default: the usable cores; 1 lints in this process)."""
    run = Run()
    items = list(
        discover(
            paths,
            settings.exclude,
            project_root=settings.project_root,
            force_exclude=force_exclude,
            want=_is_lintable,
        )
    )
    dependency_files = [i for i in items if isinstance(i, str) and is_dependency_file(i)]
    qwen_vl = None
    per_file: list[list[Diagnostic] | None] = []  # Python files in discovery order
    todo: list[tuple[int, str, bytes, str | None]] = []  # (index, path, bytes, cache key)
    for item in items:
        if isinstance(item, Skipped):
            run.warnings.append(f"{item.path}: skipped: {item.reason}")
            continue
        run.files += 1
        if is_dependency_file(item):
            continue
        path = _display(item)
        try:
            raw = read_bytes(item)
        except NotReadable as error:
            run.files -= 1
            run.warnings.append(f"{item}: skipped: {error.strerror}")
            continue
        except OSError as error:
            # A file we were meant to check and could not: a finding (as ruff's E902), not a pass.
            from tinker_lint.run.engine import io_error

            per_file.append(io_error(path, error, settings))
            continue
        if dependency_files and qwen_vl is None:
            from tinker_lint.deps import find_qwen_vl

            qwen_vl = find_qwen_vl(raw, path)
        key = cache.key(path, raw) if cache is not None else None
        found = cache.get(key, path) if key is not None else None
        if found is None:
            todo.append((len(per_file), path, raw, key))
            per_file.append(None)
        else:
            run.cached += 1
            per_file.append(found[0])
            run.warnings.extend(found[1])

    linted, run.processes = _lint_all([(i, p, raw) for i, p, raw, _ in todo], settings, jobs)
    run.linted = len(todo)
    cache_failed = False
    for index, _, _, key in todo:
        per_file[index], warnings = linted[index]
        run.warnings.extend(warnings)
        if key is not None and cache is not None and not cache_failed:
            try:
                cache.put(key, per_file[index] or (), warnings)
            except OSError as error:
                cache_failed = True  # read-only or full: say so once, lint on
                run.warnings.append(f"{cache.root}: cannot write the cache: {error}")
    if cache is not None and not cache_failed:
        cache.prune()
    for diagnostics in per_file:
        run.diagnostics.extend(diagnostics or ())

    if dependency_files:
        from tinker_lint.deps import lint_dependency_files

        result = lint_dependency_files(dependency_files, settings, qwen_vl)
        run.diagnostics.extend(result.diagnostics)
        run.warnings.extend(result.warnings)
    return run


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _lint_all(
    todo: list[tuple[int, str, bytes]], settings: Settings, jobs: int | None
) -> tuple[dict[int, tuple[list[Diagnostic], list[str]]], int]:
    """Diagnostics and warnings of each file, by index; and the number of processes used."""
    if not todo:
        return {}, 0
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from tinker_lint.run import engine  # imported before any fork: the processes share it

    processes = min(jobs or usable_cores(), len(todo))
    size = sum(len(raw) for _, _, raw in todo)
    if processes <= 1 or len(todo) < MIN_FILES_FOR_PROCESSES or size < MIN_BYTES_FOR_PROCESSES:
        return {i: _outcome(engine.lint_bytes(raw, path, settings)) for i, path, raw in todo}, 1
    results: dict[int, tuple[list[Diagnostic], list[str]]] = {}
    batches = _batches(todo, processes * BATCHES_PER_PROCESS)
    try:
        with ProcessPoolExecutor(
            max_workers=processes,
            mp_context=_fork_context(),
            initializer=_start_worker,
            initargs=(settings,),
        ) as pool:
            for done in pool.map(_lint_batch, batches):
                results.update(done)
    except BrokenProcessPool:
        # A process died (killed, out of memory): lint what it left here, as without processes.
        for batch in batches:
            for i, path, raw in batch:
                if i not in results:
                    results[i] = _outcome(engine.lint_bytes(raw, path, settings))
    return results, processes


def _batches(todo: list[tuple[int, str, bytes]], count: int) -> list[list[tuple[int, str, bytes]]]:
    """About ``count`` batches of similar size, the largest files first, so that the last batches
    to finish are small ones."""
    ordered = sorted(todo, key=lambda item: len(item[2]), reverse=True)
    target = max(1, sum(len(raw) for _, _, raw in ordered) // count)
    batches: list[list[tuple[int, str, bytes]]] = []
    current: list[tuple[int, str, bytes]] = []
    size = 0
    for item in ordered:
        current.append(item)
        size += len(item[2])
        if size >= target:
            batches.append(current)
            current, size = [], 0
    if current:
        batches.append(current)
    return batches


def _fork_context() -> multiprocessing.context.BaseContext | None:
    # fork on Linux: the processes start at once with everything imported. Elsewhere the default
    # (spawn): macOS's system libraries are not safe to fork, and Windows cannot.
    import multiprocessing

    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return None


_worker_settings: Settings | None = None


def _start_worker(settings: Settings) -> None:
    global _worker_settings
    _worker_settings = settings


def _lint_batch(
    batch: list[tuple[int, str, bytes]],
) -> list[tuple[int, tuple[list[Diagnostic], list[str]]]]:
    from tinker_lint.run.engine import lint_bytes

    assert _worker_settings is not None
    return [(i, _outcome(lint_bytes(raw, path, _worker_settings))) for i, path, raw in batch]


def _outcome(result) -> tuple[list[Diagnostic], list[str]]:
    """What crosses the process boundary: a file's diagnostics and warnings (not its tree)."""
    return result.diagnostics, result.warnings


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
    from tinker_lint.fix.write import WriteError, write_atomic
    from tinker_lint.run.engine import io_error
    from tinker_lint.run.fixer import fix_bytes

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


def _is_lintable(path: str) -> bool:
    return is_python_file(path) or is_dependency_file(path)


def _display(path: str) -> str:
    return os.path.normpath(path)
