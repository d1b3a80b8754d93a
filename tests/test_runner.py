"""Across processes or in one, the runner reports the same diagnostics in the same order: files in
discovery order, each file's findings by position. Syntax errors in files no rule needs are still
reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.io.settings import Settings
from tinker_lint.run import runner
from tinker_lint.run.runner import run_paths

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tnk1xx"
SETTINGS = Settings(tinker_version=Version("0.38.0"))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Every TNK1xx fixture file in one package and a few of them in a second, with files no rule
    needs in between (not the fixture projects: each is a project of its own, with its own files).
    """
    shutil.copytree(FIXTURES, tmp_path / "a", ignore=shutil.ignore_patterns("*_project"))
    (tmp_path / "b").mkdir()
    for source in sorted(FIXTURES.glob("*.py"))[::8]:
        shutil.copy(source, tmp_path / "b" / source.name)
    for package in ("a", "b"):
        for i in range(10):
            (tmp_path / package / f"plain_{i}.py").write_text(f"VALUE = {i}\n" * (i + 1))
    (tmp_path / "a" / "plain_3.py").write_text("def broken(:\n    pass\n")
    return tmp_path


@pytest.mark.slow
def test_processes_give_what_one_process_gives(corpus, monkeypatch):
    serial = run_paths([str(corpus)], SETTINGS, jobs=1)
    assert serial.processes == 1
    # The fixtures are smaller than what is worth a process pool: lower the bar to use one.
    monkeypatch.setattr(runner, "MIN_FILES_FOR_PROCESSES", 2)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_PROCESSES", 1)
    parallel = run_paths([str(corpus)], SETTINGS, jobs=2)
    assert parallel.processes == 2
    assert parallel.linted == serial.linted == parallel.files == serial.files
    assert parallel.diagnostics == serial.diagnostics
    assert len(serial.diagnostics) > 40
    # Discovery order: a/ before b/, files sorted by name, findings by position within a file.
    paths = [d.path for d in serial.diagnostics]
    order = {path: index for index, path in enumerate(dict.fromkeys(paths))}
    assert sorted(order) == list(order)
    assert [order[p] for p in paths] == sorted(order[p] for p in paths)
    for path in order:
        mine = [(d.line, d.col) for d in serial.diagnostics if d.path == path]
        assert mine == sorted(mine)


def test_few_files_stay_in_this_process(corpus):
    run = run_paths([str(corpus / "a" / "tnk101_bad.py")], SETTINGS, jobs=4)
    assert run.processes == 1 and run.linted == 1
    assert "TNK101" in {d.code for d in run.diagnostics}


def test_batches_cover_every_file_once_largest_first():
    sizes = [5, 100, 1, 40, 40, 3, 70]
    todo = [runner.Job(i, f"f{i}.py", b"x" * size) for i, size in enumerate(sizes)]
    batches = runner._batches(todo, 3)
    flat = [job for batch in batches for job in batch]
    assert sorted(job.order for job in flat) == list(range(7))
    sizes = [len(job.raw) for job in flat]
    assert sizes == sorted(sizes, reverse=True)
    assert len(batches) <= 4


def test_syntax_errors_of_files_no_rule_needs(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\ny = (2,\n")
    (tmp_path / "future.py").write_text('"""doc"""\nfrom __future__ import braces\n')
    (tmp_path / "fine.py").write_text("import re\nprint(re.escape('\\d'))\n")
    run = run_paths([str(tmp_path)], SETTINGS, jobs=1)
    found = [(Path(d.path).name, d.line, d.col, d.code) for d in run.diagnostics]
    # CPython raises both on import; the second only after parsing (ast.parse accepts it).
    assert found == [("future.py", 2, 1, "TNK001"), ("plain.py", 2, 5, "TNK001")]
    assert run.diagnostics[0].message == "SyntaxError: not a chance"
