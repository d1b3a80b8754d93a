"""``flake8 --select TNK`` and ``python -m tinker_lint`` report the same findings on the fixtures.

Both run as real subprocesses on the worktree's code. Fixtures are grouped by their
``# tinker-version:`` header and each group is linted by both tools with that ``--tinker-version``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tests.fixture_expectations import FIXTURES, ROOT, fixture_files, tinker_version

pytest.importorskip("flake8")

pytestmark = pytest.mark.slow

_FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TNK\d{3}) ")


def _groups() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for path in fixture_files():
        version = tinker_version(path.read_text(encoding="utf-8"))
        groups[str(version)].append(str(path.relative_to(ROOT)))
    return groups


def _flake8(files: list[str], version: str) -> set[tuple[str, int, int, str]]:
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "TNK"]
    command += ["--tinker-version", version, *files]
    run = subprocess.run(
        command, cwd=ROOT, env=checkout_env(), capture_output=True, text=True, timeout=300
    )
    assert run.returncode in (0, 1), run.stderr
    found = set()
    for line in run.stdout.splitlines():
        match = _FLAKE8_LINE.match(line)
        assert match is not None, f"unexpected flake8 output: {line!r}"
        found.add(
            (
                os.path.normpath(match["path"]),
                int(match["line"]),
                int(match["col"]),
                match["code"],
            )
        )
    return found


def _tinker_lint(files: list[str], version: str) -> set[tuple[str, int, int, str]]:
    command = [sys.executable, "-m", "tinker_lint", "--isolated", "--output-format", "json"]
    command += ["--tinker-version", version, *files]
    run = subprocess.run(
        command, cwd=ROOT, env=checkout_env(), capture_output=True, text=True, timeout=300
    )
    assert run.returncode in (0, 1), run.stderr
    return {
        (
            os.path.normpath(d["filename"]),
            d["location"]["row"],
            d["location"]["column"],
            d["code"],
        )
        for d in json.loads(run.stdout)
    }


@pytest.mark.parametrize("version", sorted(_groups()))
def test_flake8_reports_what_the_cli_reports(version: str):
    files = _groups()[version]
    from_cli = _tinker_lint(files, version)
    assert from_cli, "the fixtures must have findings for the comparison to mean anything"
    assert _flake8(files, version) == from_cli


def test_whole_directory():
    """The directory form (``flake8 --select TNK fixtures/tnk1xx/``): both tools find the same
    files and report the same findings; the ``# tinker-version:`` header is a test convention
    neither tool reads, so one version applies to every file."""
    directory = [str(FIXTURES.relative_to(ROOT)) + "/"]
    assert _flake8(directory, "0.38.0") == _tinker_lint(directory, "0.38.0")


def test_flake8_plugin_is_the_worktree_code():
    run = subprocess.run(
        [sys.executable, "-c", "import tinker_lint; print(tinker_lint.__file__)"],
        cwd=ROOT,
        env=checkout_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(run.stdout.strip()).is_relative_to(ROOT)
