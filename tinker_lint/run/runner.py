"""Run the engine over paths: discover files, read them, lint (or fix) each, collect diagnostics.

One file loop for every mode: linting, ``--fix`` (``FixMode(write=True)``) and ``--diff``
(``FixMode(write=False)``) share discovery, reading, warnings, the results cache, the process pool
and the dependency files; the mode only decides what is done to one Python file (``_work``) and what
becomes of its result (``_settle``: write it, or keep its diff).

Python files are answered from the cache when it holds them, else linted (or fixed): in this
process when there are few, else across processes (one per core, with the files in batches,
largest first). Diagnostics come out in discovery order whichever way a file was handled.
Dependency files (TNK3xx) are judged after the Python files, since TNK303 asks whether the
project's code names a Qwen VL model; they have no fixes, so every mode reports them alike.

In a fix mode the cache answers a file whose cached diagnostics carry no fix that would be applied:
the fixer's first pass is exactly that lint (same bytes, path, settings and linter: what the cache
key covers), and with nothing to apply it stops there, leaving the file as it is and reporting
those diagnostics. A file with a fix to apply is fixed (the cached lint saves its first pass); what
a fix run stores is the lint of the bytes as they were read, never a guess about the fixed ones.

Each file is judged by its own settings (``settings_for``: ``run.resolve``, the nearest
configuration above it, as ruff), which travel with it to the process that lints it; so the order
of the paths never changes a file's result.

The engine (and libcst) is imported only when a file has to be analysed: a run answered wholly
from the cache, or whose files no rule can read (``run.gate``), does not pay for it.
"""

from __future__ import annotations

import difflib
import gc
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from tinker_lint.codes import is_version_gated
from tinker_lint.deps.kinds import is_dependency_file
from tinker_lint.diagnostics import Diagnostic, is_applicable
from tinker_lint.io.files import (
    NotReadable,
    Skipped,
    decode_source,
    discover,
    is_code_file,
    is_notebook,
    outside_link,
    read_bytes,
    unique,
)
from tinker_lint.io.settings import Settings
from tinker_lint.versions import NEWEST_KNOWN_TINKER

if TYPE_CHECKING:
    import multiprocessing.context

    from tinker_lint.deps.lint import QwenVlUse
    from tinker_lint.io.notebook import Notebook
    from tinker_lint.project.index import ProjectIndex
    from tinker_lint.run.cache import Cache, IndexStore

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

# Below these, starting processes costs more than it saves (measured: docs/performance.md).
MIN_FILES_FOR_PROCESSES = 16
MIN_BYTES_FOR_PROCESSES = 256 * 1024
# Batches per process: enough that one slow batch does not leave the other processes idle.
BATCHES_PER_PROCESS = 12

VERSION_UNKNOWN_WARNING = (
    f"tinker version unknown; assuming {NEWEST_KNOWN_TINKER.major}.{NEWEST_KNOWN_TINKER.minor} "
    "(set tinker-version in [tool.tinker-lint]); the fixes that need it are unsafe"
)


@dataclass(frozen=True)
class FixMode:
    """``--fix`` (``write``: the fixed files are written, atomically) or ``--diff`` (not
    ``write``: unified diffs of what would change are collected, nothing is written)."""

    write: bool = True
    unsafe_fixes: bool = False


