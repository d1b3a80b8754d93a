"""ruff's names for what tinker-lint already does (issue 28, item 5): ``--output-format full`` is
``text``; ``-q``/``--quiet`` prints the findings and errors only, as ``ruff check -q``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinker_lint.cli import main

LOOP = (
    "import tinker\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
    "    tc.optim_step(adam)  # noqa: TNK999\n"
)
WARNING = "tinker-lint: warning: loop.py:5: unknown rule code `TNK999`"


@pytest.fixture
def loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("loop.py").write_text(LOOP)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--isolated", "--no-cache", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_full_is_text(loop: None, capsys) -> None:
    assert run(capsys, "--output-format", "full", "loop.py") == run(capsys, "loop.py")
    code, out, _ = run(capsys, "--output-format", "full", "loop.py")
    assert code == 1
    assert "    result = tc.forward_backward(" in out  # the source lines under the finding


def test_quiet_prints_the_findings_alone(loop: None, capsys) -> None:
    code, out, err = run(capsys, "--output-format", "concise", "loop.py")
    assert code == 1
    assert out.splitlines()[1:] == [
        "Found 1 error in 1 file checked.",
        "[*] 1 fixable with the `--fix` option.",
    ]
    assert err.startswith(WARNING)
    finding = out.splitlines()[0]
    assert finding.startswith("loop.py:4:66: TNK101 [*] ")
    assert run(capsys, "--output-format", "concise", "--quiet", "loop.py") == (
        1,
        finding + "\n",
        "",
    )
    assert run(capsys, "-q", "--output-format", "concise", "loop.py") == (1, finding + "\n", "")


def test_quiet_on_a_clean_file_prints_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("clean.py").write_text("x = 1\n")
    assert run(capsys, "-q", "clean.py") == (0, "", "")


def test_quiet_still_says_when_nothing_could_be_checked(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "-q", "missing.py") == (
        2,
        "",
        "tinker-lint: error: nothing was checked: missing.py cannot be read\n",
    )
