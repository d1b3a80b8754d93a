"""Requirements in ``pyproject.toml``: ``[project]`` dependencies and optional dependencies,
``[dependency-groups]`` (PEP 735), uv's dependency lists in ``[tool.uv]``, and Poetry's
``[tool.poetry]`` dependency tables (constraints translated in ``deps/poetry.py``).

Positions: a PEP 508 string is reported where its text starts (after the quote); a Poetry dependency
at its key (``pydantic = "^2.13"``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tinker_lint.deps.declared import Declared, is_relevant, parse_pep508
from tinker_lint.deps.known_bad import PACKAGES
from tinker_lint.deps.poetry import poetry_specifiers
from tinker_lint.deps.toml_positions import Path, TomlPositions

# uv's own requirement lists (PEP 508 strings), read by uv alongside [project].
_UV_LISTS = ("dev-dependencies", "constraint-dependencies", "override-dependencies")


class Locator:
    """Positions in a TOML file, scanned once and only when a finding needs one."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._positions: TomlPositions | None = None

    @property
    def positions(self) -> TomlPositions:
        if self._positions is None:
            self._positions = TomlPositions(self._text)
        return self._positions

    def string(self, path: Path, value: str) -> tuple[int, int]:
        found = self.positions.string(path, value)
        return found or self.key(path)

    def key(self, path: Path) -> tuple[int, int]:
        for end in range(len(path), 0, -1):  # the nearest enclosing key or table that is written
            found = self.positions.key(path[:end])
            if found is not None:
                return found
        return 1, 1


def pyproject_requirements(
    data: Mapping[str, Any], text: str, path: str, packages: frozenset[str] = PACKAGES
) -> Iterator[Declared]:
    """The requirements on ``packages`` (by default, those the known-bad table judges)."""
    locate = Locator(text)
    tool = _table(data.get("tool"))
    uv = _table(tool.get("uv"))
    uv_prereleases = '`prerelease = "allow"`' if uv.get("prerelease") == "allow" else ""

    project = _table(data.get("project"))
    lists: list[tuple[Path, Any]] = [(("project", "dependencies"), project.get("dependencies"))]
    for extra, items in _table(project.get("optional-dependencies")).items():
        lists.append((("project", "optional-dependencies", extra), items))
    for group, items in _table(data.get("dependency-groups")).items():
        lists.append((("dependency-groups", group), items))
    for key in _UV_LISTS:
        lists.append((("tool", "uv", key), uv.get(key)))
    for where, items in lists:
        yield from _pep508_list(items, where, locate, path, uv_prereleases, packages)

    poetry = _table(tool.get("poetry"))
    tables: list[tuple[Path, Any]] = [
        (("tool", "poetry", "dependencies"), poetry.get("dependencies")),
        (("tool", "poetry", "dev-dependencies"), poetry.get("dev-dependencies")),
    ]
    for group, body in _table(poetry.get("group")).items():
        tables.append(
            (("tool", "poetry", "group", group, "dependencies"), _table(body).get("dependencies"))
        )
    for where, table in tables:
        yield from _poetry_table(_table(table), where, locate, path, packages)


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _pep508_list(
    items: Any,
    where: Path,
    locate: Locator,
    path: str,
    prereleases_allowed_by: str,
    packages: frozenset[str],
) -> Iterator[Declared]:
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if not isinstance(item, str):
            continue  # {include-group = "..."} in a dependency group
        requirement = parse_pep508(item)
        if requirement is None or not is_relevant(requirement.name, packages):
            continue
        line, col = locate.string((*where, index), item)
        yield Declared(
            name=canonicalize_name(requirement.name),
            text=item,
            path=path,
            line=line,
            col=col,
            span=len(item),
            specifiers=(requirement.specifier,),
            prereleases_allowed_by=prereleases_allowed_by,
        )


def _poetry_table(
    table: Mapping[str, Any], where: Path, locate: Locator, path: str, packages: frozenset[str]
) -> Iterator[Declared]:
    for name, value in table.items():
        if not is_relevant(name, packages):
            continue
        # A constraint string, a table ({version = "...", allow-prereleases = true, ...}), or a
        # list of such tables (one per Python version or platform).
        options = value if isinstance(value, list) else [value]
        specifiers: list[SpecifierSet] = []
        allow_prereleases = False
        written: list[str] = []
        for option in options:
            if isinstance(option, str):
                constraint = option
            elif isinstance(option, Mapping) and isinstance(option.get("version"), str):
                constraint = option["version"]
                if option.get("allow-prereleases") or option.get("allows-prereleases"):
                    allow_prereleases = True
            else:
                continue  # git, path or url dependencies carry no version constraint
            translated = poetry_specifiers(constraint)
            if translated is None:
                continue
            specifiers.extend(translated)
            written.append(constraint)
        if not specifiers:
            continue
        line, col = locate.key((*where, name))
        yield Declared(
            name=canonicalize_name(name),
            text=f"{name} = " + ", ".join(f'"{c}"' for c in written),
            path=path,
            line=line,
            col=col,
            span=len(name),
            specifiers=tuple(specifiers),
            prereleases_allowed_by="`allow-prereleases = true`" if allow_prereleases else "",
        )