@dataclass
class Run:
    python_diagnostics: list[Diagnostic] = field(default_factory=list)  # fix modes: what remains
    dependency_diagnostics: list[Diagnostic] = field(default_factory=list)  # TNK3xx, no fixes
    files: int = 0
    warnings: list[str] = field(default_factory=list)
    # Paths named by the caller that could not be checked at all (missing, a broken link, a
    # directory that cannot be listed), each with the reason, also among ``warnings``.
    unchecked: list[tuple[str, str]] = field(default_factory=list)
    linted: int = 0  # Python files linted (or fixed) in this run: not answered from the cache
    cached: int = 0  # Python files answered from the cache
    processes: int = 0  # processes that linted them (0: none was linted)
    fixed: list[Diagnostic] = field(default_factory=list)  # fix modes: the findings fixed
    diffs: list[str] = field(default_factory=list)  # ``--diff``: one per file that would change
    source: bytes | None = None  # ``run_source``: the bytes after the fixes (the input's if none)
    # The files found that are symlinks to a file outside the paths given (normalised path: the
    # link's target): linted, never written (``--fix``, ``--add-noqa``), as black leaves them.
    outside_links: dict[str, str] = field(default_factory=dict)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every finding: the Python files' in discovery order, then the dependency files'."""
        return self.python_diagnostics + self.dependency_diagnostics


# Told (files done, files to do) as files are linted: the CLI's progress line.
Progress = Callable[[int, int], None]


class Job(NamedTuple):
    """A Python file to lint or fix, as it crosses to a process: its index in discovery order,
    path, bytes, its cached lint if there is one (a fix mode: it saves the first pass), and its
    settings (an index into the run's table of distinct settings, sent to each process once)."""

    order: int
    path: str
    raw: bytes
    cached: tuple[list[Diagnostic], list[str]] | None = None
    settings: int = 0
    depends: bool = True  # the project files its findings depend on are wanted (a cache's key)


@dataclass
class Outcome:
    """What one file's work sends back across the process boundary (not its tree)."""

    diagnostics: list[Diagnostic]  # lint: what was found; fix modes: what remains
    warnings: list[str]  # the lint's, going with ``diagnostics``
    # Fix modes: the lint of the bytes as read (what is cached, and reported if nothing changes).
    initial: list[Diagnostic] | None = None
    initial_warnings: list[str] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    new_raw: bytes | None = None  # the fixed bytes; None: nothing to change
    diff: str = ""  # ``--diff``
    problems: list[str] = field(default_factory=list)  # the fixer's, naming no file
    depends: dict[str, str] = field(default_factory=dict)  # the project files it depends on


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
    fix: FixMode | None = None,
    settings_for: Callable[[str], Settings] | None = None,
    progress: Progress | None = None,
) -> Run:
    """As ``lint_paths``, with how each file was answered. ``jobs``: processes to use at most
    (default: the usable cores; 1 lints in this process). ``fix``: fix the Python files instead
    of only linting them (a file that cannot be read or written is warned about and left as it
    was; the run goes on). ``settings_for``: each file's (and each path's, for discovery)
    settings, instead of ``settings`` for all (may raise ``ConfigError``)."""
    run = Run()
    own = settings_for or (lambda _path: settings)
    refused = cache.refusal() if cache is not None else None
    if refused is not None:
        # A link where the cache would be (which a repository can commit), or another user's
        # directory: the run lints without the cache, and says why (docs/safety.md).
        run.warnings.append(f"{refused[0]}: the results cache is not used: {refused[1]}")
        cache = None
    items = unique(
        item
        for given in paths
        for item in discover(
            [given],
            own(given).exclude,
            project_root=own(given).project_root,
            force_exclude=force_exclude,
            want=_is_lintable,
        )
        if _kept(item, given, own, force_exclude)
    )
    dependency_files = [i for i in items if isinstance(i, str) and is_dependency_file(i)]
    qwen_vl: list[QwenVlUse] = []  # TNK303's evidence, looked up per project
    per_file: list[list[Diagnostic] | None] = []  # Python files in discovery order
    todo: list[Job] = []
    read: dict[int, tuple[str, bytes, str | None]] = {}  # index: (path as given, bytes, cache key)
    table: dict[Settings, int] = {}  # the distinct settings of the files to lint, numbered
    assumed: set[str] = set()  # the Python files whose target tinker version nothing gave
    for item in items:
        if isinstance(item, Skipped):
            run.warnings.append(f"{item.path}: skipped: {item.reason}")
            if item.named:
                run.unchecked.append((item.path, item.reason))
            continue
        run.files += 1
        target = outside_link(item, paths)
        if target is not None:
            run.outside_links[_display(item)] = target
        if is_dependency_file(item):
            continue
        path = _display(item)
        file_settings = own(item)
        if file_settings.tinker_version_assumed:
            assumed.add(path)
        try:
            raw = read_bytes(item)
        except NotReadable as error:
            run.files -= 1
            run.warnings.append(f"{item}: skipped: {error.strerror}")
            continue
        except OSError as error:
            # A file we were meant to check and could not: a finding (as ruff's E902), not a pass.
            from tinker_lint.run.engine import io_error

            per_file.append(io_error(path, error, file_settings))
            continue
        if dependency_files:
            from tinker_lint.deps.lint import find_qwen_vl

            use = find_qwen_vl(raw, path)
            if use is not None:
                qwen_vl.append(use)
        key = cache.key(path, raw, file_settings) if cache is not None else None
        found = cache.get(key, path) if cache is not None and key is not None else None
        if found is not None and not (fix is not None and _has_fix_to_apply(found[0], fix)):
            run.cached += 1
            per_file.append(found[0])
            run.warnings.extend(found[1])
            continue
        number = table.setdefault(file_settings, len(table))
        # A notebook's cached lint is in cell coordinates, not the joined text's the fixer needs.
        first = found if fix is not None and not is_notebook(path) else None
        todo.append(Job(len(per_file), path, raw, first, number, key is not None))
        read[len(per_file)] = (item, raw, key)
        per_file.append(None)

    directories = [p for p in paths if os.path.isdir(p)]
    if not items and directories:
        # Nothing to check and nothing skipped: say so, as ruff does (and exit 0, as it does: an
        # empty or wholly excluded tree is not an error, and no file went unchecked).
        where = ", ".join(directories)
        run.warnings.append(f"no Python, notebook or dependency files found under {where}")

    global _index_store
    # The project index keeps its sketches and facts beside the results cache (``--no-cache``:
    # neither): a file linted again because it or a helper changed reads what did not.
    _index_store = cache.index_store() if cache is not None else None
    try:
        done, run.processes = _work_all(todo, list(table), jobs, fix, progress)
    finally:
        _index_store = None
        if "tinker_lint.project.index" in sys.modules:  # set by ``_project`` in this process
            _project().store = None
    run.linted = len(todo)
    cache_failed = False
    for job in todo:
        outcome = done[job.order]
        given, raw, key = read[job.order]
        if fix is None:
            per_file[job.order] = outcome.diagnostics
            run.warnings.extend(outcome.warnings)
            stored = outcome.diagnostics, outcome.warnings, outcome.depends
        else:
            per_file[job.order] = _settle(run, given, job.path, raw, outcome, fix)
            stored = outcome.initial or [], outcome.initial_warnings, outcome.depends
        if key is not None and cache is not None and not cache_failed:
            try:
                cache.put(key, *stored)
            except OSError as error:
                cache_failed = True  # read-only or full: say so once, lint on
                run.warnings.append(f"{cache.root}: cannot write the cache: {error}")
    if cache is not None and not cache_failed:
        cache.prune()
    for diagnostics in per_file:
        run.python_diagnostics.extend(diagnostics or ())

    if dependency_files:
        from tinker_lint.deps.lint import QwenVlEvidence, lint_dependency_files

        # One call per distinct settings (mostly one), each file with its own.
        groups: dict[Settings, list[str]] = {}
        for path in dependency_files:
            groups.setdefault(own(path), []).append(path)
        evidence = QwenVlEvidence(qwen_vl)
        judged: list[Diagnostic] = []
        for group_settings, group in groups.items():
            result = lint_dependency_files(group, group_settings, evidence)
            judged.extend(result.diagnostics)
            run.warnings.extend(result.warnings)
        run.dependency_diagnostics.extend(sorted(dict.fromkeys(judged)))
    _say_if_version_assumed(run, assumed)
    return run


