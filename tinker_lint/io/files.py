"""Finding the files to lint and reading them as text.

Directories are walked without following symlinks (no loops); VCS, virtualenv and build directories
are skipped, and so is what ``.gitignore`` files ignore (matched with ``pathspec``, as git does).
Files named on the command line are always linted. Each real file is linted once (``unique``):
a file named twice, or reached through a symlink too, is reported under one name.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from tinker_lint.io.settings import path_candidates

if TYPE_CHECKING:
    import pathspec

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


NOTEBOOK_SUFFIX = ".ipynb"


def is_code_file(path: str) -> bool:
    """A file whose code tinker-lint lints: Python, or a Jupyter notebook's code cells."""
    return path.endswith((".py", ".pyi", NOTEBOOK_SUFFIX))


def is_notebook(path: str) -> bool:
    """A Jupyter notebook (``io.notebook`` reads it; asked here, so that a run over Python files
    never imports that)."""
    return path.endswith(NOTEBOOK_SUFFIX)


NO_SUCH_PATH = "no such file or directory"
BROKEN_LINK = "broken symbolic link (its target is missing, or a loop)"


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str
    # A path named on the command line (not one found in a directory): asked for and not checked.
    named: bool = False


def discover(
    paths: Iterable[str],
    exclude: tuple[str, ...] = (),
    *,
    want: Callable[[str], bool] = is_python_file,
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
            if os.path.exists(given):
                yield Skipped(given, "not a regular file or directory", named=True)
            elif os.path.islink(given):
                yield Skipped(given, BROKEN_LINK, named=True)
            else:
                yield Skipped(given, NO_SUCH_PATH, named=True)
            continue
        for item in _walk(given, exclude, want, project_root):
            if isinstance(item, Skipped) and item.path == given:
                item = Skipped(item.path, item.reason, named=True)  # the directory itself
            yield item


def unique(items: Iterable[str | Skipped]) -> list[str | Skipped]:
    """``items`` with each real file once (the same device and inode: a file named twice, a
    symlink and its target, hard links), under its own name when that was found (not a symlink's),
    else under the first name found; in the order found, so the same arguments give the same
    result. A skipped path is kept once."""
    kept: list[str | Skipped | None] = []
    where: dict[object, int] = {}  # a file's identity -> its index in ``kept``
    seen: set[Skipped] = set()
    for item in items:
        if isinstance(item, Skipped):
            if item not in seen:
                seen.add(item)
                kept.append(item)
            continue
        try:
            info = os.stat(item)
            identity: object = (info.st_dev, info.st_ino)
        except OSError:  # read (and reported) later, under the name it was found by
            identity = os.path.normcase(os.path.realpath(item))
        index = where.get(identity)
        if index is None:
            where[identity] = len(kept)
            kept.append(item)
            continue
        first = kept[index]
        assert isinstance(first, str)
        if os.path.islink(first) and not os.path.islink(item):
            kept[index] = None  # reported under its own name, where that was found
            where[identity] = len(kept)
            kept.append(item)
    return [item for item in kept if item is not None]


def outside_link(path: str, roots: Iterable[str]) -> str | None:
    """The target of ``path`` when it is a symlink to a file outside every one of ``roots`` (the
    paths given, each by its real path: a symlink named is its own root), else None."""
    if not os.path.islink(path):
        return None
    real = os.path.realpath(path)
    for root in roots:
        top = os.path.realpath(root)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            return None
    try:
        return os.readlink(path)
    except OSError:
        return real


def is_force_excluded(path: str, exclude: tuple[str, ...], project_root: str | None) -> bool:
    """Whether ``--force-exclude`` leaves out a file named on the command line (or the name given
    to stdin's text): the ``exclude`` globs, as ``discover`` applies them to named files."""
    return _excluded(path, exclude, project_root)


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
    root: str, exclude: tuple[str, ...], want: Callable[[str], bool], project_root: str | None
) -> Iterator[str | Skipped]:
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    unlistable: list[OSError] = []  # os.walk skips a directory it cannot list; we say so
    for directory, dirnames, filenames in os.walk(root, onerror=unlistable.append):
        while unlistable:
            error = unlistable.pop()
            yield Skipped(error.filename or directory, f"cannot list directory: {error.strerror}")
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
                if os.path.islink(full) and not os.path.exists(full):
                    yield Skipped(full, BROKEN_LINK)
                    continue
                yield full
    for error in unlistable:
        yield Skipped(error.filename or root, f"cannot list directory: {error.strerror}")


