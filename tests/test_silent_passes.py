"""Nothing passes in silence (issue 13, item 8): a file too large to analyse is a finding (TNK003),
in every format and in SARIF's tool notifications, and fails the run; selecting no rule, naming
only paths that cannot be read, or a first path whose directory cannot be looked into is a usage
error (exit 2) with a clear message; an empty directory says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.robustness_support import without_read_permission
from tinker_lint.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())

# TNK101 at 5:66 when analysed.
LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(adam)
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["--isolated", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def loop(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("loop.py").write_text(LOOP)
    return Path("loop.py")


def test_a_file_over_the_limit_is_a_finding_and_fails_the_run(loop, capsys):
    code, out, err = run(capsys, "--output-format", "concise", "--max-file-chars", "100", "loop.py")
    assert code == 1
    assert out.splitlines() == [
        f"loop.py:1:1: TNK003 Not analysed: {len(LOOP)} characters, more than the 100 tinker-lint "
        "analyses (`--max-file-chars`); only its syntax was checked",
        "Found 1 error in 1 file checked.",
    ]
    assert err == ""
    # The limit is the setting's: 0 lifts it, and the file is analysed.
    code, out, _ = run(capsys, "--output-format", "concise", "--max-file-chars", "0", "loop.py")
    assert code == 1
    assert out.splitlines()[0].startswith("loop.py:5:66: TNK101 ")


def test_deselected_tnk003_still_says_so_on_stderr(loop, capsys):
    code, out, err = run(capsys, "--max-file-chars", "100", "--ignore", "TNK003", "loop.py")
    assert (code, out) == (0, "All checks passed! (1 file checked)\n")
    assert err == (
        f"tinker-lint: warning: loop.py: not analysed: {len(LOOP)} characters, more than the 100 "
        "tinker-lint analyses (`--max-file-chars`); only its syntax was checked\n"
    )


def test_sarif_shows_the_file_not_analysed(loop, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", "--max-file-chars", "100", "loop.py")
    assert code == 1
    document = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    (sarif_run,) = document["runs"]
    (result,) = sarif_run["results"]
    assert (result["ruleId"], result["level"]) == ("TNK003", "warning")
    (invocation,) = sarif_run["invocations"]
    (note,) = invocation["toolExecutionNotifications"]
    assert note["descriptor"] == {"id": "TNK003"}
    assert note["level"] == "warning"
    assert note["message"]["text"].startswith(f"loop.py: Not analysed: {len(LOOP)} characters")
    where = note["locations"][0]["physicalLocation"]["artifactLocation"]
    assert where == {"uri": "loop.py", "uriBaseId": "%SRCROOT%"}


def test_sarif_lists_the_runs_warnings_as_notifications(loop, capsys):
    os.symlink("nowhere.py", "dangling.py")
    code, out, _ = run(capsys, "--output-format", "sarif", "loop.py", "dangling.py")
    assert code == 1
    document = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    notes = document["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes == [
        {
            "level": "warning",
            "message": {
                "text": "dangling.py: skipped: broken symbolic link (its target is missing, or a "
                "loop)"
            },
        }
    ]


def test_selecting_no_rule_is_a_usage_error(loop, capsys):
    code, out, err = run(capsys, "--select", "", "loop.py")
    assert (code, out) == (2, "")
    assert err == (
        "tinker-lint: error: no rule selected: the select and ignore settings leave nothing to "
        "check\n"
    )
    code, _, err = run(capsys, "--select", "TNK101", "--ignore", "TNK101", "loop.py")
    assert code == 2 and "no rule selected" in err


def test_a_named_dangling_symlink_is_a_usage_error(loop, capsys):
    os.symlink("nowhere.py", "dangling.py")
    code, out, err = run(capsys, "dangling.py")
    assert (code, out) == (2, "")
    assert err == (
        "tinker-lint: warning: dangling.py: skipped: broken symbolic link (its target is missing, "
        "or a loop)\n"
        "tinker-lint: error: nothing was checked: dangling.py cannot be read\n"
    )
    # Beside a file that is checked, it is a warning, as a missing path is.
    code, out, err = run(capsys, "--output-format", "concise", "dangling.py", "loop.py")
    assert code == 1 and out.startswith("loop.py:5:66: TNK101 ")
    assert "error" not in err


def test_an_empty_directory_says_so_and_passes(tmp_path, capsys):
    """As ruff ("No Python files found under the given path(s)"), exit 0: nothing was left
    unchecked, and a tree with everything excluded (a pre-commit run, a CI matrix entry) must
    not fail; but it is said, so that a mistyped path is noticed."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not Python\n")
    code, out, err = run(capsys, str(tmp_path / "empty"))
    assert (code, out) == (0, "All checks passed! (0 files checked)\n")
    assert err == (
        f"tinker-lint: warning: no Python, notebook or dependency files found under {tmp_path / 'empty'}\n"
    )


@pytest.mark.parametrize("named", ["closed", "closed/inside.py"])
def test_an_unreadable_first_path_is_a_clear_error(tmp_path, named):
    """Not "internal error, please report it": looking for the configuration beside the path
    fails, and that is said as such (the configuration is looked for, so no --isolated)."""
    prefix = without_read_permission()
    if prefix is None:
        pytest.skip("running as root without setpriv: cannot make a directory unreadable")
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "inside.py").write_text(LOOP)
    closed.chmod(0)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "tinker_lint", "--no-cache", named],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        closed.chmod(0o700)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"tinker-lint: error: {named}: cannot be read (")
    assert done.stderr.endswith("Permission denied)\n")
    assert "internal error" not in done.stderr