def _say_if_version_assumed(run: Run, assumed: set[str]) -> None:
    """The one warning that the target tinker version was assumed, when it matters: a finding
    (or a fix) of a rule that depends on the version, in a file whose version nothing gave. A run
    over files without such findings has nothing the version changes."""
    if any(
        d.path in assumed and is_version_gated(d.code)
        for d in (*run.python_diagnostics, *run.fixed)
    ):
        run.warnings.append(VERSION_UNKNOWN_WARNING)


def _kept(
    item: str | Skipped, given: str, own: Callable[[str], Settings], force_exclude: bool
) -> bool:
    """Whether a discovered file is kept: one under a deeper configuration than the path walked
    must not be excluded by its own ``exclude`` either, and a named one (with ``force_exclude``)
    not by a pattern naming a directory above it."""
    if isinstance(item, Skipped):
        return True
    if item == given:
        return not force_exclude or not own(item).excludes(item)
    return own(item).config_path == own(given).config_path or not own(item).excludes(item)


def run_source(raw: bytes, path: str, settings: Settings, *, fix: FixMode | None = None) -> Run:
    """One file's bytes that are not read from disk (``-``: an editor's buffer on stdin), reported
    under ``path``: a dependency file by its name, anything else as Python. Nothing is cached or
    written; with ``fix``, ``Run.source`` is the fixed text (else the bytes as given), and
    ``Run.diffs`` its diff."""
    run = Run(files=1, source=raw)
    if is_dependency_file(path):
        from tinker_lint.deps.lint import lint_dependency_file

        # TNK303's evidence (the project's code naming a Qwen VL model) is not at hand here.
        result = lint_dependency_file(path, raw.decode("utf-8-sig", "replace"), settings)
        run.dependency_diagnostics.extend(result.diagnostics)
        run.warnings.extend(result.warnings)
        return run
    outcome = _work(Job(0, path, raw), settings, fix)
    run.linted = run.processes = 1
    assumed = {path} if settings.tinker_version_assumed else set()
    if fix is None:
        run.python_diagnostics = outcome.diagnostics
        run.warnings.extend(outcome.warnings)
        _say_if_version_assumed(run, assumed)
        return run
    run.warnings.extend(f"{path}: {problem}" for problem in outcome.problems)
    run.warnings.extend(outcome.warnings)  # they go with the diagnostics reported
    run.python_diagnostics = outcome.diagnostics
    if outcome.new_raw is not None:
        run.source = outcome.new_raw
        run.fixed.extend(outcome.fixed)
        if outcome.diff:
            run.diffs.append(outcome.diff)
    _say_if_version_assumed(run, assumed)
    return run


