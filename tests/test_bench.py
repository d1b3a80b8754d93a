"""The benchmark's own parts (bench/): flake8 with a chosen set of plugins, and the verdicts it
prints. No timing here: the benchmark is run by hand (docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench_scripts import load

ROOT = Path(__file__).parent.parent
bench = load("run")

BAD = ROOT / "fixtures" / "tnk1xx" / "tnk102_bad.py"


def _flake8(plugins: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "flake8_with.py"),
            plugins,
            "--",
            "--isolated",
            "--select",
            "TNK,B,F",
            str(BAD),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


@pytest.mark.slow
def test_flake8_runs_the_plugins_asked_for():
    pytest.importorskip("flake8")
    alone = _flake8("")
    assert alone.returncode in (0, 1), alone.stderr
    assert " TNK" not in alone.stdout
    with_plugin = _flake8("tinker-lint")
    assert with_plugin.returncode == 1, with_plugin.stderr
    assert "tnk102_bad.py:" in with_plugin.stdout and " TNK102 " in with_plugin.stdout


def _result(name: str, seconds: float, pss: int = 0) -> bench.Result:
    result = bench.Result(bench.Tool(name, []))
    result.wall = [seconds] * 3
    result.tree_pss = pss
    return result


def test_verdicts():
    results = [
        _result("tinker-lint cold", 2.0, pss=120 * bench.MB),
        _result("tinker-lint warm", 0.3),
        _result("ruff --select ALL", 0.25),
        _result("flake8 (no plugin)", 5.0),
        _result("flake8 + bugbear", 6.0),
        _result("flake8 + tinker-lint", 6.5),
    ]
    rows = {row[0]: (row[1], row[3]) for row in bench.ratios(results)}
    assert rows["cold / flake8+bugbear"] == ("0.33x", "PASS")
    assert rows["warm / ruff"] == ("1.20x", "PASS")
    assert rows["plugin: extra over flake8"] == (
        "+1.50 s (bugbear +1.00 s; paired gap +0.50 s, ahead in 0 of 3 rounds)",
        "FAIL",
    )
    assert rows["peak memory (cold)"] == ("120 MB (tree PSS)", "PASS")


def test_the_plugin_verdict_pairs_runs_of_the_same_round():
    """The machine's speed changes from round to round: each round's runs are compared with each
    other (the tools' own medians would give bugbear +5.0 s here)."""
    base, bugbear, plugin = (
        _result("flake8 (no plugin)", 0),
        _result("flake8 + bugbear", 0),
        _result("flake8 + tinker-lint", 0),
    )
    base.wall = [4.0, 4.0, 8.0]
    bugbear.wall = [5.0, 9.0, 9.0]
    plugin.wall = [4.9, 4.9, 8.9]
    rows = {row[0]: (row[1], row[3]) for row in bench.ratios([base, bugbear, plugin])}
    assert rows["plugin: extra over flake8"] == (
        "+0.90 s (bugbear +1.00 s; paired gap -0.10 s, ahead in 3 of 3 rounds)",
        "PASS",
    )


def test_missing_tools_are_not_measured():
    rows = {row[0]: row[3] for row in bench.ratios([_result("tinker-lint cold", 2.0)])}
    assert rows["cold / flake8+bugbear"] == "not measured"
    assert rows["plugin: extra over flake8"] == "not measured"
