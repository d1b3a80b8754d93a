"""A file Python compiles and libcst cannot parse does not pass (issue 29, item 4): 4,000 adjacent
string literals (CPython's parser takes them, libcst's native parser gives up) are a finding,
TNK003 with the reason, in every output format and in the flake8 plugin, and the run exits 1; the
reason libcst gave is the finding's help. With TNK003 deselected, it is still said on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.cli import main

# CPython compiles it; libcst's parser stops at the closing bracket.
ADJACENT = "x = (" + " ".join(['"a"'] * 4000) + ")\n" + WAIT_BEFORE_SUBMIT
MESSAGE = "Not analysed: libcst cannot parse it, though Python can; only its syntax was checked"
HELP = "libcst's parser stops at 2:16006: parser error: error at 1:16005: expected one of STRING"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["--isolated", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def adjacent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compile(ADJACENT, "adj.py", "exec")  # valid Python
    Path("adj.py").write_text(ADJACENT)
    return Path("adj.py")


def test_a_file_libcst_cannot_parse_is_a_finding_and_fails_the_run(adjacent, capsys):
    code, out, err = run(capsys, "--output-format", "concise", "adj.py")
    assert (code, err) == (1, "")
    assert out.splitlines() == [f"adj.py:1:1: TNK003 {MESSAGE}", "Found 1 error in 1 file checked."]


def test_the_reason_is_the_findings_help(adjacent, capsys):
    code, out, err = run(capsys, "--output-format", "full", "adj.py")
    assert (code, err) == (1, "")
    assert out.splitlines()[0] == f"adj.py:1:1: TNK003 {MESSAGE}"
    assert f"  = help: {HELP}," in out


@pytest.mark.parametrize("form", ["json", "sarif", "github", "text"])
def test_every_format_shows_it(adjacent, capsys, form):
    code, out, err = run(capsys, "--output-format", form, "adj.py")
    assert (code, err) == (1, "")
    if form == "json":
        (found,) = json.loads(out)
        assert (found["code"], found["level"], found["message"]) == ("TNK003", "warning", MESSAGE)
    elif form == "sarif":
        (result,) = json.loads(out)["runs"][0]["results"]
        assert (result["ruleId"], result["level"]) == ("TNK003", "warning")
        assert result["message"]["text"].startswith(MESSAGE)
    else:
        assert MESSAGE in out


def test_deselected_it_is_still_said_on_stderr(adjacent, capsys):
    code, out, err = run(capsys, "--output-format", "concise", "--ignore", "TNK003", "adj.py")
    assert (code, out) == (0, "All checks passed! (1 file checked)\n")
    assert err == (
        "tinker-lint: warning: adj.py: not analysed: libcst cannot parse it, though Python can "
        f'({HELP}, f", t")\n'
    )


@pytest.mark.slow
def test_the_flake8_plugin_reports_it(adjacent):
    run = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "TNK", "adj.py"],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (run.returncode, run.stdout, run.stderr) == (1, f"adj.py:1:1: TNK003 {MESSAGE}\n", "")
