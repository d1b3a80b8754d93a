"""``tinker-lint check PATH`` as ``ruff check``, ``tinker-lint PATH`` as before, and no subcommand
swallows a path: a project folder named ``clean`` (or ``rule``, ``doctor``, ``trace``, ``server``)
was taken for the subcommand, and ``tinker-lint clean`` exited 0 having checked nothing (issue 28,
item 2). A word that is both is refused with both spellings (docs/configuration.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.cli import SUBCOMMANDS, main

LOOP = WAIT_BEFORE_SUBMIT


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _findings(out: str) -> list[str]:
    return [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in out.splitlines()[:-2]]


def lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--isolated", "--no-cache", "--output-format", "concise", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_lints_as_the_bare_form_does(project: Path, capsys) -> None:
    Path("train.py").write_text(LOOP)
    bare = main(["--isolated", "--no-cache", "--output-format", "concise", "train.py"])
    bare_out = capsys.readouterr().out
    checked = main(["check", "--isolated", "--no-cache", "--output-format", "concise", "train.py"])
    assert (checked, capsys.readouterr().out) == (bare, bare_out)
    assert bare == 1
    assert _findings(bare_out) == ["train.py:4:66: TNK101"]


@pytest.mark.parametrize("word", sorted(SUBCOMMANDS))
def test_a_folder_named_like_a_subcommand_is_refused_not_swallowed(
    project: Path, capsys, word: str
) -> None:
    Path(word).mkdir()
    Path(word, "train.py").write_text(LOOP)
    assert main([word]) == 2
    assert capsys.readouterr().err == (
        f"tinker-lint: error: `{word}` is both a subcommand and a path here: write "
        f"`tinker-lint check {word}` to check the path, or `tinker-lint {word} --` to run the "
        "subcommand\n"
    )
    code = main(["check", "--isolated", "--no-cache", "--output-format", "concise", word])
    assert code == 1
    assert _findings(capsys.readouterr().out) == [f"{word}/train.py:4:66: TNK101"]


def test_the_path_spelt_as_a_path_is_checked(project: Path, capsys) -> None:
    Path("clean").mkdir()
    Path("clean", "train.py").write_text(LOOP)
    code = main(["--isolated", "--no-cache", "--output-format", "concise", "./clean"])
    assert code == 1
    assert _findings(capsys.readouterr().out) == ["clean/train.py:4:66: TNK101"]


def test_the_subcommand_with_a_double_dash_runs_whatever_is_here(project: Path, capsys) -> None:
    Path("clean").mkdir()
    Path("clean", "train.py").write_text(LOOP)
    assert main(["check", "--isolated", "--output-format", "concise", "clean"]) == 1
    assert Path(".tinker_lint_cache").is_dir()  # the lint's results cache
    capsys.readouterr()
    assert main(["clean", "--"]) == 0
    assert capsys.readouterr().out == f"Removed {project / '.tinker_lint_cache'}\n"
    assert not Path(".tinker_lint_cache").exists()
    assert Path("clean", "train.py").read_text() == LOOP


def test_a_subcommand_argument_that_is_no_path_says_which_is_meant(project: Path, capsys) -> None:
    """``rule TNK101``: TNK101 is no path, so only the subcommand reads it."""
    Path("rule").mkdir()
    assert main(["rule", "TNK101"]) == 0
    assert capsys.readouterr().out.startswith("# TNK101: wait-before-submit\n")


def test_without_such_a_path_the_subcommand_runs_as_before(project: Path, capsys) -> None:
    assert main(["rule", "TNK101"]) == 0
    assert capsys.readouterr().out.startswith("# TNK101: wait-before-submit\n")


def test_the_console_script_refuses_the_ambiguous_word(project: Path) -> None:
    Path("trace").mkdir()
    Path("trace", "train.py").write_text(LOOP)
    done = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "trace"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert "`tinker-lint check trace` to check the path" in done.stderr
