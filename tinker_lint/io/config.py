"""``[tool.tinker-lint]`` in pyproject.toml: read with tomllib, every key and code validated."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from tinker_lint.codes import is_known_selector
from tinker_lint.io.installed import installed_version
from tinker_lint.io.settings import VERSION_ASSUMED, Settings

KNOWN_KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "tinker-version",
    "cadence-names",
    "hot-loop-calls",
    "preview",
    "max-file-chars",
)


class ConfigError(Exception):
    """A problem in the user's configuration; the message names the file and the key."""


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.tinker-lint] table, from ``start`` upwards."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                raw = candidate.read_bytes()
            except OSError:
                continue
            if b"tinker-lint" in raw and _names_our_table(raw):
                return candidate
    return None


def _names_our_table(raw: bytes) -> bool:
    """Whether this pyproject.toml has a ``[tool.tinker-lint]`` table, however spelled; a file that
    is not valid TOML counts, so that loading it reports the error instead of passing it by."""
    from tinker_lint.io import toml as tomllib  # tomllib, nesting included (only when read)

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True
    tool = data.get("tool")
    return not isinstance(tool, Mapping) or "tinker-lint" in tool


def _codes(value: object, key: str, where: str) -> tuple[str, ...]:
    # The registry, not the rules: validating codes must not import libcst (a run answered from
    # the cache never needs it).
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes, got {value!r}")
    for code in value:
        if not is_known_selector(code):
            raise ConfigError(f"{where}: unknown rule code or prefix {code!r} in `{key}`")
    return tuple(value)


def parse_version(value: str, where: str) -> Version:
    try:
        return Version(value)
    # InvalidVersion, or a release number longer than int() reads (4,300 digits).
    except ValueError:
        shown = value if len(value) <= 40 else f"{value[:40]}... ({len(value):,} characters)"
        raise ConfigError(f"{where}: invalid version {shown!r} (expected e.g. 0.38)") from None


def settings_from_table(table: Mapping[str, object], where: str, base: Settings) -> Settings:
    unknown = [k for k in table if k not in KNOWN_KEYS]
    if unknown:
        raise ConfigError(
            f"{where}: unknown key `{unknown[0]}` (known keys: {', '.join(KNOWN_KEYS)})"
        )
    changes: dict[str, Any] = {}  # Settings field -> value, each checked above
    for key in ("select", "ignore", "extend-select"):
        if key in table:
            changes[key.replace("-", "_")] = _codes(table[key], key, where)
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
        changes["per_file_ignores"] = tuple(
            (str(pattern), _codes(codes, f"per-file-ignores.{pattern}", where))
            for pattern, codes in value.items()
        )
    for key in ("exclude", "cadence-names", "hot-loop-calls"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: `{key}` must be a list of strings")
            changes[key.replace("-", "_")] = tuple(value)
    if "preview" in table:
        value = table["preview"]
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: `preview` must be true or false, got {value!r}")
        changes["preview"] = value
    if "max-file-chars" in table:
        value = table["max-file-chars"]
        # bool is an int in Python; TOML's true is not a number of characters.
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(
                f"{where}: `max-file-chars` must be a number of characters (0: no limit), "
                f"got {value!r}"
            )
        changes["max_file_chars"] = value
    if "tinker-version" in table:
        value = table["tinker-version"]
        if not isinstance(value, str):
            raise ConfigError(f'{where}: `tinker-version` must be a string such as "0.38"')
        changes["tinker_version"] = parse_version(value, f"{where}: `tinker-version`")
        changes["tinker_version_source"] = where
    return replace(base, **changes)


def load_settings(pyproject: Path | None, base: Settings | None = None) -> Settings:
    """Settings from ``pyproject`` (if any) over ``base``: by default the defaults, with the
    installed tinker's version as the target (``run.resolve`` passes ``Settings()``, and looks for
    the project's pin before the installed tinker)."""
    if base is None:
        base = default_settings()
    if pyproject is None:
        return base
    # Name the file as the user would: relative to the working directory when it is below it.
    relative = os.path.relpath(pyproject)
    where = str(pyproject) if relative.startswith("..") else relative
    from tinker_lint.io import toml as tomllib  # tomllib, nesting included (only when read)

    try:
        with pyproject.open("rb") as handle:
            data = tomllib.loads(handle.read().decode("utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:  # TOML is UTF-8; tomllib lets this through
        raise ConfigError(f"{where}: invalid TOML: not UTF-8 (byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"{where}: cannot read: {error.strerror or error}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, Mapping):
        raise ConfigError(f"{where}: `tool` must be a table, got {tool!r}")
    table = tool.get("tinker-lint")
    if table is None:
        return base
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [tool.tinker-lint] must be a table")
    return replace(
        settings_from_table(table, f"{where} [tool.tinker-lint]", base), config_path=where
    )


def default_settings() -> Settings:
    version, source = installed_tinker_version()
    if version is None:
        return Settings()
    return Settings(tinker_version=version, tinker_version_source=source)


@functools.lru_cache(maxsize=1)  # asked per directory by the flake8 plugin; it does not change
def installed_tinker_version() -> tuple[Version | None, str]:
    """The version of the tinker installed beside tinker-lint, read from its metadata (never
    imported)."""
    found = installed_version("tinker")
    if found is None:
        return None, VERSION_ASSUMED
    try:
        return Version(found), "installed tinker"
    except InvalidVersion:
        return None, VERSION_ASSUMED