def _has_fix_to_apply(diagnostics: Sequence[Diagnostic], fix: FixMode) -> bool:
    return any(
        d.fix is not None and is_applicable(d.fix.applicability, fix.unsafe_fixes)
        for d in diagnostics
    )


def _settle(
    run: Run, given: str, path: str, raw: bytes, outcome: Outcome, fix: FixMode
) -> list[Diagnostic]:
    """A fixed file's result, in this process and in discovery order: write the fixed bytes or
    keep the diff; the diagnostics to report for the file."""
    from tinker_lint.fix.write import WriteError, write_atomic

    run.warnings.extend(f"{path}: {problem}" for problem in outcome.problems)
    initial = outcome.initial if outcome.initial is not None else outcome.diagnostics
    if outcome.new_raw is None:
        run.warnings.extend(outcome.warnings)
        return outcome.diagnostics
    target = run.outside_links.get(path)
    if target is not None:
        run.warnings.extend(outcome.initial_warnings)
        run.warnings.append(f"{path}: not fixed: {outside_link_reason(target)}")
        return initial
    if fix.write:
        try:
            write_atomic(given, outcome.new_raw, expected=raw)
        except WriteError as error:
            run.warnings.extend(outcome.initial_warnings)
            run.warnings.append(f"{path}: {error}")
            return initial
        run.warnings.extend(outcome.warnings)
    else:
        run.warnings.extend(outcome.initial_warnings)  # the file on disk is the one read
        run.diffs.append(outcome.diff)
    run.fixed.extend(outcome.fixed)
    return outcome.diagnostics