def _ignored(
    root: str,
    directory: str,
    name: str,
    is_dir: bool,
    exclude: tuple[str, ...],
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
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


def _gitignore(directory: str) -> pathspec.GitIgnoreSpec | None:
    import pathspec  # only for walking directories: the engine (and the flake8 plugin) need not

    path = os.path.join(directory, ".gitignore")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return pathspec.GitIgnoreSpec.from_lines(handle)
    except OSError:
        return None


class DecodeError(Exception):
    """Bytes that are not text in the file's encoding; ``line``/``col`` (1-based) locate them."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


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
        message = str(error)
        if message.startswith("invalid or missing encoding declaration"):
            raise _undecodable(raw, "utf-8") from None
        if message.startswith("unknown encoding"):
            message = f"the coding cookie names an {message}"
        elif message.startswith("encoding problem"):
            message = (
                "the file starts with a UTF-8 BOM but its coding cookie names another encoding"
            )
        raise DecodeError(message) from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise _undecodable(raw, encoding) from None
    except LookupError as error:
        raise DecodeError(f"unknown encoding: {error}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(text, encoding, raw)


def _undecodable(raw: bytes, encoding: str) -> DecodeError:
    try:
        raw.decode(encoding)
        start = 0
    except UnicodeDecodeError as error:
        start = error.start
    except LookupError:
        start = 0
    line = raw.count(b"\n", 0, start) + 1
    col = start - (raw.rfind(b"\n", 0, start) + 1) + 1
    hint = " and no coding cookie names another encoding" if encoding == "utf-8" else ""
    return DecodeError(
        f"not valid {encoding} (byte 0x{raw[start]:02X}){hint}",
        line,
        col,
    )


# A file this large is not read at all (the engine analyses up to 1 MB and checks the syntax of
# larger files; reading gigabytes of generated data would only exhaust memory).
MAX_READ_BYTES = 64 * 1024 * 1024


class NotReadable(OSError):
    """A path that is not a regular file we can read; ``strerror`` says why."""


def read_bytes(
    path: str | Path, *, limit: int = MAX_READ_BYTES, follow_links: bool = True
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes. Anything else (a FIFO, which would
    block ``open`` until a writer comes; a device such as ``/dev/zero`` behind a symlink, which
    never ends; a directory; with ``follow_links=False``, a symbolic link) raises ``NotReadable``,
    as does a larger file, or one that grows past ``limit`` while read; I/O errors raise
    ``OSError``."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer; it has no effect on regular files.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)  # a link fails to open (ELOOP)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotReadable(0, "a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            reason = "not a regular file (a FIFO, socket or device is never read)"
            raise NotReadable(0, reason, str(path))
        if info.st_size > limit:
            raise NotReadable(0, f"{info.st_size:,} bytes, more than the {limit:,} read", str(path))
        with os.fdopen(fd, "rb", closefd=True) as handle:
            fd = -1
            data = handle.read(limit + 1)  # a file that grows while read is cut there
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise NotReadable(0, f"more than the {limit:,} bytes read", str(path))
    return data


def read_utf8(path: str | Path) -> str:
    """A text file's text (a BOM dropped), read as ``read_bytes`` reads: a dependency file that is
    a FIFO or a link to ``/dev/zero`` raises ``NotReadable`` instead of blocking or never ending.
    Raises ``UnicodeDecodeError`` for bytes that are not UTF-8."""
    return read_bytes(path).decode("utf-8-sig")


def read_source(path: str | Path) -> SourceFile:
    return decode_source(read_bytes(path))


def list_directory(directory: str) -> frozenset[str]:
    """The names of the files in ``directory``, and of its directories followed by a separator;
    none if it cannot be listed (or is no directory)."""
    names = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_file():
                    names.append(entry.name)
                elif entry.is_dir():
                    names.append(entry.name + os.sep)
    except OSError:
        pass
    return frozenset(names)


# In a dependency's key, what stands between a directory and the names looked for in it
# (``<directory>/\0<name>\0<name>``): no file path holds it, so the key names no file.
_LISTED = "\0"


def listing_key(directory: str, names: Iterable[str]) -> str:
    """The key of "which of ``names`` are in ``directory``" among a file's dependencies (where a
    module was looked for: ``steps.py`` and ``steps/`` beside the file, say)."""
    return directory.rstrip(os.sep) + os.sep + _LISTED + _LISTED.join(sorted(set(names)))


def is_listing_key(key: str) -> bool:
    return _LISTED in key


def listing_answer(listing: frozenset[str], key: str) -> str:
    """Which of the names of ``key`` ``listing`` (of its directory) holds: a module appearing
    there, or going, changes it; another file does not."""
    names = key.partition(_LISTED)[2].split(_LISTED)
    return "listed:" + _LISTED.join(name for name in names if name in listing)


def listing_directory(key: str) -> str:
    """The directory of a ``listing_key``."""
    return key.partition(_LISTED)[0].rstrip(os.sep) or os.sep


def merged_listings(depends: dict[str, str]) -> dict[str, str]:
    """``depends`` with the ``listing_key`` entries of each directory made one (all the names
    looked for there, and which it held): what many lookups read, said once per directory."""
    names: dict[str, set[str]] = {}
    held: dict[str, set[str]] = {}
    merged: dict[str, str] = {}
    for key, answer in depends.items():
        if not is_listing_key(key):
            merged[key] = answer
            continue
        directory = listing_directory(key)
        names.setdefault(directory, set()).update(key.partition(_LISTED)[2].split(_LISTED))
        found = answer.removeprefix("listed:")
        held.setdefault(directory, set()).update(found.split(_LISTED) if found else ())
    for directory, looked_for in names.items():
        key = listing_key(directory, looked_for)
        merged[key] = listing_answer(frozenset(held[directory]), key)
    return merged
