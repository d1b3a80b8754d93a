"""Each real file is linted once, and only files under the paths given are written (issue 29,
item 3): a file named twice, or reached through a symlink as well as by its own name, is reported
once; a symlink to a file outside the paths given is linted (as ruff) but never written by
``--fix`` or ``--add-noqa`` (as black leaves it), and the run says so. A symlink named on the
command line is its own root: its target is what was asked for (as black and ruff)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.cli import main

TNK101 = (
    "TNK101 [*] Waiting for `forward_backward` before submitting `optim_step`, which does not "
    "need it"
)
OUTSIDE_LINK = (
    "tinker-lint: warning: tree/link.py: {what}: a symbolic link to ../outside/t.py, outside the "
    "paths given\n"
)


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    code = main(["--isolated", "--no-cache", "--output-format", "concise", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """tree/a.py (one TNK101), tree/0alias.py -> a.py (found first), tree/link.py ->
    ../outside/t.py (one TNK101)."""
    monkeypatch.chdir(tmp_path)
    Path("tree").mkdir()
    Path("outside").mkdir()
    Path("tree/a.py").write_text(WAIT_BEFORE_SUBMIT)
    Path("outside/t.py").write_text(WAIT_BEFORE_SUBMIT)
    os.symlink("a.py", "tree/0alias.py")
    os.symlink("../outside/t.py", "tree/link.py")
    return Path("tree")


def test_a_symlink_and_its_target_are_reported_once_under_the_files_own_name(tree, capsys):
    code, out, err = run(capsys, "tree")
    assert (code, err) == (1, "")
    assert out == [
        f"tree/a.py:4:66: {TNK101}",
        f"tree/link.py:4:66: {TNK101}",  # outside the tree: linted, as ruff does
        "Found 2 errors in 2 files checked.",
        "[*] 2 fixable with the `--fix` option.",
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ("tree/a.py", "tree/a.py"),
        ("tree/a.py", "./tree/a.py"),
        ("tree/0alias.py", "tree/a.py"),
        ("tree/a.py", "tree/0alias.py"),
    ],
)
def test_a_file_named_twice_is_reported_once(tree, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert (code, err) == (1, "")
    assert out == [
        f"tree/a.py:4:66: {TNK101}",
        "Found 1 error in 1 file checked.",
        "[*] 1 fixable with the `--fix` option.",
    ]


def test_a_directory_and_a_file_in_it_are_reported_once(tree, capsys):
    code, out, err = run(capsys, "tree", "tree/a.py", "tree/link.py", "tree")
    assert (code, err) == (1, "")
    assert out == [
        f"tree/a.py:4:66: {TNK101}",
        f"tree/link.py:4:66: {TNK101}",
        "Found 2 errors in 2 files checked.",
        "[*] 2 fixable with the `--fix` option.",
    ]


def test_fix_never_writes_through_a_symlink_to_a_file_outside_the_paths_given(tree, capsys):
    code, out, err = run(capsys, "--fix", "tree")
    assert code == 1
    # The file and its alias: fixed once, no "changed on disk" (it was read only once).
    assert err == OUTSIDE_LINK.format(what="not fixed")
    assert out == [
        "tree/a.py:6:28: TNK102 Each step waits for its own results before the next is submitted",
        f"tree/link.py:4:66: {TNK101}",
        "Found 3 errors (1 fixed, 2 remaining) in 2 files checked.",
        "[*] 1 fixable with the `--fix` option.",
    ]
    assert Path("outside/t.py").read_text() == WAIT_BEFORE_SUBMIT
    assert Path("tree/a.py").read_text() != WAIT_BEFORE_SUBMIT
    assert os.path.islink("tree/link.py") and os.path.islink("tree/0alias.py")


def test_diff_shows_no_change_to_a_symlink_to_a_file_outside(tree, capsys):
    code, out, err = run(capsys, "--diff", "tree")
    assert code == 1
    assert err == OUTSIDE_LINK.format(what="not fixed") + "Would fix 1 error.\n"
    assert [line for line in out if line.startswith(("--- ", "+++ "))] == [
        "--- tree/a.py",
        "+++ tree/a.py",
    ]
    # Named, the link is its own root: its target's diff is shown, under the link's name.
    code, out, err = run(capsys, "--diff", "tree/link.py", "tree")
    assert err == "Would fix 2 errors.\n"
    assert [line for line in out if line.startswith("+++ ")] == [
        "+++ tree/link.py",
        "+++ tree/a.py",
    ]


def test_add_noqa_never_writes_through_a_symlink_to_a_file_outside(tree, capsys):
    code, out, err = run(capsys, "--add-noqa", "tree")
    assert (code, out) == (0, [])
    assert err == OUTSIDE_LINK.format(what="not changed by --add-noqa") + (
        "Added 1 noqa directive.\n"
    )
    assert Path("outside/t.py").read_text() == WAIT_BEFORE_SUBMIT
    assert Path("tree/a.py").read_text() == WAIT_BEFORE_SUBMIT.replace(
        ".result()\n    tc.optim", ".result()  # noqa: TNK101\n    tc.optim"
    )


def test_a_symlink_named_is_its_own_root_and_its_target_is_fixed(tree, capsys):
    """As black and ruff: naming the link asks for its target (which stays where it is)."""
    code, out, err = run(capsys, "--fix", "tree/link.py")
    assert (code, err) == (1, "")
    assert out[-1] == "Found 2 errors (1 fixed, 1 remaining) in 1 file checked."
    assert Path("outside/t.py").read_text() != WAIT_BEFORE_SUBMIT
    assert os.path.islink("tree/link.py")


def test_a_symlink_to_a_file_inside_another_path_given_is_fixed(tree, capsys):
    Path("outside/t.py").rename("outside/t.txt")  # not found by its own name in outside/
    os.remove("tree/link.py")
    os.symlink("../outside/t.txt", "tree/link.py")
    code, out, err = run(capsys, "--fix", "tree", "outside")
    assert (code, err) == (1, "")
    assert out[-1] == "Found 4 errors (2 fixed, 2 remaining) in 2 files checked."
    assert Path("outside/t.txt").read_text() != WAIT_BEFORE_SUBMIT


def test_hard_links_are_one_file_reported_once(tree, capsys):
    os.link("tree/a.py", "tree/b.py")
    code, out, err = run(capsys, "tree/b.py", "tree")
    assert (code, err) == (1, "")
    assert out[:-2] == [f"tree/b.py:4:66: {TNK101}", f"tree/link.py:4:66: {TNK101}"]
