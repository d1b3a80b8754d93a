"""The tinker version a project targets, read from its own dependency files: the target of the
version-gated rules (TNK105, TNK106) and their fixes when neither ``--tinker-version`` nor
``tinker-version`` in ``[tool.tinker-lint]`` says.

The project is the nearest directory at or above the file holding ``pyproject.toml``,
``setup.cfg``, ``setup.py`` or a ``requirements*.txt`` (``deps.lint.project_root``, as for TNK303's
evidence). Its dependency files are read with the same parsers as TNK3xx, asking for ``tinker``:

- a lock (``uv.lock``, ``poetry.lock``, ``pylock.toml``) that locks tinker gives the version it
  locks (the lowest, if several locks disagree): what the project runs;
- else the requirements (``[project]`` dependencies, optional dependencies, dependency groups,
  Poetry's tables, ``setup.cfg``, ``requirements*.txt``): each gives the lowest known version it
  admits, and the project the lowest of them. A fix must run on every version the project admits:
  ``tinker>=0.30,<0.39`` admits 0.30, on which a 0.38-only rewrite breaks the code;
- a requirement with no version constraint (``tinker``) says nothing.

Every run asks (in a warm run, for every directory): the parsers are imported only for a
dependency file that mentions tinker.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.version import Version

from tinker_lint.deps.kinds import dependency_kind, project_root
from tinker_lint.io.files import read_utf8
from tinker_lint.versions import ASYNC_DEPRECATION_VERSION, NEWEST_KNOWN_TINKER

if TYPE_CHECKING:
    from packaging.specifiers import Specifier, SpecifierSet

    from tinker_lint.deps.declared import Declared

_TINKER = frozenset({"tinker"})
OLDEST_TINKER = Version("0.1.0")  # the first release on PyPI
# Versions a range is tried at, besides those it names (and the release after each).
_KNOWN = (OLDEST_TINKER, ASYNC_DEPRECATION_VERSION, NEWEST_KNOWN_TINKER)


# The distribution ``tinker`` named as a whole word: not ``tinker-lint`` (the ``[tool.tinker-lint]``
# table of every configured project), ``tinker_cookbook`` or ``tinker.toml``. Files without it are
# not parsed, and the parsers are not imported: a warm run asks this for every project.
_NAMES_TINKER = re.compile(r"(?<![\w.-])tinker(?![\w-]|\.\w)", re.IGNORECASE)


@dataclass(frozen=True)
class TinkerPin:
    version: Version
    source: str  # for messages: "`tinker==0.36.0` in requirements.txt"


def project_tinker_version(path: str) -> TinkerPin | None:
    """The tinker version the project of ``path`` (a file or a directory) targets, or None when
    its dependency files do not say."""
    start = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)) or "."
    return _pin_of_root(project_root(os.path.join(os.path.abspath(start), "_")))


@functools.lru_cache(maxsize=256)  # one per project a run (or an editor session) meets
def _pin_of_root(root: str) -> TinkerPin | None:
    locked: list[tuple[Version, str]] = []
    admitted: list[tuple[Version, str]] = []
    for item in _declared(root):
        where = os.path.relpath(item.path, root)
        if item.version is not None:
            locked.append((item.version, f"tinker {item.version} locked in {where}"))
        else:
            lowest = lowest_admitted(item.specifiers)
            if lowest is not None:
                admitted.append((lowest, f"`{item.text}` in {where}"))
    found = locked or admitted
    if not found:
        return None
    version, source = min(found, key=lambda pair: pair[0])
    return TinkerPin(version, source)


def lowest_admitted(alternatives: tuple[SpecifierSet, ...]) -> Version | None:
    """The lowest version any of the specifier sets admits, tried at the versions they name (and
    the release after each, for ``>``) and the known releases; None for a requirement without a
    version constraint, or one that admits none of them."""
    if not alternatives or all(len(s) == 0 for s in alternatives):
        return None
    candidates = set(_KNOWN)
    # A set naming a version packaging cannot read (more digits than int() reads: 4,300) cannot
    # be compared with any version: it says nothing.
    alternatives = tuple(s for s in alternatives if all(_readable(spec) for spec in s))
    for specifiers in alternatives:
        for spec in specifiers:
            try:
                named = Version(spec.version.removesuffix(".*"))
            # InvalidVersion, or a release number longer than int() reads (4,300 digits).
            except ValueError:
                continue
            candidates.add(named)
            major, minor, micro = (*named.release, 0, 0)[:3]
            candidates.add(Version(f"{major}.{minor}.{micro + 1}"))
    admitted = [v for v in candidates if any(s.contains(v) for s in alternatives)]
    return min(admitted) if admitted else None


def _readable(spec: Specifier) -> bool:
    """Whether ``contains`` can compare with the version ``spec`` names (``===`` compares text)."""
    if spec.operator == "===":
        return True
    try:
        Version(spec.version.removesuffix(".*"))
    except ValueError:
        return False
    return True


def _declared(root: str) -> Iterator[Declared]:
    """Every tinker requirement or lock entry in the dependency files of the project at ``root``
    (a file that cannot be read or parsed says nothing: TNK3xx reports it)."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return
    paths = [os.path.join(root, name) for name in names]
    requirements_dir = os.path.join(root, "requirements")
    if os.path.isdir(requirements_dir):
        with contextlib.suppress(OSError):
            paths += [
                os.path.join(requirements_dir, n) for n in sorted(os.listdir(requirements_dir))
            ]
    for path in paths:
        kind = dependency_kind(path)
        if kind is None or not os.path.isfile(path):
            continue
        try:
            text = read_utf8(path)
        except (OSError, UnicodeDecodeError):
            continue
        if _NAMES_TINKER.search(text) is None:
            continue  # ``[tool.tinker-lint]`` or ``tinker-cookbook`` alone pins no tinker
        yield from _declared_in(kind, path, text)


def _declared_in(kind: str, path: str, text: str) -> Iterator[Declared]:
    """The tinker requirements or lock entries of one file (nothing, if it does not parse)."""
    from tinker_lint.deps.locks import locked_versions
    from tinker_lint.deps.pyproject import pyproject_requirements
    from tinker_lint.deps.requirements import read_requirements_tree
    from tinker_lint.deps.setup_cfg import SetupCfgError, setup_cfg_requirements
    from tinker_lint.io import toml as tomllib  # tomllib, nesting included

    try:
        if kind == "requirements":
            yield from read_requirements_tree(path, text, _TINKER).declared
        elif kind == "setup.cfg":
            yield from setup_cfg_requirements(text, path, _TINKER)
        elif kind == "pyproject":
            yield from pyproject_requirements(tomllib.loads(text), text, path, _TINKER)
        else:
            yield from locked_versions(text, path, kind, _TINKER)
    except (tomllib.TOMLDecodeError, SetupCfgError, ValueError):
        return
