"""Which files are dependency files: by name alone, so the runner can sort files without
importing the dependency checks (``packaging`` and the parsers) for a project that has none."""

from __future__ import annotations

import os
import re

_LOCKS = {"uv.lock": "package", "poetry.lock": "package", "pylock.toml": "packages"}
_PYLOCK = re.compile(r"pylock\.[^.]+\.toml")  # PEP 751 named lock files
# requirements.txt, requirements-dev.txt, dev-requirements.txt; and any .txt in a requirements/ folder.
_REQUIREMENTS = re.compile(r"requirements.*\.txt|.*[-_]requirements\.txt")


def dependency_kind(path: str) -> str | None:
    """``requirements``, ``pyproject``, ``setup.cfg``, ``package``/``packages`` (the lock table),
    or None for a file that is not a dependency file."""
    name = os.path.basename(path)
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setup.cfg"
    if name in _LOCKS:
        return _LOCKS[name]
    if _PYLOCK.fullmatch(name):
        return "packages"
    if _REQUIREMENTS.fullmatch(name) or (
        name.endswith(".txt") and os.path.basename(os.path.dirname(path)) == "requirements"
    ):
        return "requirements"
    return None


def is_dependency_file(path: str) -> bool:
    return dependency_kind(path) is not None


# The files that mark a project's root (``project_root``).
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")
_REQUIREMENTS_NAME = re.compile(r"requirements.*\.txt")


def project_root(path: str) -> str:
    """The absolute directory of the project ``path`` belongs to: the nearest directory at or above
    it that holds ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or a ``requirements*.txt``; the
    file's own directory if none does."""
    start = os.path.dirname(os.path.abspath(path))
    directory = start
    while True:
        if _marks_a_project(directory):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return start
        directory = parent


def marks_a_project(directory: str) -> bool:
    """Whether ``directory`` holds a project's configuration or requirements."""
    return _marks_a_project(directory)


def _marks_a_project(directory: str) -> bool:
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(n in _ROOT_MARKERS or _REQUIREMENTS_NAME.fullmatch(n) for n in names)
