"""The results cache: a file's diagnostics (and its warnings, such as a typo in a ``noqa``), kept
under a key of everything they depend on.

A file's diagnostics depend on its bytes, its path (``per-file-ignores``; the diagnostics name
it), its settings (each file has its own: the nearest configuration, its project's tinker version),
and the linter itself. So an entry lives in a directory named by a fingerprint of the run's
settings and of the linter (its version, its own source files' sizes and times, so that an
edited checkout is a new linter; the Python version, whose parser reports syntax errors; and the
installed libcst, whose parser it runs), under the SHA-256 of the file's path, its own
settings' fingerprint and its bytes. Nothing is
trusted from a file's time stamp, as ruff's content-hash cache does not either.

Entries are written atomically (a temporary file, then ``os.replace``), so a reader sees a whole
entry or none; one that does not parse, or has the wrong shape, is ignored and rewritten.

Nothing read from the cache is trusted, and nothing outside it is touched (docs/safety.md): a
repository can commit a ``.tinker_lint_cache`` that is a symbolic link, or one holding links. A
cache directory that is a link (or another user's) is refused, with a warning, and the run lints
without it; an entry is read only if it is a regular file (not a link, a FIFO, a device) of at
most ``MAX_ENTRY_BYTES``, and believed only if it has the shape ``put`` writes; temporary files
are created new (``O_EXCL | O_NOFOLLOW``); pruning removes only the directories and regular
files the cache names so, never through a link.

Stale entries are never read again, and a run that writes entries prunes them (``Cache.prune``):
only the ``KEEP_FINGERPRINTS`` most recently used linter/settings directories are kept, and a
directory holding more than ``MAX_ENTRIES`` (or four times what the run used) loses its oldest
entries that the run did not use. ``tinker-lint clean`` removes the whole cache, as ``ruff clean``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tinker_lint import __version__
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.io.files import (
    is_listing_key,
    list_directory,
    listing_answer,
    listing_directory,
    read_bytes,
)
from tinker_lint.io.settings import Settings

CACHE_DIR_NAME = ".tinker_lint_cache"
# Bumped when the layout or the entry format changes.
FORMAT = "diagnostics-v3"  # v3: a diagnostic carries its help
_FORMATS = "diagnostics-"  # what every format's directory is named (``diagnostics-v1``...)
_PACKAGE = Path(__file__).resolve().parent.parent  # the whole tinker_lint package
KEEP_FINGERPRINTS = 4
MAX_ENTRIES = 5000
# The project index's store (``IndexStore``): its own directory beside the diagnostics'.
INDEX_FORMAT = "index-v1"
MAX_INDEX_ENTRIES = 20000  # a few hundred per state of a project the size of tinker-cookbook
_KEY = re.compile(r"[0-9a-f]{64}")
_STALE_TEMPORARY_SECONDS = 3600  # a ``.tmp`` left by a killed run
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
# An entry is a few kilobytes; one past this is not the cache's, and is never read whole.
MAX_ENTRY_BYTES = 16 * 1024 * 1024
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")  # what the cache names an entry
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")  # and a linter/settings directory
# Opening never follows a symbolic link (ELOOP), and never waits for a FIFO's writer.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | _NOFOLLOW


def default_cache_dir(settings: Settings) -> Path:
    """``.tinker_lint_cache`` in the project root (the directory of the configuration file), else
    in the current directory: as ruff's ``.ruff_cache``."""
    return Path(settings.project_root or os.getcwd()) / CACHE_DIR_NAME


