"""``setup.cfg``: ``[options] install_requires`` and ``[options.extras_require]``, read with
``configparser`` and split as setuptools splits them (``setuptools/config/setupcfg.py``): one
requirement per line, or, on a single line, separated by ``;``; lines starting with ``#`` dropped
and `` #`` comments cut off (``jaraco.text.drop_comment``). Positions come from the raw lines:
each requirement is found at or after the previous one, within its section.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterator

from packaging.utils import canonicalize_name

from tinker_lint.deps.declared import Declared, is_relevant, parse_pep508
from tinker_lint.deps.known_bad import PACKAGES

_HEADER = re.compile(r"^\s*\[(?P<name>[^\]]+)\]")


class SetupCfgError(Exception):
    pass


def setup_cfg_requirements(
    text: str, path: str, packages: frozenset[str] = PACKAGES
) -> Iterator[Declared]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as error:
        raise SetupCfgError(str(error).splitlines()[0]) from None
    lines = text.splitlines()
    wanted: list[tuple[str, str]] = []
    if parser.has_option("options", "install_requires"):
        wanted.append(("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        wanted.extend(("options.extras_require", key) for key in parser["options.extras_require"])
    for section, key in wanted:
        value = parser.get(section, key)
        entries = _split(value)
        if not any(_relevant(entry, packages) for entry in entries):
            continue
        cursor, col_from = _key_line(lines, section, key)
        for entry in entries:
            requirement = parse_pep508(entry)
            found = _find(lines, cursor, col_from, entry)
            if found is None:
                continue
            cursor, col = found
            col_from = col + len(entry)
            if requirement is None or not is_relevant(requirement.name, packages):
                continue
            yield Declared(
                name=canonicalize_name(requirement.name),
                text=entry,
                path=path,
                line=cursor + 1,
                col=col + 1,
                span=len(entry),
                specifiers=(requirement.specifier,),
            )


def _split(value: str) -> list[str]:
    parts = value.splitlines() if "\n" in value else value.split(";")
    entries = []
    for part in parts:
        part = part.strip()
        if not part or part.startswith("#"):
            continue
        entries.append(part.partition(" #")[0].strip())
    return entries


def _relevant(entry: str, packages: frozenset[str]) -> bool:
    requirement = parse_pep508(entry)
    return requirement is not None and is_relevant(requirement.name, packages)


def _key_line(lines: list[str], section: str, key: str) -> tuple[int, int]:
    """(line index, column index just past ``=``) where ``key`` is set in ``section``
    (configparser's key matching: case-insensitive, ``=`` or ``:``)."""
    current = None
    pattern = re.compile(rf"^{re.escape(key)}\s*[=:]", re.IGNORECASE)
    for index, line in enumerate(lines):
        header = _HEADER.match(line)
        if header is not None:
            current = header.group("name").strip()
            continue
        match = pattern.match(line) if current == section else None
        if match is not None:
            return index, match.end()
    return 0, 0


def _find(lines: list[str], start: int, col_from: int, entry: str) -> tuple[int, int] | None:
    """(line index, column index) of ``entry`` at or after (start, col_from)."""
    for index in range(start, len(lines)):
        col = lines[index].find(entry, col_from if index == start else 0)
        if col >= 0:
            return index, col
    return None
