"""Helpers in other modules of the project: the CLI and flake8 see the same findings at the
callers, and the cache knows a caller's findings depend on the helper modules it calls.

``fixtures/tnk1xx/helpers_project`` is a package whose loops (``train.py``, ``rollouts.py``) call
helpers of ``steps.py`` and ``policy.py``; its ``# expect:`` comments are checked by
tests/test_fixtures.py. Here: the other front door, and editing a helper.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tests.fixture_expectations import FIXTURES, expectations

PROJECT = FIXTURES / "helpers_project"
_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TNK\d{3}) (?P<message>.*)$"
)


def _findings(output: str) -> dict[tuple[str, int, int, str], str]:
    found = {}
    for line in output.splitlines():
        match = _LINE.match(line)
        if match is not None:
            key = (Path(match["path"]).name, int(match["line"]), int(match["col"]), match["code"])
            found[key] = match["message"]
    return found


def _cli(path: Path, *args: str) -> dict[tuple[str, int, int, str], str]:
    command = [sys.executable, "-m", "tinker_lint", "--output-format", "concise", *args, str(path)]
    run = subprocess.run(command, env=checkout_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    return _findings(run.stdout)


def _full(path: Path, *args: str) -> str:
    """The ``text`` report (ruff's full): each finding with its source and its help."""
    command = [sys.executable, "-m", "tinker_lint", "--output-format", "text", *args, str(path)]
    run = subprocess.run(command, env=checkout_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    return run.stdout


def _expected() -> set[tuple[str, int, int, str]]:
    return {
        (path.name, line, col, code)
        for path in sorted(PROJECT.rglob("*.py"))
        for code, line, col in expectations(path.read_text(encoding="utf-8"))
    }


@pytest.mark.slow
def test_flake8_reports_what_the_cli_reports_through_helpers() -> None:
    pytest.importorskip("flake8")
    cli = _cli(PROJECT, "--no-cache")
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "TNK", str(PROJECT)]
    run = subprocess.run(command, env=checkout_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    flake8 = _findings(run.stdout)
    assert set(cli) == _expected()
    assert flake8 == cli  # the same findings, with the same messages


def test_a_finding_about_a_helper_names_its_wait() -> None:
    found = _cli(PROJECT / "trainer", "--no-cache", "--select", "TNK101")
    message = found[("train.py", 24, 18, "TNK101")]
    assert message == (
        "Waiting for `forward_backward_and_wait()` before submitting `optim_step`, which does not "
        "need it"
    )
    # The help (the full report's) says what the helper waits for, and where.
    full = _full(PROJECT / "trainer", "--no-cache", "--select", "TNK101")
    assert (
        "  = help: `forward_backward_and_wait()` waits for `forward_backward` (steps.py:8). Submit\n"
        "          `optim_step` first, then wait for both (requests run in submission order;\n"
        "          `tinker_cookbook.supervised.train` pipelines this)\n"
    ) in full


@pytest.mark.slow
def test_editing_a_helper_changes_its_callers_findings_through_the_cache(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--select", "TNK101"]
    train = project / "trainer" / "train.py"
    before = _cli(train, *cache)
    assert ("train.py", 24, 18, "TNK101") in before
    assert _cli(train, *cache) == before  # from the cache
    steps = project / "trainer" / "steps.py"
    text = steps.read_text(encoding="utf-8")
    # The helper now hands back the future: waiting before optim_step is no longer there.
    steps.write_text(
        text.replace(
            'return training_client.forward_backward(batch, loss_fn="cross_entropy").result()',
            'return training_client.forward_backward(batch, loss_fn="cross_entropy")',
        ),
        encoding="utf-8",
    )
    after = _cli(train, *cache)
    assert ("train.py", 24, 18, "TNK101") not in after
    assert ("train.py", 46, 18, "TNK101") in after  # ``resolve(fut)``: its own wait, unchanged


@pytest.mark.slow
def test_a_caller_without_tinker_words_is_re_linted_when_its_helper_starts_waiting(
    tmp_path: Path,
) -> None:
    """The caller names no Tinker call of its own: only its imports' sketches let the rules
    through, so its cache entry must depend on the helper's bytes even while nothing is found."""
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    (project / "pkg" / "__init__.py").write_text("")
    helper = project / "pkg" / "steps.py"
    helper.write_text("def step(client, batch):\n    return client.forward_backward(batch)\n")
    caller = project / "pkg" / "loop.py"
    caller.write_text(
        "from .steps import step\n\n\n"
        "def run(client, batches, adam):\n"
        "    for batch in batches:\n"
        "        out = step(client, batch)\n"
        "        client.optim_step(adam)\n"
        "        print(out)\n"
    )
    cache = ["--cache-dir", str(tmp_path / "cache"), "--select", "TNK101"]
    assert _cli(caller, *cache) == {}
    assert _cli(caller, *cache) == {}  # from the cache
    helper.write_text(
        "def step(client, batch):\n    return client.forward_backward(batch).result()\n"
    )
    assert set(_cli(caller, *cache)) == {("loop.py", 6, 15, "TNK101")}