def tool_fingerprint() -> str:
    """This linter: its version, its sources (size and time of each), the Python version, and
    libcst's version file and native parser (found, not imported: a warm run imports no libcst)."""
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
    for directory, dirnames, filenames in os.walk(_PACKAGE):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                relative = os.path.relpath(os.path.join(directory, name), _PACKAGE)
                digest.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin is not None:
        package = Path(spec.origin).parent
        for path in [*sorted(package.glob("native*")), package / "_version.py"]:
            with contextlib.suppress(OSError):
                stat = path.stat()
                digest.update(f"libcst/{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def settings_fingerprint(settings: Settings) -> str:
    """Every setting (a new one is included without being listed here), and the project root,
    against which ``per-file-ignores`` patterns are matched."""
    values = {
        f.name: repr(getattr(settings, f.name))
        for f in dataclasses.fields(settings)
        if not f.name.startswith("_")
    }
    values["project_root"] = repr(settings.project_root)
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def _digest_of(path: str) -> str | None:
    """The SHA-256 of a project file an entry names (a regular file of at most the size the linter
    reads: a FIFO, a device or a directory is no file, and no match)."""
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except OSError:
        return None


def _read_entry(path: Path) -> bytes | None:
    """An entry's bytes, if it is a regular file (not a symbolic link, a FIFO, a device) of at
    most ``MAX_ENTRY_BYTES``."""
    try:
        return read_bytes(path, limit=MAX_ENTRY_BYTES, follow_links=False)
    except OSError:  # NotReadable too: a miss
        return None


def _refusal(path: Path) -> str | None:
    """Why the cache must not use the directory ``path`` (None: it may; it may not exist yet): a
    symbolic link (a repository can commit one: the cache never follows it), something that is
    not a directory, or a directory owned by another user than the one running (or than the
    owner of the directory holding it: a checkout run as root in a container)."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing there: writing will say so
        return None
    except OSError as error:
        return f"it cannot be looked at ({error.strerror or error})"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link (the cache never follows one)"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        try:
            parent = os.stat(path.parent).st_uid
        except OSError:
            parent = -1
        if info.st_uid != parent:
            return f"it is owned by another user (uid {info.st_uid})"
    return None


class Cache:
    """Diagnostics by file, for one set of settings and one linter."""

    def __init__(self, directory: str | Path, settings: Settings, tool: str | None = None) -> None:
        self.root = Path(directory)
        self.tool = tool or tool_fingerprint()
        fingerprint = hashlib.sha256(
            f"{self.tool}\0{settings_fingerprint(settings)}".encode()
        ).hexdigest()
        self.directory = self.root / FORMAT / fingerprint[:32]
        self._made = False
        self._used: set[str] = set()  # entries this run read or wrote
        self._written = 0
        self._fingerprints: dict[Settings, str] = {}  # each file's settings, fingerprinted once
        self._digests: dict[str, str | None] = {}  # helper modules' bytes, hashed once a run
        self._listings: dict[str, frozenset[str]] = {}  # directories where imports were looked for
        self._refused: tuple[Path, str] | None = None
        self._checked = False

    def refusal(self) -> tuple[Path, str] | None:
        """The directory of the cache that must not be used, and why (None: the cache may be
        used). Then nothing is read, written or pruned: the run lints without the cache."""
        if not self._checked:
            self._checked = True
            for path in (self.root, self.root / FORMAT, self.directory):
                why = _refusal(path)
                if why is not None and (path != self.root or why != "it is not a directory"):
                    # A root that is a file: writing says so ("cannot write the cache").
                    self._refused = path, why
                    break
        return self._refused

    def key(self, path: str, raw: bytes, settings: Settings | None = None) -> str:
        """The entry of ``path`` with these bytes, linted with ``settings`` (the file's own; None:
        the settings the cache was made with, which its directory already names)."""
        digest = hashlib.sha256(path.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        if settings is not None:
            fingerprint = self._fingerprints.get(settings)
            if fingerprint is None:
                fingerprint = self._fingerprints[settings] = settings_fingerprint(settings)
            digest.update(fingerprint.encode())
            digest.update(b"\0")
        digest.update(raw)
        return digest.hexdigest()

    def _digest(self, path: str) -> str | None:
        if path not in self._digests:
            if is_listing_key(path):  # each directory listed once a run, whatever is asked of it
                directory = listing_directory(path)
                if directory not in self._listings:
                    self._listings[directory] = list_directory(directory)
                self._digests[path] = listing_answer(self._listings[directory], path)
            else:
                self._digests[path] = _digest_of(path)
        return self._digests[path]

    def entry(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str, path: str) -> tuple[list[Diagnostic], list[str]] | None:
        """The diagnostics and warnings stored under ``key`` (for the file at ``path``), or None
        if there are none, or they cannot be read."""
        if self.refusal() is not None:
            return None
        data = _read_entry(self.entry(key))
        if data is None:
            return None
        try:
            stored = json.loads(data)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
            return None
        if not _valid(stored):
            return None
        try:
            diagnostics = [_diagnostic(path, item) for item in stored["diagnostics"]]
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None
        # The project files its findings came from (the helpers it calls): each must still
        # hold the bytes it held then.
        for other, digest in stored.get("depends", {}).items():
            if self._digest(other) != digest:
                return None
        self._used.add(key)
        return diagnostics, list(stored["warnings"])

    def put(
        self,
        key: str,
        diagnostics: Sequence[Diagnostic],
        warnings: Sequence[str] = (),
        depends: Mapping[str, str] | None = None,
    ) -> None:
        """Store atomically; raises OSError if the cache directory cannot be written.
        ``depends``: the other project files the diagnostics came from, with their SHA-256."""
        refused = self.refusal()
        if refused is not None:
            raise OSError(f"{refused[0]}: {refused[1]}")
        if not self._made:
            self._make_directory()
        entry = self.entry(key)
        # A new name, created here (O_EXCL: never an existing file, nor a link's target).
        temporary = entry.with_name(f"{entry.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        stored: dict[str, object] = {
            "diagnostics": [_to_json(d) for d in diagnostics],
            "warnings": list(warnings),
        }
        if depends:
            stored["depends"] = dict(sorted(depends.items()))
        data = json.dumps(stored)
        fd = os.open(temporary, _CREATE, 0o644)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            # A rename replaces the name, whatever it was (a link is replaced, not followed).
            os.replace(temporary, entry)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._used.add(key)
        self._written += 1

    def prune(self) -> None:
        """After a run that wrote entries: drop the linter/settings directories beyond the
        ``KEEP_FINGERPRINTS`` most recently used, other formats' directories, temporary files of
        killed runs, and, past the size limit, the oldest entries this run did not use. Best
        effort: a failure leaves the cache as it was, and is never an error of the run.

        Only what the cache names so is removed (``diagnostics-*`` directories, 32-hex-digit
        fingerprint directories, ``<sha256>.json`` entries and ``.tmp`` files), and only if it is
        what it seems: a directory or a regular file, never a symbolic link, which is neither
        followed nor removed."""
        if not self._written or self.refusal() is not None:
            return  # a warm run writes nothing and pays nothing
        with contextlib.suppress(OSError):
            os.utime(self.directory)  # this directory is the most recently used
            for other in _directories(self.root):
                # Only this cache's own other formats: the directory may hold what is not
                # tinker-lint's (the test suite keeps its downloaded corpora there).
                if other.name != FORMAT and other.name.startswith(_FORMATS):
                    _remove_tree(Path(other.path))
            fingerprints = sorted(
                (d for d in _directories(self.root / FORMAT) if _FINGERPRINT.fullmatch(d.name)),
                key=lambda d: d.stat(follow_symlinks=False).st_mtime,
                reverse=True,
            )
            for stale in fingerprints[KEEP_FINGERPRINTS:]:
                if stale.name != self.directory.name:
                    _remove_tree(Path(stale.path))
            self._prune_entries()

    def _prune_entries(self) -> None:
        now = time.time()
        entries: list[tuple[float, str]] = []
        with os.scandir(self.directory) as found:
            for item in found:
                if not item.is_file(follow_symlinks=False):
                    continue  # a link, a FIFO, a directory: not the cache's
                mtime = item.stat(follow_symlinks=False).st_mtime
                if item.name.endswith(".tmp"):
                    if now - mtime > _STALE_TEMPORARY_SECONDS:
                        _unlink(item.path)
                elif _ENTRY.fullmatch(item.name) and item.name[:-5] not in self._used:
                    entries.append((mtime, item.path))
        limit = max(MAX_ENTRIES, 4 * len(self._used))
        excess = len(entries) + len(self._used) - limit
        if excess > 0:
            # Down to half the limit, so that pruning is rare.
            entries.sort()
            for _, path in entries[: excess + limit // 2]:
                _unlink(path)

    def index_store(self) -> IndexStore:
        """The project index's store, beside these entries (the same root and linter)."""
        return IndexStore(self.root, self.tool)

    def _make_directory(self) -> None:
        made_root = _make_root(self.root, (self.root / FORMAT, self.directory))
        # Made here or not, each must be a real directory (mkdir accepts a link to one).
        self._checked = False
        refused = self.refusal()
        if refused is not None:
            raise OSError(f"{refused[0]}: {refused[1]}")
        if made_root:
            _tag(self.root)
        self._made = True


def _make_root(root: Path, directories: Sequence[Path]) -> bool:
    """Make the cache's root (True if it was not there) and ``directories`` in it, in order."""
    made_root = False
    if not os.path.lexists(root):
        root.mkdir(parents=True, exist_ok=True)
        made_root = True
    for directory in directories:
        with contextlib.suppress(FileExistsError):
            directory.mkdir()
    return made_root


def _tag(root: Path) -> None:
    """Like ruff's cache: never committed, skipped by backup tools."""
    _create(root / ".gitignore", "# Created by tinker-lint\n*\n")
    _create(
        root / "CACHEDIR.TAG",
        f"{_SIGNATURE}\n# This file is a cache directory tag created by tinker-lint.\n",
    )


class IndexStore:
    """The project index's products kept between processes and runs (``project.index``: the
    CPython sketches of project modules, what their trees import, the facts of helper modules),
    in ``INDEX_FORMAT/<linter>/<key>.json`` of the cache's root. The index makes each key of
    everything its value is made from, and reads back a value only in the shape it wrote, so a
    value read is the one it would make again; this class only keeps bytes safely, as ``Cache``
    does (no link followed, entries of a bounded size, written atomically). Anything that goes
    wrong is a miss: nothing here is ever an error of the run (a store that cannot be written
    stops trying). A process that writes prunes once: the ``KEEP_FINGERPRINTS`` most recently
    used linters' directories are kept, and past ``MAX_INDEX_ENTRIES`` the oldest entries go."""

    def __init__(self, root: str | Path, tool: str | None = None) -> None:
        self.root = Path(root)
        self._tool = tool
        self._directory: Path | None = None
        self._usable: bool | None = None
        self._made = False
        self._failed = False
        self._written: set[str] = set()

    @property
    def tool(self) -> str:
        if self._tool is None:
            self._tool = tool_fingerprint()
        return self._tool

    @property
    def directory(self) -> Path:
        if self._directory is None:
            fingerprint = hashlib.sha256(f"index\0{self.tool}".encode()).hexdigest()[:32]
            self._directory = self.root / INDEX_FORMAT / fingerprint
        return self._directory

    def usable(self) -> bool:
        """Whether the store may be used: none of its directories is a link, another user's, or
        not a directory (``Cache.refusal``)."""
        if self._usable is None:
            refusals = [
                (path, _refusal(path))
                for path in (self.root, self.root / INDEX_FORMAT, self.directory)
            ]
            # A root that is a file: nothing can be read, and writing fails (as ``Cache``).
            self._usable = all(
                why is None or (path == self.root and why == "it is not a directory")
                for path, why in refusals
            )
        return self._usable

    def get(self, key: str) -> object | None:
        """The value stored under ``key`` (plain JSON), or None."""
        if not _KEY.fullmatch(key) or not self.usable():
            return None
        data = _read_entry(self.directory / f"{key}.json")
        if data is None:
            return None
        # An entry is the SHA-256 of the rest, a line break, and ``[key, value]``: a truncated,
        # damaged, renamed or foreign file is a miss, however well it parses.
        digest, _, body = data.partition(b"\n")
        if hashlib.sha256(body).hexdigest().encode() != digest:
            return None
        try:
            stored = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
            return None
        if not isinstance(stored, list) or len(stored) != 2 or stored[0] != key:
            return None
        return stored[1]

    def put(self, key: str, value: object) -> None:
        """Store ``value`` under ``key``, atomically; best effort."""
        if self._failed or not _KEY.fullmatch(key) or not self.usable():
            return
        try:
            if not self._made:
                if _make_root(self.root, (self.root / INDEX_FORMAT, self.directory)):
                    _tag(self.root)
                self._usable = None  # made here or not, each must be a real directory
                if not self.usable():
                    raise OSError("not a directory of the cache's own")
                self._made = True
                self._prune()
            entry = self.directory / f"{key}.json"
            temporary = entry.with_name(f"{entry.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            body = json.dumps([key, value], ensure_ascii=True, separators=(",", ":")).encode()
            fd = os.open(temporary, _CREATE, 0o644)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
                os.replace(temporary, entry)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except (OSError, ValueError):  # read-only, full, a link: no store for this process
            self._failed = True
            return
        self._written.add(key)

    def _prune(self) -> None:
        """Once per process that writes: keep the most recently used linters' directories, and
        at most ``MAX_INDEX_ENTRIES`` entries in this one (down to half, the oldest first)."""
        with contextlib.suppress(OSError):
            os.utime(self.directory)
            fingerprints = sorted(
                (
                    d
                    for d in _directories(self.root / INDEX_FORMAT)
                    if _FINGERPRINT.fullmatch(d.name)
                ),
                key=lambda d: d.stat(follow_symlinks=False).st_mtime,
                reverse=True,
            )
            for stale in fingerprints[KEEP_FINGERPRINTS:]:
                if stale.name != self.directory.name:
                    _remove_tree(Path(stale.path))
            now = time.time()
            entries: list[tuple[float, str]] = []
            with os.scandir(self.directory) as found:
                for item in found:
                    if not item.is_file(follow_symlinks=False):
                        continue
                    mtime = item.stat(follow_symlinks=False).st_mtime
                    if item.name.endswith(".tmp"):
                        if now - mtime > _STALE_TEMPORARY_SECONDS:
                            _unlink(item.path)
                    elif _ENTRY.fullmatch(item.name):
                        entries.append((mtime, item.path))
            if len(entries) > MAX_INDEX_ENTRIES:
                entries.sort()
                for _, path in entries[: len(entries) - MAX_INDEX_ENTRIES // 2]:
                    _unlink(path)


def _directories(path: Path) -> list[os.DirEntry[str]]:
    """The real directories in ``path`` (not the links to one)."""
    with os.scandir(path) as found:
        return [item for item in found if item.is_dir(follow_symlinks=False)]


def _remove_tree(path: Path) -> None:
    """Remove a directory the cache made, never through a link: ``shutil.rmtree`` refuses a link
    given it and removes (never follows) the links inside."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path, ignore_errors=True)


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _create(path: Path, text: str) -> None:
    """Write a new file (never an existing one, nor through a link)."""
    with (
        contextlib.suppress(FileExistsError),
        os.fdopen(os.open(path, _CREATE, 0o644), "w", encoding="utf-8") as handle,
    ):
        handle.write(text)


class Refused(Exception):
    """``tinker-lint clean`` will not remove the directory: ``str()`` says why."""


def clean(directory: str | Path) -> bool:
    """Remove a tinker-lint cache directory (``tinker-lint clean``); True if there was one. A
    directory without tinker-lint's cache tag is left alone, whatever its name; a symbolic link
    (or a directory of another user) is refused (``Refused``), whatever it points to."""
    root = Path(directory)
    why = _refusal(root)
    if why == "it is not a directory":
        return False
    if why is not None:
        raise Refused(why)
    tag = _read_entry(root / "CACHEDIR.TAG")  # a regular file, not a link, not a FIFO
    if tag is None:
        return False
    text = tag[:4096].decode("utf-8", errors="replace")
    if not text.startswith(_SIGNATURE) or "tinker-lint" not in text:
        return False
    shutil.rmtree(root)
    return True


# An entry's shape: what ``put`` writes, checked before anything of it is believed.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # a terminal's control characters
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # the help has lines


def _is_int(value: object) -> bool:
    return type(value) is int  # not a bool


def _is_position(value: object, size: int = 2) -> bool:
    return isinstance(value, list) and len(value) == size and all(map(_is_int, value))


def _is_text(value: object, control: re.Pattern[str] = _CONTROL) -> bool:
    return isinstance(value, str) and not control.search(value)


def _valid_fix(fix: object) -> bool:
    if fix is None:
        return True
    if not isinstance(fix, dict) or set(fix) != {"message", "edits", "applicability"}:
        return False
    edits = fix["edits"]
    return (
        _is_text(fix["message"])
        and isinstance(fix["applicability"], str)
        and isinstance(edits, list)
        and all(
            isinstance(e, dict)
            and set(e) == {"content", "location", "end_location"}
            and isinstance(e["content"], str)
            and _is_position(e["location"])
            and _is_position(e["end_location"])
            for e in edits
        )
    )


_DIAGNOSTIC_FIELDS = {
    "line": _is_int,
    "col": _is_int,
    "code": _is_text,
    "message": _is_text,
    "end_line": _is_int,
    "end_col": _is_int,
    "fix": _valid_fix,
    "cell": lambda v: v is None or _is_int(v),
    "file_range": lambda v: v is None or _is_position(v, 4),
    "help": lambda v: _is_text(v, _CONTROL_BUT_LINES),
}


def _valid(stored: object) -> bool:
    """Whether ``stored`` has the shape ``put`` writes: anything else (a number where text
    belongs, an unknown key, a message with a terminal escape) is a miss, not an error later."""
    if not isinstance(stored, dict) or not {"diagnostics", "warnings"} <= set(stored):
        return False
    if not set(stored) <= {"diagnostics", "warnings", "depends"}:
        return False
    diagnostics, warnings = stored["diagnostics"], stored["warnings"]
    depends = stored.get("depends", {})
    return (
        isinstance(diagnostics, list)
        and all(
            isinstance(d, dict)
            and set(d) == set(_DIAGNOSTIC_FIELDS)
            and all(check(d[name]) for name, check in _DIAGNOSTIC_FIELDS.items())
            for d in diagnostics
        )
        # Warnings are printed escaped (``tinker_lint.io.terminal``): any text will do.
        and isinstance(warnings, list)
        and all(isinstance(w, str) for w in warnings)
        and isinstance(depends, dict)
        and all(isinstance(v, str) for v in depends.values())
    )


def _to_json(diagnostic: Diagnostic) -> dict:
    stored = dataclasses.asdict(diagnostic)
    del stored["path"]  # the key holds it
    return stored


def _diagnostic(path: str, stored: dict) -> Diagnostic:
    fix = stored.pop("fix", None)
    if fix is not None:
        edits = tuple(
            Edit(e["content"], tuple(e["location"]), tuple(e["end_location"])) for e in fix["edits"]
        )
        fix = Fix(fix["message"], edits, fix["applicability"])
    if stored.get("file_range") is not None:  # JSON gave a list
        stored["file_range"] = tuple(stored["file_range"])
    return Diagnostic(path=path, fix=fix, **stored)
