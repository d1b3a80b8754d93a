"""Finding the files to lint and reading them as text.

Directories are walked without following symlinks (no loops); VCS, virtualenv and build directories
are skipped, and so is what ``.gitignore`` files ignore (matched with ``pathspec``, as git does).
Files named on the command line are always linted.
"""

from __future__ import annotations

import fnmatch
import os
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import pathspec

from tinker_lint.settings import path_candidates

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".eggs",
        "site-packages",
        ".tinker_lint_cache",
    }
)


def is_python_file(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


def discover(
    paths: Iterable[str],
    exclude: tuple[str, ...] = (),
    *,
    want=is_python_file,
    project_root: str | None = None,
    force_exclude: bool = False,
) -> Iterator[str | Skipped]:
    """Files to lint under ``paths`` (sorted per directory), and what was skipped with a reason.

    ``exclude`` globs match a path relative to the directory walked or to ``project_root``, or its
    name. A file named on the command line is linted even if excluded, unless ``force_exclude``
    (pre-commit names every staged file, so its hook needs ``--force-exclude``, as ruff's does).
    """
    for given in paths:
        if os.path.isfile(given):
            if not (force_exclude and _excluded(given, exclude, project_root)):
                yield given
            continue
        if not os.path.isdir(given):
            yield Skipped(given, "no such file or directory")
            continue
        yield from _walk(given, exclude, want, project_root)


def _excluded(
    path: str, exclude: tuple[str, ...], project_root: str | None, relative: str | None = None
) -> bool:
    if not exclude:
        return False
    candidates = path_candidates(path, project_root)
    if relative is not None:
        candidates.append(relative)
    return any(fnmatch.fnmatch(c, p) for c in candidates for p in exclude)


def _walk(
    root: str, exclude: tuple[str, ...], want, project_root: str | None
) -> Iterator[str | Skipped]:
    specs: list[tuple[str, pathspec.PathSpec]] = []
    for directory, dirnames, filenames in os.walk(root, onerror=None, followlinks=False):
        spec = _gitignore(directory)
        if spec is not None:
            specs.append((directory, spec))
        specs = [(d, s) for d, s in specs if directory == d or directory.startswith(d + os.sep)]

        kept = []
        for name in sorted(dirnames):
            full = os.path.join(directory, name)
            if name in SKIPPED_DIRS or name.endswith(".egg-info") or os.path.islink(full):
                continue
            if os.path.exists(os.path.join(full, "pyvenv.cfg")) or _ignored(
                root, directory, name, True, exclude, specs, project_root
            ):
                continue
            if not os.access(full, os.R_OK | os.X_OK):
                yield Skipped(full, "directory is not readable")
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            full = os.path.join(directory, name)
            if want(full) and not _ignored(
                root, directory, name, False, exclude, specs, project_root
            ):
                yield full


def _ignored(
    root: str,
    directory: str,
    name: str,
    is_dir: bool,
    exclude: tuple[str, ...],
    specs: list[tuple[str, pathspec.PathSpec]],
    project_root: str | None,
) -> bool:
    full = os.path.join(directory, name)
    relative = os.path.relpath(full, root).replace(os.sep, "/")
    if _excluded(full, exclude, project_root, relative):
        return True
    for base, spec in specs:
        rel = os.path.relpath(full, base).replace(os.sep, "/")
        if spec.match_file(rel + ("/" if is_dir else "")):
            return True
    return False


def _gitignore(directory: str) -> pathspec.PathSpec | None:
    path = os.path.join(directory, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return pathspec.GitIgnoreSpec.from_lines(handle)
    except OSError:
        return None


class DecodeError(Exception):
    pass


@dataclass(frozen=True)
class SourceFile:
    text: str
    encoding: str
    raw: bytes


def decode_source(raw: bytes) -> SourceFile:
    """Decode as Python does: a BOM or a coding cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(raw).readline)
    except SyntaxError as error:
        raise DecodeError(str(error)) from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise DecodeError(
            f"cannot decode as {encoding}: {error.reason if hasattr(error, 'reason') else error}"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(text, encoding, raw)


def read_source(path: str | Path) -> SourceFile:
    with open(path, "rb") as handle:
        raw = handle.read()
    return decode_source(raw)
