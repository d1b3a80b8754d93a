"""bench/torch_loops.py without its measurements: its command line and the table it prints.
No timing here: the benchmark is run by hand (docs/torch-costs.md), and it needs torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench_scripts import load

ROOT = Path(__file__).parent.parent
bench = load("torch_loops")


def test_help_needs_neither_torch_nor_datasets():
    # the script imports torch and datasets only to measure: --help works in any Python
    done = subprocess.run(
        [sys.executable, "-I", str(ROOT / "bench" / "torch_loops.py"), "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: torch_loops.py [-h] [--venv VENV]")
    for option in ("--repeats", "--rows", "--batch", "--sizes", "--steps", "--no-install"):
        assert option in done.stdout


def test_table_groups_cases_and_compares_them_with_the_baseline():
    Case = bench.Case
    cases = [
        Case("rows", "per row", 0.5, 1000),
        Case("rows", "sampled", 0.2, 20),
        Case("loops", "per element", 0.012, 4000, note="n"),
        Case("rows", "batched", 0.025, 1000, baseline=True),
        Case("loops", "vectorized", 0.0001, 4000, True),
        Case("alone", "no baseline", 0.002, 0),
    ]
    assert bench.format_table(cases).splitlines() == [
        "case                      ms/run    us/item      x  note",
        "[rows]",
        "  per row                500.000    500.000   20.0",
        "  sampled                200.000  10000.000  400.0",
        "  batched (baseline)      25.000     25.000    1.0",
        "[loops]",
        "  per element             12.000      3.000  120.0  n",
        "  vectorized (baseline)    0.100      0.025    1.0",
        "[alone]",
        "  no baseline              2.000          -      -",
    ]


def test_missing_dependencies_with_no_install_stop_before_installing(monkeypatch, capsys):
    monkeypatch.setattr(bench, "_have_deps", lambda: False)

    def refuse(*args: object) -> None:
        raise AssertionError("must not install with --no-install")

    monkeypatch.setattr(bench, "_reexec_in_venv", refuse)
    with pytest.raises(SystemExit) as stopped:
        bench.main(["--no-install"])
    assert stopped.value.code == 2
    assert "torch and datasets are not importable" in capsys.readouterr().err


def test_the_median_ignores_the_warm_up_call():
    calls = []
    assert bench.median_seconds(lambda: calls.append(1), 3) >= 0.0
    assert len(calls) == 4  # one warm-up, then the three timed
