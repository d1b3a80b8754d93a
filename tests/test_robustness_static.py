"""Static only: linting a file never runs it. Each file here would leave a marker and kill the
process at import; after linting, no marker exists and the findings are reported."""

from __future__ import annotations

import pytest

from tests.robustness_support import cli, no_traceback, sample

CODE, FOUND = sample()

HOSTILE = """\
import os
import pathlib
import sys

pathlib.Path({marker!r}).write_text("executed")
print("EXECUTED", file=sys.stderr)
os._exit(3)
"""


@pytest.mark.slow
def test_top_level_code_is_never_executed(tmp_path):
    project = tmp_path / "project"
    package = project / "pkg"
    package.mkdir(parents=True)
    markers = {
        name: tmp_path / f"marker_{name.replace('/', '_')}"
        for name in ("train.py", "pkg/__init__.py", "conftest.py", "setup.py", "tinker.py")
    }
    for name, marker in markers.items():
        # The hostile prologue, then TNK104's example: a finding proves the file was read.
        (project / name).write_text(HOSTILE.format(marker=str(marker)) + CODE)
    (project / "sitecustomize.py").write_text(HOSTILE.format(marker=str(tmp_path / "site")))
    run = cli(project, cwd=project)
    no_traceback(run)
    assert not [m for m in markers.values() if m.exists()]
    assert not (tmp_path / "site").exists()
    assert "EXECUTED" not in run.stderr
    offset = HOSTILE.count("\n")
    assert sorted(run.diagnostics()) == sorted(
        (name.rsplit("/", 1)[-1], line + offset, col, code)
        for name in markers
        for line, col, code in FOUND
    )
    assert run.returncode == 1  # the findings' exit code, not the file's 3
