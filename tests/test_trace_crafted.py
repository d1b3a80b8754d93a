"""``tinker-lint trace`` on crafted or foreign input (issue 29, item 8): a folder of binary data is
not a run that measured zeros, a findings file that is a FIFO or JSON nested past the parser's
recursion is a clear error, and a negative duration is left out, not a share of -76.7%."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tinker_lint.cli import main


def trace(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["trace", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_folder_of_binary_data_is_no_run(tmp_path: Path, capsys) -> None:
    (tmp_path / "metrics.jsonl").write_bytes(bytes(range(256)) * 400)
    (tmp_path / "timing_spans.jsonl").write_bytes(b"\xff\xfe\x00garbage\n" * 50)
    assert trace(capsys, str(tmp_path)) == (
        2,
        "",
        f"tinker-lint trace: error: {tmp_path}: no readable record in metrics.jsonl, "
        "timing_spans.jsonl (not JSON lines)\n",
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text('{"step": 0, "time/total": 1.0}\n')
    return run


def test_findings_nested_too_deeply_are_an_error(tmp_path: Path, run_dir: Path, capsys) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text("[" * 100_000 + "]" * 100_000)
    assert trace(capsys, str(run_dir), "--findings", str(findings)) == (
        2,
        "",
        f"tinker-lint trace: error: {findings}: cannot read findings: JSON nested too deeply\n",
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_findings_from_a_fifo_are_refused_not_waited_for(
    tmp_path: Path, run_dir: Path, capsys
) -> None:
    fifo = tmp_path / "findings.json"
    os.mkfifo(fifo)
    assert trace(capsys, str(run_dir), "--findings", str(fifo)) == (
        2,
        "",
        f"tinker-lint trace: error: {fifo}: cannot read findings: not a regular file (a FIFO, "
        "socket or device is never read)\n",
    )


def test_a_negative_duration_is_left_out_and_said(run_dir: Path, capsys) -> None:
    (run_dir / "metrics.jsonl").write_text(
        '{"step": 0, "time/total": 1.0, "time/get_batch": 0.2}\n'
        '{"step": 1, "time/total": -1.3, "time/get_batch": 1.0}\n'
        '{"step": 2, "time/total": 1.0, "time/get_batch": 0.1}\n'
    )
    code, out, err = trace(capsys, str(run_dir))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == (
        "steps: 2 steps from 0; median step 1.000 s; warm-up: step 0 takes 1.00x the median; "
        "get_batch 15.0% of step time (metrics.jsonl time/total)"
    )
    assert lines[-2:] == ["health:", "  metrics.jsonl: 1 negative duration(s), left out"]


def test_max_bubbles_with_no_completions_is_not_a_pass(run_dir: Path, capsys) -> None:
    """No training-op completions: zero bubbles counted is no measurement (as --max-stalls)."""
    assert trace(capsys, str(run_dir))[0] == 0  # not asked: the report alone
    code, _, err = trace(capsys, str(run_dir), "--max-bubbles", "0", "--exit-zero")
    assert (code, err) == (
        2,
        f"tinker-lint trace: error: --max-bubbles 0: bubbles were not measured in {run_dir} (no "
        "training-op completions: capture/train_op.jsonl, or the recorder's spans in "
        "tinker_lint_runtime.jsonl, or leave out --max-bubbles)\n",
    )
