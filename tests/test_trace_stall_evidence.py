"""``tinker-lint trace`` says when stalls were not measured (issue 28, item 9): a log folder
without the watchdog's records (no runtime file, or the recorder's alone) lists stalls under
``not computable:`` instead of ``stalls: 0``, its JSON has ``"stalls": null`` with the reason, and
``--max-stalls N`` does not pass on nothing (exit 2). With the watchdog's start record and no
stall, ``stalls: 0`` is a measurement and ``--max-stalls 0`` passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trace_logs import TRACE_EPOCH_US, Loop
from tinker_lint.cli import main

NO_WATCHDOG = (
    "no watchdog records in tinker_lint_runtime.jsonl (the recorder's alone; the watchdog writes "
    "a clock_anchor when it starts): no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1"
)
NO_RUNTIME = "no tinker_lint_runtime.jsonl: no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["trace", *args])
    out, err = capsys.readouterr()
    return code, out, err


def not_measured(log_dir: Path, limit: int) -> str:
    return (
        f"tinker-lint trace: error: --max-stalls {limit}: stalls were not measured in {log_dir} "
        "(no watchdog records: run with TINKER_LINT_WATCHDOG=1 and its TINKER_LINT_WATCHDOG_OUT "
        "in the log folder, or leave out --max-stalls)\n"
    )


def recorder_only(tmp_path: Path) -> Path:
    # A pipelined loop (no bubble) whose runtime file holds only the recorder's spans.
    return Loop(3, pipelined=True).write(tmp_path / "run", capture=False, recorder=True)


def test_the_recorders_file_alone_lists_stalls_as_not_computable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``stalls: 0, 0.0 ms in all, longest 0.0 ms; GIL-hold dumps: 0`` and evidence L4."""
    log_dir = recorder_only(tmp_path)
    code, out, err = run(capsys, str(log_dir))
    assert (code, err) == (0, "")  # no gate was asked for, and there is no bubble
    lines = out.splitlines()
    assert lines[0] == (
        f"{log_dir}: evidence L0, L1, L2, L3 (metrics.jsonl, timing_spans.jsonl, "
        "trace_events.jsonl, tinker_lint_runtime.jsonl)"
    )
    assert [line for line in lines if line.startswith("stalls")] == []
    assert lines[-2:] == ["not computable:", f"  - {NO_WATCHDOG}"]


def test_json_marks_stalls_not_computable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(recorder_only(tmp_path)), "--output-format", "json")
    data = json.loads(out)
    assert code == 0
    assert (data["stalls"], data["not_computable"], data["evidence"]) == (
        None,
        [NO_WATCHDOG],
        ["L0", "L1", "L2", "L3"],
    )


@pytest.mark.parametrize("flags", [(), ("--exit-zero",), ("--output-format", "json")])
def test_max_stalls_does_not_pass_without_watchdog_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    log_dir = recorder_only(tmp_path)
    code, out, err = run(capsys, str(log_dir), "--max-stalls", "0", *flags)
    assert (code, err) == (2, not_measured(log_dir, 0))
    assert out  # the report is still written


def test_max_stalls_does_not_pass_without_a_runtime_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(3, pipelined=True).write(tmp_path / "run", anchor=False)
    code, out, err = run(capsys, str(log_dir), "--max-stalls", "3")
    assert (code, err) == (2, not_measured(log_dir, 3))
    assert out.splitlines()[-3:] == [
        "not computable:",
        "  - capture/train_op.jsonl is on the wall clock and no clock anchor was found "
        "(tinker_lint_runtime.jsonl): bubbles are not placed on the trace's timeline (no "
        "'completed in' span, no idle blame)",
        f"  - {NO_RUNTIME}",
    ]
    # Not asked for: the report says it, and the exit code is the bubbles' (none here).
    assert run(capsys, str(log_dir))[0] == 0


def test_a_watchdog_that_saw_no_stall_measures_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_dir = Loop(3, pipelined=True).write(tmp_path / "run", watchdog=True)
    code, out, err = run(capsys, str(log_dir), "--max-stalls", "0")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"{log_dir}: evidence L0, L1, L2, L3, L4 (")
    assert lines[-1] == "stalls: 0, 0.0 ms in all, longest 0.0 ms; GIL-hold dumps: 0"
    code, out, _ = run(capsys, str(log_dir), "--output-format", "json")
    stalls = json.loads(out)["stalls"]
    assert (code, stalls["count"], json.loads(out)["not_computable"]) == (0, 0, [])


def stall(number: int, start: float, end: float) -> list[str]:
    """A stall of the main loop as the watchdog writes it (``Watchdog._stall_events``)."""
    args = {"track": "main"}
    common = {"stall": number, "label": "loop_blocked_sync", "holder": "MainThread"}
    begin = {"name": "stall", "ph": "B", "tid": 1, "ts": TRACE_EPOCH_US + start * 1e6}
    close = {"name": "stall", "ph": "E", "tid": 1, "ts": TRACE_EPOCH_US + end * 1e6}
    return [
        json.dumps({**begin, "args": args, "pid": 0, "cat": "tinker_lint"}),
        json.dumps({**close, "args": {**args, **common}, "pid": 0, "cat": "tinker_lint"}),
    ]


@pytest.mark.parametrize(("limit", "status"), [("0", 1), ("1", 1), ("2", 0)])
def test_stalls_are_counted_and_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: str, status: int
) -> None:
    log_dir = Loop(3, pipelined=True).write(tmp_path / "run", watchdog=True)
    with open(log_dir / "tinker_lint_runtime.jsonl", "a", encoding="utf-8") as runtime:
        runtime.writelines(line + "\n" for line in [*stall(1, 0.2, 0.6), *stall(2, 1.0, 1.3)])
    code, out, err = run(capsys, str(log_dir), "--max-stalls", limit)
    assert (code, err) == (status, "")
    assert out.splitlines()[-1] == "stalls: 2, 700.0 ms in all, longest 400.0 ms; GIL-hold dumps: 0"
