"""Shared fixtures for the whole suite.

Markers (registered in pyproject.toml, ``--strict-markers``): ``slow`` for a test over about 2 s
(subprocesses such as pre-commit, pylsp and doctor's venvs, the cookbook validation, property
tests with many examples, corpora sweeps, the benchmark), ``network`` for one that may download.
The inner loop is ``python3 -m pytest -q -m "not slow"``; CI and the README run everything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from tests.bench_scripts import load as load_bench_script
from tests.fixture_expectations import FIXTURES_ROOT, ROOT
from tinker_lint.incremental import buffers
from tinker_lint.io.settings import Settings

CORPORA = ROOT / ".tinker_lint_cache" / "corpora"

# The text reports are painted when these ask for it (report/colour.py), into a pipe too: a CI
# runner that sets FORCE_COLOR would otherwise change every report the tests read. The tests of
# colour set them themselves.
for _name in ("FORCE_COLOR", "CLICOLOR_FORCE", "NO_COLOR", "CLICOLOR"):
    os.environ.pop(_name, None)


def make_settings(**changes: Any) -> Settings:
    """``Settings()`` with some fields changed; ``tinker_version`` may be given as a string."""
    if isinstance(changes.get("tinker_version"), str):
        changes["tinker_version"] = Version(changes["tinker_version"])
    return replace(Settings(), **changes)


@pytest.fixture(name="make_settings")
def make_settings_fixture() -> Callable[..., Settings]:
    return make_settings


@pytest.fixture
def fresh_buffers() -> Iterator[None]:
    """Lints keep per buffer what the next lint of it may take over (``incremental/buffers.py``), as
    in the server, starting from nothing kept, and leave nothing kept."""
    with buffers.parses_kept(buffers.DEFAULT_FILES):
        buffers.forget_all()
        yield
        buffers.forget_all()


@pytest.fixture(scope="session")
def fixtures_root() -> Path:
    """``fixtures/``: one directory per family (tests/fixture_expectations.py)."""
    return FIXTURES_ROOT


@pytest.fixture(scope="session")
def cookbook() -> Path:
    """tinker-cookbook 0.6.1's package directory, downloaded once into
    ``.tinker_lint_cache/corpora/`` by ``bench/corpora.py``, as the bench scripts get it (tests
    using it are ``slow`` and ``network``)."""
    corpora = load_bench_script("corpora")
    try:
        target: Path = corpora.unpacked(corpora.COOKBOOK, CORPORA)
    except corpora.DownloadError as error:
        # A failure, not a skip: CI installs the test dependencies from the same registry, and
        # a skipped validation would look like a passed one.
        pytest.fail(str(error))
    return target / "tinker_cookbook"
