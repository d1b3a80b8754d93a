"""The flake8 front door: ``flake8 --select TNK`` reports what ``tinker-lint`` reports.

flake8 does selection, ``# noqa`` and output itself; the plugin runs the same engine on the lines
flake8 read, with the tree flake8 parsed (so CPython does not parse the file again), and yields
0-based columns (flake8 adds 1, TorchFix's off-by-one is the warning).

The engine, and libcst with it (about 0.3 s), is imported only for a file whose text names Tinker:
editors run flake8 on every save, mostly on files that never do. Each run is a new process: what
the project index makes of the project's other modules (their sketches, the helpers' facts) is
kept between runs in the store beside the command's results cache (``_index_store``;
``--tinker-no-cache``: none), so a run reads it back for every module whose bytes did not change.

Settings are the command's (``run.resolve``): the nearest ``[tool.tinker-lint]`` above the file, and
the same tinker version (flake8's ``--tinker-version``, else ``tinker-version`` there, else the
project's pin or lock, else the installed tinker). A configuration that is not valid (a bad
``--tinker-version``, or any error in the table) is reported as TNK004 at line 1 of each file, in
place of the file's findings, as the command exits 2 with it: an exception would stop flake8 and
every other plugin, and a pylsp user would see nothing at all (pylsp keeps only lines that parse
as findings).

Messages carry no level (error, warning, note): flake8 has no field for it, and editors take the
severity from the code alone (pylsp: Warning for every TNK code; VS Code's Flake8 extension: its
``flake8.severity`` map), so a level in the text would change no editor's severity. The docs give
the VS Code map ("Levels under flake8" in docs/configuration.md).

Opt-in rules (``codes.is_opt_in``, e.g. TNK403) run only when ``--tinker-enable`` (or
``tinker-enable`` in the flake8 configuration) names them: flake8's ``extend_default_ignore`` alone
is undone by an explicit ``--select TNK`` (TorchFix's TOR4xx come back that way), so the plugin
gates them on its own option, as flake8-async's ``--enable``; flake8's selection still applies on
top. ``--tinker-preview`` (or ``preview = true`` under ``[tool.tinker-lint]``) is ``--preview``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tinker_lint import __version__
from tinker_lint.io.config import ConfigError, parse_version
from tinker_lint.io.settings import Settings
from tinker_lint.prefilter.mentions import may_concern
from tinker_lint.prefilter.needs import TextFacts

if TYPE_CHECKING:
    from tinker_lint.run.cache import IndexStore

CONFIG_ERROR = "TNK004"


@dataclass(frozen=True)
class _Options:
    """The plugin's own flake8 options (flake8's command line or its configuration)."""

    tinker_version: str | None = None
    # ``--tinker-enable``: the opt-in rules to run.
    enable: tuple[str, ...] = ()
    # ``--tinker-preview``.
    preview: bool = False
    # ``--tinker-no-cache``: the project index's store is neither read nor written.
    no_cache: bool = False


@lru_cache(maxsize=64)
def _project_settings(directory: str, options: _Options) -> Settings | ConfigError:
    """The settings of the files in ``directory``, or what is wrong with the configuration."""
    from tinker_lint.run.resolve import Overrides, SettingsResolver  # a file that names Tinker

    try:
        version = None
        if options.tinker_version:
            version = parse_version(options.tinker_version, "flake8 option --tinker-version")
        enable = _enabled_codes(options.enable)
        resolver = SettingsResolver(overrides=Overrides(tinker_version=version))
        settings = resolver.for_path(directory)
    except ConfigError as error:
        return error
    # flake8 decides what is shown; the plugin reports every code but syntax errors, which flake8
    # reports itself (E999): so files no rule needs are not parsed a second time. The opt-in
    # rules named by --tinker-enable are selected by their code (a prefix does not turn them on).
    return replace(
        settings,
        select=("TNK",),
        ignore=("TNK001",),
        extend_select=enable,
        per_file_ignores=(),
        preview=settings.preview or options.preview,
    )


@lru_cache(maxsize=64)
def _index_store(directory: str, options: _Options) -> _Store | None:
    """Where the project index of this process keeps what it makes of the project's modules
    for the next flake8 run (each is a new process: an editor runs one per save): the store
    beside the results cache of ``tinker-lint`` on the same files (``.tinker_lint_cache`` in the
    project root, else the current directory), shared with it. None with ``--tinker-no-cache``
    or a configuration that is not valid."""
    if options.no_cache:
        return None
    settings = _project_settings(directory, options)
    if isinstance(settings, ConfigError):
        return None
    return _Store(settings)


class _Store:
    """``run.cache.IndexStore`` for ``settings``, made when the index first asks: a file whose
    imports name no module of its project (most files) imports no cache and reads no linter
    fingerprint."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: IndexStore | None = None

    def _made(self) -> IndexStore:
        if self._store is None:
            from tinker_lint.run.cache import IndexStore, default_cache_dir

            self._store = IndexStore(default_cache_dir(self.settings))
        return self._store

    def get(self, key: str) -> object | None:
        return self._made().get(key)

    def put(self, key: str, value: object) -> None:
        self._made().put(key, value)


