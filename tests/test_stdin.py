"""``-`` and ``--stdin-filename``, for editors, as ruff: the file comes from stdin, is reported under
the name given, and its configuration is looked up from that name; ``--fix -`` writes the fixed
text to stdout (issue 13, item 9). And the progress line: on a terminal only, for long runs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinker_lint import cli

ROOT = Path(__file__).resolve().parents[1]

CODE = (
    "import tinker\n"
    "async def f(tc, batch):\n"
    "    return await tc.forward_backward_async(batch, 'cross_entropy')\n"
)
# ``await tc.x_async(...)`` is the APIFuture that ``tc.x(...)`` returns at once.
FIXED = (
    "import tinker\n"
    "async def f(tc, batch):\n"
    "    return tc.forward_backward(batch, 'cross_entropy')\n"
)


def tinker_lint(*args: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--no-cache", *args],
        input=stdin,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path):
    """A project whose config targets tinker 0.38 (TNK105 applies) and ignores TNK105 in legacy/."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tinker-lint]\ntinker-version = "0.38.0"\n'
        'per-file-ignores = { "legacy/*" = ["TNK105"] }\n'
    )
    (tmp_path / "src").mkdir()
    return tmp_path


@pytest.mark.slow
def test_stdin_is_reported_under_the_name_given(project):
    done = tinker_lint(
        "--output-format", "json", "--stdin-filename", "src/train.py", "-", stdin=CODE, cwd=project
    )
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)
    assert [(d["filename"], d["code"], d["location"]) for d in found] == [
        ("src/train.py", "TNK105", {"row": 3, "column": 18})
    ]
    assert not (project / "src" / "train.py").exists()  # nothing read nor written there


@pytest.mark.slow
def test_the_name_chooses_the_configuration(project, tmp_path):
    # The project's per-file-ignores apply to the name: legacy/ silences TNK105.
    done = tinker_lint("--stdin-filename", "legacy/old.py", stdin=CODE, cwd=project)
    assert (done.returncode, done.stdout) == (0, "All checks passed! (1 file checked)\n")
    # A name outside the project: its config (tinker 0.38) is not the one looked up.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = tinker_lint(
        "--tinker-version",
        "0.37.0",
        "--stdin-filename",
        str(elsewhere / "x.py"),
        stdin=CODE,
        cwd=project,
    )
    assert done.returncode == 0, done.stdout


@pytest.mark.slow
def test_text_output_shows_the_stdin_source(project):
    done = tinker_lint("--stdin-filename", "src/train.py", "-", stdin=CODE, cwd=project)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("src/train.py:3:18: TNK105 [*] `forward_backward_async()`")
    assert "3 |     return await tc.forward_backward_async(batch, 'cross_entropy')" in lines
    assert lines[-2:] == [
        "Found 1 error in 1 file checked.",
        "[*] 1 fixable with the `--fix` option.",
    ]


@pytest.mark.slow
def test_fix_writes_the_fixed_text_to_stdout_and_the_report_to_stderr(project):
    done = tinker_lint("--fix", "--stdin-filename", "src/train.py", "-", stdin=CODE, cwd=project)
    assert (done.returncode, done.stdout) == (0, FIXED)
    assert done.stderr == "Found 1 error (1 fixed, 0 remaining) in 1 file checked.\n"
    # Nothing to fix: the text comes back as it was.
    done = tinker_lint("--fix", "--stdin-filename", "src/clean.py", "-", stdin=FIXED, cwd=project)
    assert (done.returncode, done.stdout) == (0, FIXED)


@pytest.mark.slow
def test_diff_from_stdin(project):
    done = tinker_lint("--diff", "--stdin-filename", "src/train.py", stdin=CODE, cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines()[:2] == ["--- src/train.py", "+++ src/train.py"]
    assert "+    return tc.forward_backward(batch, 'cross_entropy')" in done.stdout


def test_a_dependency_file_name_is_judged_as_one(project):
    done = tinker_lint(
        "--output-format",
        "concise",
        "--stdin-filename",
        "requirements.txt",
        stdin="transformers==5.3.0\n",
        cwd=project,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("requirements.txt:1:1: TNK302 ")


@pytest.mark.slow
def test_force_exclude_applies_to_the_name(project):
    """The fix hook of an editor or pre-commit: an excluded name is left as it is."""
    with (project / "pyproject.toml").open("a") as config:
        config.write('exclude = ["generated/*"]\n')
    args = ("--force-exclude", "--stdin-filename", "generated/train.py")
    done = tinker_lint("--fix", *args, stdin=CODE, cwd=project)
    assert (done.returncode, done.stdout) == (0, CODE)
    done = tinker_lint(*args, stdin=CODE, cwd=project)
    assert (done.returncode, done.stdout) == (0, "All checks passed! (0 files checked)\n")
    # Without --force-exclude, a name is checked as a file named on the command line is.
    assert (
        tinker_lint("--stdin-filename", "generated/train.py", stdin=CODE, cwd=project).returncode
        == 1
    )


def test_stdin_with_other_paths_is_a_usage_error(project):
    done = tinker_lint("-", "src", stdin=CODE, cwd=project)
    assert done.returncode == 2
    assert done.stderr == "tinker-lint: error: `-` (stdin) cannot be given with other paths\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_line_only_on_a_terminal(tmp_path, monkeypatch, capsys, terminal):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(FIXED)
    stderr = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(cli, "PROGRESS_AFTER_SECONDS", 0.0)  # as if the run were long already
    assert cli.main(["--isolated", "--no-cache", "--jobs", "1", str(tmp_path)]) == 0
    if terminal:
        shown = stderr.getvalue()
        assert shown.startswith("\rtinker-lint: 1/3 files checked")
        assert "\rtinker-lint: 3/3 files checked" in shown
        assert shown.endswith("\r\x1b[K")  # erased: the report is what stays
    else:
        assert stderr.getvalue() == ""


def test_no_progress_line_for_a_short_run(tmp_path, monkeypatch):
    (tmp_path / "m.py").write_text(FIXED)
    stderr = _Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert cli.main(["--isolated", "--no-cache", str(tmp_path)]) == 0
    assert stderr.getvalue() == ""
