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
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tinker_lint import __version__
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.io.settings import Settings

CACHE_DIR_NAME = ".tinker_lint_cache"
# Bumped when the layout or the entry format changes.
FORMAT = "diagnostics-v3"  # v3: a diagnostic carries its help
_FORMATS = "diagnostics-"  # what every format's directory is named (``diagnostics-v1``...)
_PACKAGE = Path(__file__).resolve().parent.parent  # the whole tinker_lint package
KEEP_FINGERPRINTS = 4
MAX_ENTRIES = 5000
_STALE_TEMPORARY_SECONDS = 3600  # a ``.tmp`` left by a killed run
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"


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
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


class Cache:
    """Diagnostics by file, for one set of settings and one linter."""

    def __init__(self, directory: str | Path, settings: Settings, tool: str | None = None) -> None:
        self.root = Path(directory)
        fingerprint = hashlib.sha256(
            f"{tool or tool_fingerprint()}\0{settings_fingerprint(settings)}".encode()
        ).hexdigest()
        self.directory = self.root / FORMAT / fingerprint[:32]
        self._made = False
        self._used: set[str] = set()  # entries this run read or wrote
        self._written = 0
        self._fingerprints: dict[Settings, str] = {}  # each file's settings, fingerprinted once
        self._digests: dict[str, str | None] = {}  # helper modules' bytes, hashed once a run

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
            self._digests[path] = _digest_of(path)
        return self._digests[path]

    def entry(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str, path: str) -> tuple[list[Diagnostic], list[str]] | None:
        """The diagnostics and warnings stored under ``key`` (for the file at ``path``), or None
        if there are none, or they cannot be read."""
        try:
            with open(self.entry(key), "rb") as handle:
                stored = json.loads(handle.read())
            diagnostics = [_diagnostic(path, item) for item in stored["diagnostics"]]
            warnings = stored["warnings"]
            if not all(isinstance(w, str) for w in warnings):
                return None
            # The project files its findings came from (the helpers it calls): each must still
            # hold the bytes it held then.
            for other, digest in stored.get("depends", {}).items():
                if self._digest(other) != digest:
                    return None
            self._used.add(key)
            return diagnostics, list(warnings)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def put(
        self,
        key: str,
        diagnostics: Sequence[Diagnostic],
        warnings: Sequence[str] = (),
        depends: Mapping[str, str] | None = None,
    ) -> None:
        """Store atomically; raises OSError if the cache directory cannot be written.
        ``depends``: the other project files the diagnostics came from, with their SHA-256."""
        if not self._made:
            self._make_directory()
        entry = self.entry(key)
        temporary = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        stored: dict[str, object] = {
            "diagnostics": [_to_json(d) for d in diagnostics],
            "warnings": list(warnings),
        }
        if depends:
            stored["depends"] = dict(sorted(depends.items()))
        data = json.dumps(stored)
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(temporary, entry)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise
        self._used.add(key)
        self._written += 1

    def prune(self) -> None:
        """After a run that wrote entries: drop the linter/settings directories beyond the
        ``KEEP_FINGERPRINTS`` most recently used, other formats' directories, temporary files of
        killed runs, and, past the size limit, the oldest entries this run did not use. Best
        effort: a failure leaves the cache as it was, and is never an error of the run."""
        if not self._written:
            return  # a warm run writes nothing and pays nothing
        with contextlib.suppress(OSError):
            os.utime(self.directory)  # this directory is the most recently used
            for other in self.root.iterdir():
                # Only this cache's own other formats: the directory may hold what is not
                # tinker-lint's (the test suite keeps its downloaded corpora there).
                if other.is_dir() and other.name != FORMAT and other.name.startswith(_FORMATS):
                    shutil.rmtree(other, ignore_errors=True)
            fingerprints = sorted(
                (d for d in (self.root / FORMAT).iterdir() if d.is_dir()),
                key=lambda d: d.stat().st_mtime,
                reverse=True,
            )
            for stale in fingerprints[KEEP_FINGERPRINTS:]:
                if stale != self.directory:
                    shutil.rmtree(stale, ignore_errors=True)
            self._prune_entries()

    def _prune_entries(self) -> None:
        now = time.time()
        entries: list[tuple[float, Path]] = []
        for path in self.directory.iterdir():
            stat = path.stat()
            if path.name.endswith(".tmp"):
                if now - stat.st_mtime > _STALE_TEMPORARY_SECONDS:
                    path.unlink(missing_ok=True)
            elif path.stem not in self._used:
                entries.append((stat.st_mtime, path))
        limit = max(MAX_ENTRIES, 4 * len(self._used))
        excess = len(entries) + len(self._used) - limit
        if excess > 0:
            # Down to half the limit, so that pruning is rare.
            entries.sort()
            for _, path in entries[: excess + limit // 2]:
                path.unlink(missing_ok=True)

    def _make_directory(self) -> None:
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
            # Like ruff's cache: never committed, skipped by backup tools.
            (self.root / ".gitignore").write_text("# Created by tinker-lint\n*\n")
            (self.root / "CACHEDIR.TAG").write_text(
                f"{_SIGNATURE}\n# This file is a cache directory tag created by tinker-lint.\n"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        self._made = True


def clean(directory: str | Path) -> bool:
    """Remove a tinker-lint cache directory (``tinker-lint clean``); True if there was one. A
    directory without tinker-lint's cache tag is left alone, whatever its name."""
    root = Path(directory)
    try:
        tag = (root / "CACHEDIR.TAG").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not tag.startswith(_SIGNATURE) or "tinker-lint" not in tag:
        return False
    shutil.rmtree(root)
    return True


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
