"""The flake8 front door: ``flake8 --select TNK`` reports what ``tinker-lint`` reports.

flake8 does selection, ``# noqa`` and output itself; the plugin runs the same engine on the lines
flake8 read, with the tree flake8 parsed (so CPython does not parse the file again), and yields
0-based columns (flake8 adds 1, TorchFix's off-by-one is the warning).

The engine, and libcst with it (about 0.3 s), is imported only for a file whose text names Tinker:
editors run flake8 on every save, mostly on files that never do.
"""

from __future__ import annotations

import argparse
import ast
import os
from collections.abc import Iterator
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from tinker_lint import __version__
from tinker_lint.io.config import ConfigError, find_pyproject, load_settings, parse_version
from tinker_lint.io.settings import Settings
from tinker_lint.prefilter.mentions import hot_loop_names, may_concern_tinker
from tinker_lint.prefilter.needs import TextFacts


@lru_cache(maxsize=64)
def _project_settings(directory: str) -> Settings:
    try:
        settings = load_settings(find_pyproject(Path(directory)))
    except ConfigError:
        settings = load_settings(None)
    # flake8 decides what is shown; the plugin reports every code but syntax errors, which flake8
    # reports itself (E999): so files no rule needs are not parsed a second time.
    return replace(
        settings, select=("TNK",), ignore=("TNK001",), extend_select=(), per_file_ignores=()
    )


def _may_concern(text: str, directory: str) -> bool:
    """What every rule's declaration asks of the text, or, for a loop made hot by the project's
    ``hot-loop-calls`` (no Tinker call needed), a name it gives, when each is a plain name. The
    settings are read only for files without Tinker in them."""
    facts = TextFacts(text)
    if may_concern_tinker(facts):
        return True
    hot_loop_calls = _project_settings(directory).hot_loop_calls
    if not hot_loop_calls:
        return False
    names = hot_loop_names(hot_loop_calls)
    return names is None or facts.holds(names)


class TinkerLintPlugin:
    name = "tinker-lint"
    version = __version__
    _tinker_version: str | None = None

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

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls._tinker_version = getattr(options, "tinker_version", None)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        directory = os.path.dirname(os.path.abspath(self.filename)) if self.filename else "."
        if not _may_concern(text, directory):
            return  # no rule's text test can pass: libcst is not needed
        settings = _project_settings(directory)
        if self._tinker_version:
            try:
                version = parse_version(self._tinker_version, "--tinker-version")
                settings = replace(settings, tinker_version=version)
            except ConfigError:
                pass
        from tinker_lint.run.engine import lint_text

        tree = self.tree if isinstance(self.tree, ast.Module) else None
        result = lint_text(text, self.filename, settings, tree=tree, fixes=False)
        for d in result.diagnostics:
            if d.code == "TNK001":
                continue  # flake8 reports syntax errors itself (E999)
            yield d.line, d.col - 1, f"{d.code} {d.message}", type(self)
