"""Each file's settings, as ruff resolves them: the nearest ``pyproject.toml`` with a
``[tool.tinker-lint]`` table above the file (looked up once per directory), or the one ``--config``
names for every file, or none with ``--isolated``; then the command line's flags over it.

The tinker version the file's project targets, in order (the first that says wins):

1. ``--tinker-version`` on the command line (or flake8's option);
2. ``tinker-version`` in that configuration;
3. the project's own pin or lock (``deps.tinker_pin``: the nearest project root above the file);
4. the installed ``tinker``, from its metadata (never imported);
5. none says: the newest known, ``Settings.tinker_version_assumed``, and the version-gated fixes
   are unsafe (the run says so once).

So the order of the paths on the command line never changes a file's result, and the
sub-projects of a monorepo each get their own configuration and SDK version.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.version import Version

from tinker_lint.deps.tinker_pin import project_tinker_version
from tinker_lint.io.config import find_pyproject, installed_tinker_version, load_settings
from tinker_lint.io.settings import VERSION_ASSUMED, Settings


@dataclass(frozen=True)
class Overrides:
    """What the command line sets for every file, over its configuration (None: not given)."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    tinker_version: Version | None = None
    tinker_version_source: str = "--tinker-version"
    max_file_chars: int | None = None
    preview: bool | None = None


class SettingsResolver:
    """``for_path(path)``: the settings of one file. ``config``: the one configuration file for
    every file (``--config``); ``isolated``: no configuration file at all (``--isolated``; the
    project's tinker pin is still read: it is not tinker-lint's configuration, and it is what keeps
    the fixes from breaking the SDK the project runs)."""

    def __init__(
        self,
        *,
        config: Path | None = None,
        isolated: bool = False,
        overrides: Overrides | None = None,
    ) -> None:
        self._config = config
        self._isolated = isolated
        self._overrides = overrides or Overrides()
        self._by_directory: dict[str, Settings] = {}
        self._by_config: dict[Path | None, Settings] = {}

    def for_path(self, path: str) -> Settings:
        """Raises ``ConfigError`` for a configuration file that is not valid."""
        absolute = os.path.abspath(path)
        directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        found = self._by_directory.get(directory)
        if found is None:
            found = self._by_directory[directory] = self._resolve(directory)
        return found

    def _resolve(self, directory: str) -> Settings:
        if self._isolated:
            config = None
        elif self._config is not None:
            config = self._config
        else:
            config = find_pyproject(Path(directory))
        settings = self._by_config.get(config)
        if settings is None:
            settings = self._by_config[config] = load_settings(config, base=Settings())
        settings = self._overridden(settings)
        if settings.tinker_version_source != VERSION_ASSUMED:
            return settings  # the command line or the configuration said
        pin = project_tinker_version(directory)
        if pin is not None:
            return replace(settings, tinker_version=pin.version, tinker_version_source=pin.source)
        version, source = installed_tinker_version()
        if version is not None:
            return replace(settings, tinker_version=version, tinker_version_source=source)
        return replace(settings, tinker_version_assumed=True)

    def _overridden(self, settings: Settings) -> Settings:
        given = self._overrides
        changes: dict[str, Any] = {}  # Settings fields of several types
        for name in ("select", "ignore", "extend_select"):
            value = getattr(given, name)
            if value is not None:
                changes[name] = value
        if given.tinker_version is not None:
            changes["tinker_version"] = given.tinker_version
            changes["tinker_version_source"] = given.tinker_version_source
        if given.max_file_chars is not None:
            changes["max_file_chars"] = given.max_file_chars
        if given.preview is not None:
            changes["preview"] = given.preview
        return replace(settings, **changes) if changes else settings
