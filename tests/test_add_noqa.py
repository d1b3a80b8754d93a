"""``tinker-lint --add-noqa``, as ``ruff check --add-noqa``: a directive on each line with a
finding (merged into one there), idempotent, the file written safely; then nothing is reported."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tinker_lint.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HEAD = (
    "import tinker\n"
    "\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
)
WAIT = '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()'
STEP = "    tc.optim_step(adam).result()"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["--isolated", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_each_line_gets_its_codes_sorted_and_a_second_run_changes_nothing(capsys):
    program = (
        HEAD
        + f"    service = tinker.ServiceClient(); {WAIT.strip()}\n"  # TNK107 and TNK101
        + f"{STEP}; {WAIT.strip()}\n"  # two TNK101: one code
        + f"{WAIT}  # noqa: E501\n"  # merged into the directive there
        + f"{STEP}  # noqa\n"  # a blanket noqa silences it already
        + f"{WAIT}  # the wait\n"  # after the comment there
        + "    tc.optim_step(adam)\n"
    )
    Path("train.py").write_text(program)
    code, out, _ = run(capsys, "--output-format", "concise", "train.py")
    assert code == 1
    assert [line.split(" ")[:2] for line in out.splitlines()[:-2]] == [
        ["train.py:5:15:", "TNK107"],
        ["train.py:5:100:", "TNK101"],
        ["train.py:6:25:", "TNK101"],
        ["train.py:6:96:", "TNK101"],
        ["train.py:7:66:", "TNK101"],
        ["train.py:9:66:", "TNK101"],
    ]
    assert run(capsys, "--add-noqa", "train.py") == (0, "", "Added 4 noqa directives.\n")
    assert Path("train.py").read_text() == (
        HEAD
        + f"    service = tinker.ServiceClient(); {WAIT.strip()}  # noqa: TNK101, TNK107\n"
        + f"{STEP}; {WAIT.strip()}  # noqa: TNK101\n"
        + f"{WAIT}  # noqa: E501, TNK101\n"
        + f"{STEP}  # noqa\n"
        + f"{WAIT}  # the wait  # noqa: TNK101\n"
        + "    tc.optim_step(adam)\n"
    )
    before = Path("train.py").read_bytes()
    assert run(capsys, "--add-noqa", "train.py") == (0, "", "")
    assert Path("train.py").read_bytes() == before
    assert run(capsys, "train.py") == (0, "All checks passed! (1 file checked)\n", "")


def test_a_multi_line_string_or_continuation_gets_it_where_it_ends(capsys):
    """Where ruff puts it, and where both front ends read it."""
    Path("train.py").write_text(
        HEAD
        + f'{WAIT}; note = """\n'
        + '    waited on purpose"""\n'
        + "    tc.optim_step(adam)\n"
        + f"{WAIT} or \\\n"
        + "        None\n"
        + "    tc.optim_step(adam)\n"
    )
    assert run(capsys, "--add-noqa", "train.py") == (0, "", "Added 2 noqa directives.\n")
    assert Path("train.py").read_text() == (
        HEAD
        + f'{WAIT}; note = """\n'
        + '    waited on purpose"""  # noqa: TNK101\n'
        + "    tc.optim_step(adam)\n"
        + f"{WAIT} or \\\n"
        + "        None  # noqa: TNK101\n"
        + "    tc.optim_step(adam)\n"
    )
    assert run(capsys, "train.py")[0] == 0


def test_line_ends_bom_and_encoding_are_kept_and_a_symlink_stays_one(capsys):
    program = (HEAD + WAIT + "\n    tc.optim_step(adam)\n").replace("\n", "\r\n")
    raw = "\ufeff".encode() + program.replace("tc = ", "tç = 1; tc = ").encode()
    Path("real.py").write_bytes(raw)
    os.symlink("real.py", "link.py")
    assert run(capsys, "--add-noqa", "link.py") == (0, "", "Added 1 noqa directive.\n")
    assert os.path.islink("link.py")
    assert Path("real.py").read_bytes() == raw.replace(
        b".result()\r\n    tc.optim", b".result()  # noqa: TNK101\r\n    tc.optim"
    )


