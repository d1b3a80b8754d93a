"""Locked versions in ``uv.lock`` and ``poetry.lock`` (``[[package]]``) and ``pylock.toml``
(PEP 751, ``[[packages]]``): each entry's ``name`` and ``version``. A lock entry is reported where its
version string starts, so ``# noqa`` goes on the ``version = ...`` line.

Lock files run to megabytes (tomllib needs about 0.7 s of CPU for 5 MB), and only a few entries can
matter, so the file is cut at its ``[[package]]`` headers and only the entries named pydantic or
transformers are read with tomllib. A file without such headers is read whole.

Requirements that locks repeat (uv's ``[package.metadata] requires-dist``) are not read: the
``pyproject.toml`` they come from is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from tinker_lint.deps.declared import Declared, is_relevant
from tinker_lint.deps.known_bad import PACKAGES
from tinker_lint.deps.pyproject import Locator
from tinker_lint.io import toml as tomllib  # tomllib, nesting included

_NAME = re.compile(r"""\n[ \t]*name[ \t]*=[ \t]*["'](?P<name>[^"'\n]*)["']""")


def locked_versions(
    text: str, path: str, table: str, packages: frozenset[str] = PACKAGES
) -> Iterator[Declared]:
    """``table`` is ``package`` (uv.lock, poetry.lock) or ``packages`` (pylock.toml); the entries
    of ``packages`` (by default, those the known-bad table judges)."""
    header = f"[[{table}]]"
    starts = [m.start() + 1 for m in re.finditer(re.escape(f"\n{header}"), text)]
    if text.startswith(header):
        starts.insert(0, 0)
    if not starts:
        yield from _entries(tomllib.loads(text), text, path, table, 1, packages)
        return
    ends = [*starts[1:], len(text)]
    for start, end in zip(starts, ends, strict=True):
        # The entry's own keys come before its first sub-table ([package.metadata], ...).
        body_end = text.find("\n[", start + len(header), end)
        name = _NAME.search(text, start, end if body_end < 0 else body_end)
        if name is not None and not is_relevant(name.group("name"), packages):
            continue
        first_line = text.count("\n", 0, start) + 1
        yield from _entries(
            tomllib.loads(text[start:end]), text[start:end], path, table, first_line, packages
        )


def _entries(
    data: Mapping[str, Any],
    text: str,
    path: str,
    table: str,
    first_line: int,
    packages: frozenset[str],
) -> Iterator[Declared]:
    entries = data.get(table)
    if not isinstance(entries, list):
        return
    locate = Locator(text)
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        name, version = entry.get("name"), entry.get("version")
        if (
            not isinstance(name, str)
            or not isinstance(version, str)
            or not is_relevant(name, packages)
        ):
            continue
        try:
            parsed = Version(version)
        # InvalidVersion, or a release number longer than int() reads (4,300 digits).
        except ValueError:
            continue
        line, col = locate.string((table, index, "version"), version)
        yield Declared(
            name=canonicalize_name(name),
            text=f"{name} {version}",
            path=path,
            line=first_line + line - 1,
            col=col,
            span=len(version),
            version=parsed,
        )
