"""Locked versions in ``uv.lock`` and ``poetry.lock`` (``[[package]]``) and ``pylock.toml``
(PEP 751, ``[[packages]]``): each entry's ``name`` and ``version``. A lock entry is reported where its
version string starts, so ``# noqa`` goes on the ``version = ...`` line.

Requirements that locks repeat (uv's ``[package.metadata] requires-dist``) are not read: the
``pyproject.toml`` they come from is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tinker_lint.deps.declared import Declared, is_relevant
from tinker_lint.deps.pyproject import Locator


def locked_versions(
    data: Mapping[str, Any], text: str, path: str, table: str
) -> Iterator[Declared]:
    """``table`` is ``package`` (uv.lock, poetry.lock) or ``packages`` (pylock.toml)."""
    entries = data.get(table)
    if not isinstance(entries, list):
        return
    locate = Locator(text)
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        name, version = entry.get("name"), entry.get("version")
        if not isinstance(name, str) or not isinstance(version, str) or not is_relevant(name):
            continue
        try:
            parsed = Version(version)
        except InvalidVersion:
            continue
        line, col = locate.string((table, index, "version"), version)
        yield Declared(
            name=canonicalize_name(name),
            text=f"{name} {version}",
            path=path,
            line=line,
            col=col,
            span=len(version),
            version=parsed,
        )