def test_a_noqa_inside_a_string_is_not_extended(capsys):
    """flake8 and the command read the line's first ``# noqa``, here in a string: the codes added
    there would change the string. The line is named, and the file left as it was."""
    program = HEAD + f'{WAIT}; label = "see # noqa: E501 above"\n' + "    tc.optim_step(adam)\n"
    Path("train.py").write_text(program)
    code, out, err = run(capsys, "--add-noqa", "train.py")
    assert (code, out) == (0, "")
    assert err == (
        "tinker-lint: warning: train.py:5: no noqa directive added: the noqa directive on that "
        "line is inside a string, not a comment\n"
    )
    assert Path("train.py").read_text() == program


def test_dependency_files(capsys):
    Path("requirements.txt").write_text(
        "pydantic==2.13.0b1\n"
        "transformers==5.3.0  # pinned for the tokenizer\n"
        "pydantic==2.13.0b2 \\\n"
        "    --hash=sha256:00\n"
    )
    pyproject = '[project]\nname = "demo"\ndependencies = [\n    "pydantic==2.13.0b1",\n]\n'
    Path("pyproject.toml").write_text(pyproject)
    Path("setup.cfg").write_text("[options]\ninstall_requires =\n    pydantic==2.13.0b1\n")
    code, out, err = run(capsys, "--output-format", "concise", ".")
    assert code == 1
    assert [line.split(" ")[:2] for line in out.splitlines()[:-1]] == [
        ["pyproject.toml:4:6:", "TNK301"],
        ["requirements.txt:1:1:", "TNK301"],
        ["requirements.txt:2:1:", "TNK302"],
        ["requirements.txt:3:1:", "TNK301"],
        ["setup.cfg:3:5:", "TNK301"],
    ]
    code, out, err = run(capsys, "--add-noqa", ".")
    assert (code, out) == (0, "")
    assert err.splitlines() == [
        "tinker-lint: warning: requirements.txt:3: no noqa directive added: the line goes on "
        "after a backslash",
        "tinker-lint: warning: setup.cfg: skipped by --add-noqa: setuptools reads a comment after "
        "a requirement as part of it",
        "Added 3 noqa directives.",
    ]
    assert Path("requirements.txt").read_text() == (
        "pydantic==2.13.0b1  # noqa: TNK301\n"
        "transformers==5.3.0  # pinned for the tokenizer  # noqa: TNK302\n"
        "pydantic==2.13.0b2 \\\n"
        "    --hash=sha256:00\n"
    )
    written = Path("pyproject.toml").read_text()
    assert written == pyproject.replace('b1",\n', 'b1",  # noqa: TNK301\n')
    assert tomllib.loads(written) == tomllib.loads(pyproject)
    code, out, _ = run(capsys, "--output-format", "json", ".")
    assert [(d["filename"], d["location"]["row"]) for d in json.loads(out)] == [
        ("requirements.txt", 3),
        ("setup.cfg", 3),
    ]


def test_a_notebook_is_skipped_with_a_reason(capsys):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    source = HEAD + WAIT + "\n    tc.optim_step(adam)\n"
    notebook = {
        "cells": [dict(cell, source=source.splitlines(keepends=True))],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    Path("nb.ipynb").write_text(json.dumps(notebook))
    before = Path("nb.ipynb").read_bytes()
    assert run(capsys, "--add-noqa", "nb.ipynb") == (
        0,
        "",
        "tinker-lint: warning: nb.ipynb: skipped by --add-noqa: notebooks are not edited (add "
        "the comments in the notebook)\n",
    )
    assert Path("nb.ipynb").read_bytes() == before


@pytest.mark.parametrize("other", [["--fix"], ["--diff"], ["-"]])
def test_it_is_not_combined_with_fixing_or_stdin(capsys, other):
    Path("train.py").write_text(HEAD + WAIT + "\n    tc.optim_step(adam)\n")
    paths = [] if other == ["-"] else ["train.py"]
    assert run(capsys, "--add-noqa", *other, *paths) == (
        2,
        "",
        "tinker-lint: error: --add-noqa cannot be used with --fix, --diff or -\n",
    )
