"""The results cache: a file's diagnostics (and its warnings, such as a typo in a ``noqa``), kept
under a key of everything they depend on.

A file's diagnostics depend on its bytes, its path (``per-file-ignores``; the diagnostics name
it), the settings, and the linter itself. So an entry lives in a directory named by a fingerprint
of the settings and of the linter (its version, its own source files' sizes and times, so that an
edited checkout is a new linter, and the Python version, whose parser reports syntax errors), under
the SHA-256 of the file's path and bytes. Nothing is trusted from a file's time stamp, as ruff's
content-hash cache does not either.

Entries are written atomically (a temporary file, then ``os.replace``), so a reader sees a whole
entry or none; one that does not parse, or has the wrong shape, is ignored and rewritten. Stale
entries are never read again; ``rm -rf .tinker_lint_cache`` reclaims them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tinker_lint import __version__
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.settings import Settings

CACHE_DIR_NAME = ".tinker_lint_cache"
# Bumped when the layout or the entry format changes.
FORMAT = "diagnostics-v2"
_PACKAGE = Path(__file__).resolve().parent


def default_cache_dir(settings: Settings) -> Path:
    """``.tinker_lint_cache`` in the project root (the directory of the configuration file), else
    in the current directory: as ruff's ``.ruff_cache``."""
    return Path(settings.project_root or os.getcwd()) / CACHE_DIR_NAME


def tool_fingerprint() -> str:
    """This linter: its version, its sources (size and time of each), and the Python version."""
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0".encode())
    for directory, dirnames, filenames in os.walk(_PACKAGE):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                relative = os.path.relpath(os.path.join(directory, name), _PACKAGE)
                digest.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
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


class Cache:
    """Diagnostics by file, for one set of settings and one linter."""

    def __init__(self, directory: str | Path, settings: Settings, tool: str | None = None) -> None:
        self.root = Path(directory)
        fingerprint = hashlib.sha256(
            f"{tool or tool_fingerprint()}\0{settings_fingerprint(settings)}".encode()
        ).hexdigest()
        self.directory = self.root / FORMAT / fingerprint[:32]
        self._made = False

    @staticmethod
    def key(path: str, raw: bytes) -> str:
        digest = hashlib.sha256(path.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(raw)
        return digest.hexdigest()

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
            return diagnostics, list(warnings)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return None

    def put(
        self, key: str, diagnostics: Sequence[Diagnostic], warnings: Sequence[str] = ()
    ) -> None:
        """Store atomically; raises OSError if the cache directory cannot be written."""
        if not self._made:
            self._make_directory()
        entry = self.entry(key)
        temporary = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        data = json.dumps(
            {"diagnostics": [_to_json(d) for d in diagnostics], "warnings": list(warnings)}
        )
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(temporary, entry)
        except OSError:
            temporary.unlink(missing_ok=True)
            raise

    def _make_directory(self) -> None:
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
            # Like ruff's cache: never committed, skipped by backup tools.
            (self.root / ".gitignore").write_text("# Created by tinker-lint\n*\n")
            (self.root / "CACHEDIR.TAG").write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by tinker-lint.\n"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        self._made = True


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
    return Diagnostic(path=path, fix=fix, **stored)