def outside_link_reason(target: str) -> str:
    """Why a file is not written: a symlink to a file outside the paths given."""
    return f"a symbolic link to {target}, outside the paths given"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _work_all(
    todo: list[Job],
    table: list[Settings],
    jobs: int | None,
    fix: FixMode | None,
    progress: Progress | None = None,
) -> tuple[dict[int, Outcome], int]:
    """Each file's outcome, by index; and the number of processes used. ``table``: the settings
    the jobs point at."""
    if not todo:
        return {}, 0
    from tinker_lint.incremental.buffers import parses_kept

    # Each file is parsed once here: a kept parse (for an editor's next keystroke) would only
    # hold memory. The processes forked meanwhile inherit this.
    with parses_kept(0):
        return _work_all_files(todo, table, jobs, fix, progress)


def _work_all_files(
    todo: list[Job],
    table: list[Settings],
    jobs: int | None,
    fix: FixMode | None,
    progress: Progress | None,
) -> tuple[dict[int, Outcome], int]:
    tell = progress or _no_progress
    processes = min(jobs or usable_cores(), len(todo))
    size = sum(len(job.raw) for job in todo)
    if processes <= 1 or len(todo) < MIN_FILES_FOR_PROCESSES or size < MIN_BYTES_FOR_PROCESSES:
        # The engine is imported by the first file that needs it (``_work``), if one does.
        results: dict[int, Outcome] = {}
        with _collected_between_files() as collect:
            for job in todo:
                results[job.order] = _work(job, table[job.settings], fix)
                collect()
                tell(len(results), len(todo))
        return results, 1
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # Imported before any fork: the processes share them.
    from tinker_lint.run import engine  # noqa: F401

    if fix is not None:
        from tinker_lint.run import fixer  # noqa: F401

    results = {}
    batches = _batches(todo, processes * BATCHES_PER_PROCESS)
    try:
        with ProcessPoolExecutor(
            max_workers=processes,
            mp_context=_fork_context(),
            initializer=_start_worker,
            initargs=(table, fix, os.getpid(), _index_store),
        ) as pool:
            for done in pool.map(_work_batch, batches):
                results.update(done)
                tell(len(results), len(todo))
    except BrokenProcessPool:
        # A process died (killed, out of memory): do what it left here, as without processes.
        for batch in batches:
            for job in batch:
                if job.order not in results:
                    results[job.order] = _work(job, table[job.settings], fix)
    return results, processes


def _no_progress(done: int, total: int) -> None:
    pass


