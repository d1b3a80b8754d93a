"""Which rules run, for which tinker version: resolved from CLI flags, then pyproject, then defaults."""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
from dataclasses import dataclass, field

from packaging.version import Version

from tinker_lint.codes import is_opt_in
from tinker_lint.versions import NEWEST_KNOWN_TINKER

# ``tinker_version_source`` when no one chose the version: the default.
VERSION_ASSUMED = "newest known"


def _specificity(code: str, selectors: tuple[str, ...]) -> int:
    """Length of the longest selector that is a prefix of ``code`` (-1 if none); ``ALL`` is 0."""
    best = -1
    for selector in selectors:
        if selector == "ALL":
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


# Python files larger than this are checked for syntax only (TNK003): ``--max-file-chars``.
MAX_FILE_CHARS = 1_000_000


def char_count(value: str) -> int:
    """``--max-file-chars N`` (the command's and the server's): a whole number of characters, 0
    or more, written with ``,`` or ``_`` between thousands if you like."""
    try:
        count = int(value.replace(",", "").replace("_", ""))
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(
            f"expected a number of characters (0: none), got {value!r}"
        )
    return count


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("TNK",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    tinker_version: Version = NEWEST_KNOWN_TINKER
    tinker_version_source: str = VERSION_ASSUMED
    # Nothing said which tinker the project targets (neither the command line, the configuration,
    # the project's pin or lock, nor an installed tinker: ``run.resolve``), so ``tinker_version``
    # is a guess, and the fixes of the version-gated rules are unsafe (they may break older SDKs).
    # Settings made in code choose their version: False.
    tinker_version_assumed: bool = False
    # Extra identifiers that mark a cadence guard (``if should_flush:``), beyond the built-in ones.
    cadence_names: tuple[str, ...] = ()
    # Extra calls (glob over the called name) that make a loop hot, e.g. a step wrapper imported
    # from another module: ``hot-loop-calls = ["train_step", "trainer.*"]``.
    hot_loop_calls: tuple[str, ...] = ()
    config_path: str | None = None
    # Larger Python files get a syntax check and TNK003, not the analysis (0: no limit).
    max_file_chars: int = MAX_FILE_CHARS
    # ruff's ``--preview``: the less certain cases of some rules (TNK404's per-parameter loops).
    # Set by ``--preview``, ``preview = true`` under ``[tool.tinker-lint]``, flake8's
    # ``--tinker-preview``. It turns no opt-in rule on: those need their code selected.
    preview: bool = False
    _cache: dict[str, bool] = field(default_factory=dict, compare=False, repr=False, hash=False)
    # Per path: the codes its ``per-file-ignores`` patterns give, matched once per path (the
    # engine asks for every rule: 1,000 patterns x 27 rules x 20 files took 5 s).
    _ignored: dict[str, tuple[str, ...]] = field(
        default_factory=dict, compare=False, repr=False, hash=False
    )

    def is_enabled(self, code: str, path: str | None = None) -> bool:
        """ruff's rule: the most specific matching selector wins; on a tie, ignore wins. An opt-in
        rule (``codes.is_opt_in``) is on only when a selector is its very code: ``TNK``, ``TNK4``
        and ``ALL`` leave it off, as ruff's explicit-preview-rules."""
        key = code
        enabled = self._cache.get(key)
        if enabled is None:
            chosen = _specificity(code, self.select + self.extend_select)
            enabled = chosen >= 0 and chosen > _specificity(code, self.ignore)
            if enabled and chosen < len(code) and is_opt_in(code):
                enabled = False  # selected by a prefix only
            self._cache[key] = enabled
        if enabled and path is not None and self.per_file_ignores:
            return _specificity(code, self.ignored_in(path)) < 0
        return enabled

    def ignored_in(self, path: str) -> tuple[str, ...]:
        """The codes and prefixes ``per-file-ignores`` turns off in ``path``: those of every
        pattern that matches it."""
        ignored = self._ignored.get(path)
        if ignored is None:
            root = self.project_root
            ignored = tuple(
                code
                for pattern, codes in self.per_file_ignores
                if _path_matches(path, pattern, root)
                for code in codes
            )
            self._ignored[path] = ignored
        return ignored

    def excludes(self, path: str) -> bool:
        """Whether ``exclude`` matches ``path`` or a directory above it below the project root
        (as the walk would have pruned it): for a file found under another configuration's
        directory than the path walked."""
        if not self.exclude:
            return False
        root = self.project_root
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, root) if root else None
        if relative is None or relative.startswith(".."):
            return any(_path_matches(path, pattern) for pattern in self.exclude)
        parts = relative.replace(os.sep, "/").split("/")
        candidates = {"/".join(parts[:end]) for end in range(1, len(parts) + 1)} | set(parts)
        return any(fnmatch.fnmatch(c, pattern) for c in candidates for pattern in self.exclude)

    @property
    def project_root(self) -> str | None:
        """The directory of the configuration file: ``per-file-ignores`` and ``exclude`` patterns
        are relative to it, as in ruff."""
        if self.config_path is None:
            return None
        return os.path.dirname(os.path.abspath(self.config_path))

    @property
    def cadence_pattern(self) -> re.Pattern[str] | None:
        if not self.cadence_names:
            return None
        return re.compile("|".join(fnmatch.translate(n) for n in self.cadence_names))

    @property
    def hot_loop_pattern(self) -> re.Pattern[str] | None:
        if not self.hot_loop_calls:
            return None
        return re.compile("|".join(fnmatch.translate(n) for n in self.hot_loop_calls))


def path_candidates(path: str, project_root: str | None) -> list[str]:
    """``path`` as a glob may be written: as given, relative to the project root, and its name."""
    normalized = path.replace("\\", "/").removeprefix("./")
    candidates = [normalized, normalized.rsplit("/", 1)[-1]]
    if project_root is not None:
        relative = os.path.relpath(os.path.abspath(path), project_root)
        if not relative.startswith(".."):
            candidates.append(relative.replace(os.sep, "/"))
    return candidates


def _path_matches(path: str, pattern: str, project_root: str | None = None) -> bool:
    return any(fnmatch.fnmatch(c, pattern) for c in path_candidates(path, project_root))