def _enabled_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--tinker-enable``'s codes, each a rule code tinker-lint knows (not a prefix: an opt-in
    rule is turned on by its own code)."""
    from tinker_lint.codes import RULE_CODES

    for value in values:
        if value not in RULE_CODES:
            raise ConfigError(
                f"flake8 option --tinker-enable: {value!r} is not a rule code (e.g. TNK403)"
            )
    return values


def _may_concern(facts: TextFacts, directory: str, options: _Options) -> bool:
    """What every rule's declaration asks of the text, or, for a loop made hot by the project's
    ``hot-loop-calls`` (no Tinker call needed), a name it gives, when each is a plain name. The
    settings are read only for files without Tinker in them (a configuration error: the file is
    concerned, so that the error is reported)."""
    if may_concern(facts):
        return True
    settings = _project_settings(directory, options)
    if isinstance(settings, ConfigError):
        return True
    return may_concern(facts, settings.hot_loop_calls)


# A file that imports something (every one that can call a helper of its project does): only
# then is the project index (and libcst) brought in for a file that names no Tinker call itself.
_PROJECT_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+import|import[ \t]+\w)", re.M)


def _not_shown(options: argparse.Namespace) -> tuple[str, ...]:
    """The rule codes flake8's ``--select``/``--ignore`` (and their ``extend-`` forms) hide;
    nothing when the options are not flake8's own (a test's bare namespace)."""
    from tinker_lint.codes import PYTHON_CODES  # the registry: no rule, no libcst imported

    try:
        from flake8.style_guide import Decision, DecisionEngine  # type: ignore[import-untyped]

        engine = DecisionEngine(options)
        return tuple(c for c in PYTHON_CODES if engine.decision_for(c) is not Decision.Selected)
    except (ImportError, AttributeError, TypeError):
        return ()


class TinkerLintPlugin:
    name = "tinker-lint"
    version = __version__
    _options = _Options()
    # The rule codes flake8's selection will not show: those rules do not run, so that a finding
    # they would supersede (``Rule.supersedes``) stays, as with ``tinker-lint --select``.
    _not_shown: tuple[str, ...] = ()

    def __init__(self, tree: Any, filename: str, lines: list[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_option(
            "--tinker-version",
            default=None,
            parse_from_config=True,
            help="tinker version the project targets (tinker-lint; gates TNK105/TNK106)",
        )
        parser.add_option(
            "--tinker-enable",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="tinker-lint's opt-in rules to run, by code (e.g. TNK403); flake8's --select "
            "still decides what is shown",
        )
        parser.add_option(
            "--tinker-no-cache",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="tinker-lint's --no-cache: keep nothing of the project's modules between runs "
            "(.tinker_lint_cache)",
        )
        parser.add_option(
            "--tinker-preview",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="tinker-lint's --preview: the less certain cases some rules keep for preview",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        enable = getattr(options, "tinker_enable", None) or ()
        if isinstance(enable, str):  # not flake8's own parsing (a test's bare namespace)
            enable = [part.strip() for part in enable.split(",")]
        cls._options = _Options(
            tinker_version=getattr(options, "tinker_version", None),
            enable=tuple(code.strip().upper() for code in enable if code.strip()),
            preview=bool(getattr(options, "tinker_preview", False)),
            no_cache=bool(getattr(options, "tinker_no_cache", False)),
        )
        cls._not_shown = _not_shown(options)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        # flake8 names stdin "stdin" (pylsp passes the real name with --stdin-display-name).
        directory = os.path.dirname(os.path.abspath(self.filename or "stdin"))
        facts = TextFacts(text)  # worked out once: the gate here, the engine's pre-filter after
        project = None
        if _PROJECT_IMPORT.search(text) is not None:
            from tinker_lint.project.index import project_index

            project = project_index()  # the CLI's: helpers in the project's other modules
            # What it made of them in earlier runs (each flake8 run is a new process).
            project.store = _index_store(directory, self._options)
        if not _may_concern(facts, directory, self._options) and (
            project is None
            or not project.view(self.filename or "stdin").imports_helpers(text, facts.identifiers)
        ):
            return  # no rule's text test can pass: libcst is not needed
        settings = _project_settings(directory, self._options)
        if isinstance(settings, ConfigError):
            message = f"{CONFIG_ERROR} tinker-lint configuration error: {settings}"
            yield 1, 0, f"{message}; no tinker-lint check ran on this file", type(self)
            return
        from tinker_lint.run.engine import lint_text

        if self._not_shown:
            settings = replace(settings, ignore=(*settings.ignore, *self._not_shown))
        tree = self.tree if isinstance(self.tree, ast.Module) else None
        # flake8 checks each file once: no parse is kept for a next lint.
        result = lint_text(
            text,
            self.filename,
            settings,
            tree=tree,
            fixes=False,
            facts=facts,
            project=project,
            reuse_parse=False,
            depends=False,  # no cache of flake8's keeps them
        )
        for d in result.diagnostics:
            if d.code == "TNK001":
                continue  # flake8 reports syntax errors itself (E999)
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