@contextmanager
def _collected_between_files() -> Iterator[Callable[[], None]]:
    """The cyclic garbage collector in a run over many files: off while a file is worked, then
    one collection of what is new since the last (the file's cycles: its model, its trees), and
    what survives it frozen (``gc.freeze``), so that no later collection walks it again.

    Left to itself, the collector walks the whole heap each time it has grown by a quarter, and
    what a run keeps grows it file by file (the project index's CPython trees of every module it
    sketched, the libcst trees and facts of the helper modules): 1.2 s of 7.4 s of CPU on the
    cookbook in one process (``gc.callbacks``), nearly all of it walking what stays alive to the
    end. Frozen objects are still freed by reference counting; the run unfreezes them when it
    ends. Nothing is changed when the collector is off already, or when something else froze
    objects (the language server manages its own: ``server/memory.py``). What is alive before
    the first file (the imports) is frozen at the start."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield _nothing
        return
    gc.disable()
    gc.freeze()  # what is there before the first file (the imports) is no file's to walk
    try:
        yield _collect_and_freeze
    finally:
        gc.unfreeze()
        gc.enable()


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()


def _nothing() -> None:
    pass


def _batches(todo: list[Job], count: int) -> list[list[Job]]:
    """About ``count`` batches of similar size, the largest files first, so that the last batches
    to finish are small ones."""
    ordered = sorted(todo, key=lambda job: len(job.raw), reverse=True)
    target = max(1, sum(len(job.raw) for job in ordered) // count)
    batches: list[list[Job]] = []
    current: list[Job] = []
    size = 0
    for item in ordered:
        current.append(item)
        size += len(item.raw)
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


_worker: tuple[list[Settings], FixMode | None] | None = None
# The project index's store for this run's files (None: ``--no-cache``): set by ``run_paths``,
# handed to the processes it starts.
_index_store: IndexStore | None = None
# How often a process checks that the run that started it is still there (when the kernel cannot
# be asked to end it with its parent).
PARENT_POLL_SECONDS = 1.0
_PDEATHSIG = sys.platform.startswith("linux")  # the kernel can end a child with its parent
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _start_worker(
    table: list[Settings], fix: FixMode | None, parent: int, store: IndexStore | None = None
) -> None:
    global _worker, _index_store
    _worker = table, fix
    _index_store = store
    _exit_with_parent(parent)
    # As ``_collected_between_files``, for the process's life: each file is followed by one
    # collection (``_work_batch``), whose survivors are frozen; what the process inherited is
    # frozen at once (no collection walks it, nor copies its pages by touching them).
    gc.disable()
    gc.freeze()


def _exit_with_parent(parent: int) -> None:
    """End this process when the run that started it is gone (``kill -9``, an editor or CI that
    cancels): left alone, a forked process would wait for work for good, holding its memory.

    On Linux the kernel sends SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``); a parent
    that died before that call is caught by comparing ``getppid`` afterwards. Everywhere, a thread
    also polls ``getppid``: an orphan is re-parented (to init or a subreaper), so a change means the
    run is gone."""
    if _PDEATHSIG:
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the thread below still watches
            pass
    if os.getppid() != parent:
        os._exit(1)
    import threading

    threading.Thread(
        target=_watch_parent, args=(parent,), name="tinker-lint-parent", daemon=True
    ).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _work_batch(batch: list[Job]) -> list[tuple[int, Outcome]]:
    assert _worker is not None
    table, fix = _worker
    done = []
    for job in batch:
        done.append((job.order, _work(job, table[job.settings], fix)))
        _collect_and_freeze()
    return done


def _project() -> ProjectIndex:
    """This process's project index, keeping what it makes in this run's store."""
    from tinker_lint.project.index import project_index

    index = project_index()
    index.store = _index_store
    return index


def _work(job: Job, settings: Settings, fix: FixMode | None) -> Outcome:
    """Lint one file, or fix it (the fixed bytes are written by ``_settle``, in this process)."""
    if is_notebook(job.path):
        return _work_notebook(job, settings, fix)
    project = _project()  # the fixer's lints take it too (``project_index``)
    if job.cached is None:
        # A file no rule reads is answered without the engine (and libcst): ``run.gate``.
        from tinker_lint.run.gate import unanalysed_bytes

        found = unanalysed_bytes(job.raw, job.path, settings, project, job.depends)
        if found is not None:
            return _unanalysed_outcome(found.diagnostics, found.warnings, found.depends, fix)
    if fix is None:
        from tinker_lint.run.engine import lint_bytes

        result = lint_bytes(job.raw, job.path, settings, project=project, depends=job.depends)
        return Outcome(result.diagnostics, result.warnings, depends=result.depends)
    from tinker_lint.run.fixer import fix_bytes

    fixed = fix_bytes(job.raw, job.path, settings, unsafe_fixes=fix.unsafe_fixes, first=job.cached)
    outcome = Outcome(
        fixed.diagnostics,
        fixed.warnings,
        initial=fixed.initial,
        initial_warnings=fixed.initial_warnings,
        new_raw=fixed.new_raw,
        problems=fixed.problems,
    )
    if fixed.new_raw is not None and fixed.result is not None:
        outcome.fixed = fixed.result.fixed
        if not fix.write:
            old = decode_source(job.raw).text
            outcome.diff = _unified_diff(old, fixed.result.text, job.path)
    return outcome


def _unanalysed_outcome(
    diagnostics: list[Diagnostic], warnings: list[str], depends: dict[str, str], fix: FixMode | None
) -> Outcome:
    """What the engine, or the fixer with nothing to fix, sends back for a file no rule reads
    (``run.gate``): a fix run's lint of the file as read is the same."""
    if fix is None:
        return Outcome(diagnostics, warnings, depends=depends)
    return Outcome(diagnostics, warnings, initial=diagnostics, initial_warnings=warnings)


