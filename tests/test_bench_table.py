"""bench/table.py (issue 30's table) without judging its figures: its command line, its verdicts,
the rows it skips, and that a run of its cheap rows prints the table. No timing is asserted: the
benchmark is run by hand (bench/README.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench_scripts import load

ROOT = Path(__file__).parent.parent
table = load("table")
run = table.run
MB = run.MB


def _table(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "table.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )


def test_help_lists_the_options_and_the_rows():
    done = _table("--help")
    assert done.returncode == 0, done.stderr
    for option in ("--runs", "--dense", "--cookbook", "--rows", "--edits", "--markdown"):
        assert option in done.stdout
    for row in table.ROW_NAMES:
        assert f"  {row} " in done.stdout  # each row explained below the options


def test_an_unknown_row_is_refused():
    done = _table("--rows", "startup,nothing")
    assert done.returncode == 2
    assert "unknown row nothing" in done.stderr


def _result(cpu: float, pss: int = 0) -> Any:
    result = run.Result(run.Tool("tool", []))
    result.wall = result.cpu = [cpu] * 3
    result.tree_pss = pss * MB
    return result


def _row(key: str, peer: str = "") -> Any:
    return next(row for row in table.ROWS if row.key == key and peer in row.peer)


def test_verdicts_the_cpu_ratio_and_the_memory_limit():
    stdlib = _row("stdlib")
    assert table.target(stdlib) == "<= 1.20x, <= 150 MB"
    assert table.verdict(stdlib, _result(1.2, 140), _result(1.0)) == ("1.20x", "PASS")
    assert table.verdict(stdlib, _result(1.0, 160), _result(1.0)) == ("1.00x", "FAIL (memory)")
    assert table.verdict(stdlib, _result(1.3, 140), _result(1.0)) == ("1.30x", "FAIL (CPU)")
    assert table.verdict(stdlib, _result(1.3, 160), _result(1.0)) == ("1.30x", "FAIL")
    halve = _row("cookbook-ruff")
    assert table.target(halve) == "<= 11x (half of 22x)"
    assert table.verdict(halve, _result(2.0), _result(0.1)) == ("20.0x", "FAIL")
    assert table.verdict(halve, _result(1.0), _result(0.1)) == ("10.0x", "PASS")
    shown = _row("startup", "ruff")
    assert table.target(shown) == "(shown)"
    assert table.verdict(shown, _result(0.3), _result(0.01)) == ("30.0x", "-")


def test_rows_without_their_tool_or_corpus_are_skipped_with_a_note(monkeypatch):
    monkeypatch.setattr(run, "_ruff", lambda: None)
    monkeypatch.setattr(run, "_flake8_plugins", lambda python: "7.5.0 (mccabe: 0.7.0)")
    places = table.Places(stdlib="stdlib", dense=None, cookbook=None, tiny="tiny")
    notes: list[str] = []
    found = table.jobs(places, sys.executable, notes)
    assert sorted(found) == ["startup:flake8", "startup:tl", "stdlib:tl"]
    assert any(note.startswith("ruff not found") for note in notes)
    assert any(note.startswith("flake8-bugbear not installed") for note in notes)
    results = {name: _result(0.5) for name in found}
    printed = {(row[0], row[4]): row for row in table.table_rows(table.ROWS, results)}
    assert printed[("startup", "flake8")][-1] == "PASS"
    for key, peer in [("stdlib", "ruff ALL concise"), ("dense", "flake8+bugbear")]:
        assert printed[(key, peer)][-1] == "skipped (see the notes)"


@pytest.mark.slow
def test_the_cheap_rows_print_the_table(tmp_path):
    pytest.importorskip("flake8")
    dense = tmp_path / "dense"
    dense.mkdir()
    shutil.copy(ROOT / "fixtures" / "tnk1xx" / "tnk102_bad.py", dense)
    done = _table("--runs", "1", "--rows", "startup,dense,dense-ruff", "--dense", str(dense))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("row "))
    for column in ("tinker-lint CPU", "CPU ratio", "tinker-lint peak", "target", "verdict"):
        assert column in header
    rows = [line.split("  ")[0] for line in lines[lines.index(header) + 2 :] if line.strip()]
    assert rows[:4] == ["dense", "startup", "startup", "dense-ruff"]
    measured = lines[lines.index(header) + 3]  # startup against flake8: every column filled
    assert measured.rstrip().endswith(("PASS", "FAIL")), measured
    assert f"corpus: dense: {dense} (1 Python file)" in lines
    if not any("flake8-bugbear not installed" in line for line in lines):
        assert "skipped" not in done.stdout
