"""Crafted input is a clear message and an exit code, never an internal error that loses the whole
report (issue 29, item 8): TOML nested past tomllib's recursion, version numbers longer than
``int()`` reads, and an endless stdin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.cli import STDIN_LIMIT, main

DEEP = 100_000  # tomllib recurses once per level: far past the interpreter's limit


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("a.py").write_text("x = 1\n")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--no-cache", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_configuration_nested_too_deeply_is_invalid_toml(project: Path, capsys) -> None:
    Path("pyproject.toml").write_text(
        "[tool.tinker-lint]\nselect = " + "[" * DEEP + "]" * DEEP + "\n"
    )
    assert run(capsys, "a.py") == (
        2,
        "",
        "tinker-lint: error: pyproject.toml: invalid TOML: values nested too deeply\n",
    )


def test_a_dependency_file_nested_too_deeply_is_skipped_with_the_reason(project: Path, capsys):
    Path("pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["transformers==4.0"]\n'
        "x = " + "[" * DEEP + "]" * DEEP + "\n"
    )
    assert run(capsys, "--isolated", ".") == (
        0,
        "All checks passed! (2 files checked)\n",
        "tinker-lint: warning: pyproject.toml: cannot parse, skipped: values nested too deeply\n",
    )


def test_a_target_version_of_millions_of_digits_is_a_short_error(project: Path, capsys) -> None:
    digits = "1" * 5_000_000
    Path("pyproject.toml").write_text(f'[tool.tinker-lint]\ntinker-version = "{digits}"\n')
    assert run(capsys, "a.py") == (
        2,
        "",
        "tinker-lint: error: pyproject.toml [tool.tinker-lint]: `tinker-version`: invalid version "
        f"'{digits[:40]}... (5,000,000 characters)' (expected e.g. 0.38)\n",
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements.txt", "tinker==" + "1" * 50_000 + "\n"),
        ("pyproject.toml", f'[project]\nname = "p"\ndependencies = ["tinker=={"1" * 50_000}"]\n'),
    ],
)
def test_a_pin_longer_than_int_reads_pins_nothing(project: Path, capsys, name, text) -> None:
    """packaging raises a plain ValueError past 4,300 digits, not InvalidVersion."""
    Path(name).write_text(text)
    assert run(capsys, "--isolated", ".") == (0, "All checks passed! (2 files checked)\n", "")


def test_an_endless_stdin_is_refused_after_the_limit(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--isolated", "--no-cache", "-"],
        input=b"\0" * (STDIN_LIMIT + 1),
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == (
        b"tinker-lint: error: -: more than 64 MiB on stdin, which no source file is; name the "
        b"file instead\n"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_dependency_files_that_are_no_regular_files_are_skipped_not_read(tmp_path: Path) -> None:
    """A link to /dev/zero named requirements.txt was read forever; a FIFO waited for a writer."""
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "requirements.txt").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "requirements-dev.txt")
    (tmp_path / "requirements-x.txt").write_text("-r /dev/zero\ntinker==0.36\n")
    done = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--isolated", "--no-cache", "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    never = "not a regular file (a FIFO, socket or device is never read)"
    assert (done.returncode, done.stdout) == (0, "All checks passed! (4 files checked)\n")
    assert done.stderr.splitlines() == [
        f"tinker-lint: warning: requirements-dev.txt: cannot read: {never}",
        f"tinker-lint: warning: requirements-x.txt: cannot read /dev/zero: {never}",
        f"tinker-lint: warning: requirements.txt: cannot read: {never}",
    ]


def test_a_file_name_with_an_escape_sequence_is_printed_escaped(project: Path, capsys) -> None:
    """A finding's path comes from the tree linted: ``a\\x1b[2Jb.py`` must not clear the screen."""
    Path("a\x1b[2Jb.py").write_text(WAIT_BEFORE_SUBMIT)
    code, out, _ = run(capsys, "--isolated", "--output-format", "concise", "a\x1b[2Jb.py")
    assert code == 1
    assert out.splitlines()[0].startswith("a\\x1b[2Jb.py:4:66: TNK101 [*] ")
    assert "\x1b" not in out