def _work_notebook(job: Job, settings: Settings, fix: FixMode | None) -> Outcome:
    """A notebook: its code cells linted (or fixed) as one text, the findings in cell
    coordinates; fixed cells are written back into the notebook's own JSON text."""
    from tinker_lint.io.notebook import NotebookError, read_notebook
    from tinker_lint.run.gate import unanalysed

    try:
        notebook = read_notebook(job.raw)
    except NotebookError as error:
        # Not a notebook we can read: a finding (TNK001, as a file that cannot be decoded).
        found = []
        if settings.is_enabled("TNK001", job.path):
            message = f"Cannot read notebook: {error}"
            found = [
                Diagnostic(
                    job.path, error.line, error.col, "TNK001", message, error.line, error.col
                )
            ]
        return Outcome(found, [], initial=found if fix is not None else None)
    # As below: the lint without the project, the fixer's first pass with it.
    project = _project() if fix is not None else None
    unread = unanalysed(notebook.text, job.path, settings, project)
    if unread is not None:
        warnings = _in_cells(unread.warnings, notebook, job.path)
        return _unanalysed_outcome(notebook.locate(unread.diagnostics), warnings, {}, fix)
    if fix is None:
        from tinker_lint.run.engine import lint_text

        result = lint_text(notebook.text, job.path, settings)
        return Outcome(
            notebook.locate(result.diagnostics), _in_cells(result.warnings, notebook, job.path)
        )
    from tinker_lint.run.fixer import fix_text

    layout = notebook.layout()
    fixed = fix_text(notebook.text, job.path, settings, unsafe_fixes=fix.unsafe_fixes, guard=layout)
    initial = notebook.locate(fixed.initial)
    initial_warnings = _in_cells(fixed.initial_warnings, notebook, job.path)
    outcome = Outcome(
        initial,
        initial_warnings,
        initial=initial,
        initial_warnings=initial_warnings,
        problems=fixed.problems,
    )
    if fixed.text == notebook.text:
        return outcome
    try:
        new_raw = notebook.rewrite(layout, fixed.text)
        again = read_notebook(new_raw)
        if again.text != fixed.text:
            raise NotebookError("its cells would not read back as they were fixed")
    except NotebookError as error:
        outcome.problems.append(f"not fixed: cannot write the notebook back ({error})")
        return outcome
    outcome.new_raw = new_raw
    outcome.diagnostics = again.locate(fixed.remaining)
    outcome.warnings = _in_cells(fixed.warnings, again, job.path)
    outcome.fixed = notebook.locate(fixed.fixed)  # counted per code (their passes' positions)
    if not fix.write:
        outcome.diff = notebook.diff(layout, fixed.text, job.path)
    return outcome


def _in_cells(warnings: list[str], notebook: Notebook, path: str) -> list[str]:
    """The engine's warnings that name a line of the joined text (``path:12: unknown rule
    code...``), naming the cell and its line instead."""
    named = re.compile(r"\A" + re.escape(path) + r":(\d+):(?= )")

    def cell_line(match: re.Match[str]) -> str:
        where = notebook.where(int(match.group(1)))
        return match.group() if where is None else f"{path}:cell {where[0]}:{where[1]}:"

    return [named.sub(cell_line, warning, count=1) for warning in warnings]


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
    return is_code_file(path) or is_dependency_file(path)


def _display(path: str) -> str:
    return os.path.normpath(path)
