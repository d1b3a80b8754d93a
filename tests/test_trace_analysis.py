"""The analysis per evidence level, on hand-made loops with known figures (tests/trace_logs.py).

The serialized loop (4 steps of 0.6 s): get_batch 0.1 s, forward_backward submitted at +0.1 and
done at +0.4, optim_step submitted at +0.41 and done at +0.5, compute_metrics to +0.6. So every
submit but the first finds the queue empty (7 bubbles), the queue is empty 0.01 s per step and
0.2 s between steps (0.64 s of the 2.2 s from the first submit to the last completion).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.trace_logs import Loop, TraceWriter, write_lines
from tinker_lint.trace.analysis import NoLogs, analyse, read_log_dir, to_json

# Capture's epoch-second timestamps carry about 2.4e-7 s of rounding.
close = pytest.approx


def approx(value: object) -> object:
    return pytest.approx(value, abs=1e-6)


SERIALIZED_BLAME = {
    "get_batch": 0.3,  # the next step's batch, loaded with nothing queued (3 step boundaries)
    "compute_metrics": 0.285,  # 0.095 s x 3
    "train_step": 0.02,  # between that wait and the optim_step submit, 0.005 s x 4
    "wait_fwd": 0.02,  # the poll after forward_backward completed, 0.005 s x 4 (a tie: by name)
    "wait_optim": 0.015,  # 0.005 s x 3
}


def test_serialized_loop_at_every_level(tmp_path: Path) -> None:
    analysis = analyse(read_log_dir(Loop(4).write(tmp_path, watchdog=True)))
    assert analysis.levels == ["L0", "L1", "L2", "L3", "L4"]
    training = analysis.training
    assert training is not None
    assert training.concurrency.source.startswith("capture/train_op.jsonl (aligned")
    assert training.concurrency.max_depth == 1
    assert training.concurrency.profile == approx({0: 0.64, 1: 1.56})
    assert (training.window, training.nothing_queued) == approx((2.2, 0.64))
    assert len(training.bubbles) == 2 * 4 - 1
    assert [(b.op, b.previous, b.completed_in) for b in training.bubbles[:2]] == [
        ("optim_step", "forward_backward", "wait_fwd"),
        ("forward_backward", "optim_step", "wait_optim"),
    ]
    assert [b.turnaround for b in training.bubbles] == approx([0.01, 0.2] * 3 + [0.01])
    assert [b.submit for b in training.bubbles[:2]] == approx([0.41, 0.7])
    assert training.idle_blame == approx(SERIALIZED_BLAME)
    assert list(training.idle_blame or {}) == list(SERIALIZED_BLAME)  # largest first
    steps = analysis.steps
    assert steps is not None and steps.source == "timing_spans.jsonl step extent"
    assert (steps.median, steps.warmup_ratio, steps.get_batch_share) == approx((0.6, 1.0, 1 / 6))
    assert analysis.coverage == approx((2.4, 2.4))
    assert analysis.steps_covered == approx((2.38, 2.4))  # 0.005 s a step outside any span
    assert analysis.span_ranking[0] == ("wait_fwd", approx(1.22), 4)
    assert analysis.findings == 7
    assert analysis.not_computable == [] and analysis.health == {}


def test_the_recorder_spans_give_the_same_figures_without_capture(tmp_path: Path) -> None:
    analysis = analyse(read_log_dir(Loop(4).write(tmp_path, capture=False, recorder=True)))
    training = analysis.training
    assert training is not None
    assert training.concurrency.source == "tinker_lint_runtime.jsonl recorder spans"
    assert training.concurrency.profile == approx({0: 0.64, 1: 1.56})
    assert len(training.bubbles) == 7
    assert training.idle_blame == approx(SERIALIZED_BLAME)


def test_pipelined_loop_reaches_depth_two_and_has_no_bubble(tmp_path: Path) -> None:
    analysis = analyse(read_log_dir(Loop(4, pipelined=True).write(tmp_path)))
    training = analysis.training
    assert training is not None
    assert training.concurrency.max_depth == 3
    assert training.concurrency.profile == approx({1: 0.11, 2: 2.12, 3: 0.27})
    assert training.bubbles == () and training.nothing_queued == 0.0
    assert analysis.findings == 0


def test_capture_without_a_clock_anchor_counts_bubbles_but_cannot_place_them(
    tmp_path: Path,
) -> None:
    analysis = analyse(read_log_dir(Loop(4).write(tmp_path, anchor=False)))
    training = analysis.training
    assert training is not None and len(training.bubbles) == 7
    assert {b.completed_in for b in training.bubbles} == {None}
    assert training.idle_blame is None
    assert analysis.levels == ["L0", "L1", "L2", "L3"]
    assert analysis.not_computable == [
        "capture/train_op.jsonl is on the wall clock and no clock anchor was found "
        "(tinker_lint_runtime.jsonl): bubbles are not placed on the trace's timeline (no "
        "'completed in' span, no idle blame)",
        "no tinker_lint_runtime.jsonl: no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1",
    ]


def test_metrics_only_gives_step_time_share_and_warmup(tmp_path: Path) -> None:
    rows = [
        {"step": 0, "time/total": 3.0, "time/get_batch": 0.5},
        {"step": 1, "time/total": 1.0, "time/get_batch:total": 0.2, "time/get_batch:count": 2},
        {"step": 2, "time/total": 1.5, "time/get_batch": 0.3},
        {"step": 3, "time/total": 1.25},
    ]
    write_lines(tmp_path / "metrics.jsonl", [json.dumps(row) for row in rows])
    analysis = analyse(read_log_dir(tmp_path))
    assert analysis.levels == ["L0"]
    steps = analysis.steps
    assert steps is not None and steps.source == "metrics.jsonl time/total"
    assert steps.warmup_ratio == 3.0 / 1.25  # step 0 over the median of 1.0, 1.25, 1.5
    assert steps.get_batch_share == pytest.approx(1.0 / 5.5)  # steps with get_batch only
    assert analysis.training is None and analysis.findings == 0
    assert [line.split(":")[0] for line in analysis.not_computable] == [
        "no trace_events.jsonl",
        "no training-op completions (capture/train_op.jsonl, or the recorder's spans in "
        "tinker_lint_runtime.jsonl)",
        "no tinker_lint_runtime.jsonl",
    ]


def test_sl_metrics_without_time_total_say_what_is_missing(tmp_path: Path) -> None:
    write_lines(tmp_path / "metrics.jsonl", [json.dumps({"step": 0, "time/get_batch": 0.1})])
    analysis = analyse(read_log_dir(tmp_path))
    assert analysis.steps is None
    assert analysis.not_computable[0] == (
        "no time/total in metrics.jsonl (SL rows never have it) and no timing_spans.jsonl: "
        "no per-step time, get_batch share or warm-up"
    )


def test_sampling_concurrency_from_future_tracks(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("sampling", 0.0, 1.0)
    trace.future("sample", 0.0, 0.6)
    trace.future("sample", 0.1, 0.7)
    trace.future("sample", 0.2, 1.0)
    write_lines(tmp_path / "trace_events.jsonl", trace.lines())
    analysis = analyse(read_log_dir(tmp_path))
    sampling = analysis.sampling
    assert sampling is not None and sampling.max_depth == 3 and sampling.ops == 3
    assert sampling.profile == approx({1: 0.4, 2: 0.2, 3: 0.4})
    assert analysis.coverage == approx((1.0, 1.0))  # future tracks are not client time


def test_completion_timed_training_ops_on_future_tracks_are_a_level_three_source(
    tmp_path: Path,
) -> None:
    trace = TraceWriter()
    trace.span("train_step", 0.0, 2.0)
    trace.future("forward_backward", 0.1, 0.5)
    trace.future("optim_step", 0.9, 1.0)
    write_lines(tmp_path / "trace_events.jsonl", trace.lines())
    training = analyse(read_log_dir(tmp_path)).training
    assert (
        training is not None and training.concurrency.source == "trace_events.jsonl future tracks"
    )
    assert [(b.op, b.completed_in) for b in training.bubbles] == [("optim_step", "train_step")]
    assert training.nothing_queued == approx(0.4)


def test_stalls_from_the_runtime_file_are_findings(tmp_path: Path) -> None:
    events = [
        {"name": "stall", "ph": "B", "pid": 0, "tid": 1, "ts": 1e6, "args": {"track": "sdk"}},
        {"name": "stall", "ph": "E", "pid": 0, "tid": 1, "ts": 1.4e6, "args": {"track": "sdk"}},
        {"name": "watchdog_starved", "ph": "X", "pid": 0, "tid": 2, "ts": 2e6, "dur": 3e5},
        {"name": "gil_held_dump", "ph": "i", "pid": 0, "tid": 2, "ts": 2.2e6},
    ]
    write_lines(tmp_path / "tinker_lint_runtime.jsonl", [json.dumps(event) for event in events])
    analysis = analyse(read_log_dir(tmp_path))
    stalls = analysis.stalls
    assert stalls is not None
    assert (stalls.stalls, stalls.seconds, stalls.longest, stalls.gil_dumps) == approx(
        (2, 0.7, 0.4, 1)
    )
    assert analysis.findings == 2 and analysis.levels == ["L4"]


def test_a_stall_of_two_loops_and_the_watchdog_itself_is_one_stall(tmp_path: Path) -> None:
    # What the watchdog writes for one C call holding the GIL: a span per loop it stalled and its
    # own lateness, all numbered 1; then a second stall, of the main loop alone.
    def stall(track: str, tid: int, start: float, end: float, number: int) -> list[dict[str, Any]]:
        args = {"track": track, "stall": number}
        return [
            {"name": "stall", "ph": "B", "pid": 7, "tid": tid, "ts": start, "args": args},
            {"name": "stall", "ph": "E", "pid": 7, "tid": tid, "ts": end, "args": args},
        ]

    starved = {"ts": 1.1e6, "dur": 0.9e6, "args": {"stall": 1, "line": {"file": "t.py", "line": 9}}}
    events = [
        *stall("main", 1, 1.0e6, 2.1e6, 1),
        *stall("sdk", 2, 1.05e6, 2.0e6, 1),
        {"name": "watchdog_starved", "ph": "X", "pid": 7, "tid": 3, **starved},
        *stall("main", 1, 3.0e6, 3.5e6, 2),
    ]
    write_lines(tmp_path / "tinker_lint_runtime.jsonl", [json.dumps(event) for event in events])
    logs = read_log_dir(tmp_path)
    assert logs.runtime is not None
    assert [(s.start, s.end, s.lines, s.key) for s in logs.runtime.stalls] == [
        (1.0, 2.1, (("t.py", 9),), (0, 7, 1)),
        (3.0, 3.5, (), (0, 7, 2)),
    ]
    stalls = analyse(logs).stalls
    assert stalls is not None
    assert (stalls.stalls, stalls.seconds, stalls.longest) == approx((2, 1.6, 1.1))


def test_health_is_reported_per_file(tmp_path: Path) -> None:
    Loop(2).write(tmp_path)
    with (tmp_path / "trace_events.jsonl").open("a") as stream:
        stream.write('{"name": "train_step", "ph": "E", "pid": 0, "tid": 1, "ts": 9e15}\n{"na')
    analysis = analyse(read_log_dir(tmp_path))
    assert analysis.health == {
        "trace_events.jsonl": [
            "truncated last line (the run was killed while writing?)",
            "unbalanced begin/end events repaired: 1 E without its B, 0 B without its E (0 "
            "still open at the end); the cookbook's trace writer drops events in bursts (spec "
            "D1); coverage uses the union of what is left",
        ]
    }


def test_bad_log_paths(tmp_path: Path) -> None:
    with pytest.raises(NoLogs, match="no such directory"):
        read_log_dir(tmp_path / "missing")
    (tmp_path / "metrics.jsonl").write_text("")
    with pytest.raises(NoLogs, match="not a directory"):
        read_log_dir(tmp_path / "metrics.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NoLogs, match="none of the files a training run writes"):
        read_log_dir(empty)


def test_json_is_stable_and_plain(tmp_path: Path) -> None:
    data = to_json(analyse(read_log_dir(Loop(2).write(tmp_path))))
    assert json.loads(json.dumps(data)) == data
    assert list(data) == [
        "log_path", "files", "evidence", "findings", "steps", "spans", "steps_covered",
        "coverage", "sampling", "training", "stalls", "not_computable", "health",
    ]  # fmt: skip
    assert data["training"]["depth_seconds"] == approx({"0": 0.22, "1": 0.78})
    assert data["findings"] == 3


def test_a_resumed_run_is_analysed_process_by_process(tmp_path: Path) -> None:
    """Two processes appended to one trace (a resume 100 s later): the time between them is not
    nothing-queued time, and the resumed run's first submit is not a bubble."""
    lines = []
    for offset, steps in ((0.0, 2), (100.0, 1)):
        trace = TraceWriter()
        trace.span("train_step", offset, offset + steps * 1.0)
        for step in range(steps):
            t = offset + step * 1.0
            trace.future("forward_backward", t + 0.1, t + 0.4)
            trace.future("optim_step", t + 0.5, t + 0.6)
            trace.future("sample", t, t + 0.05)
        lines += trace.lines()
    write_lines(tmp_path / "trace_events.jsonl", lines)
    analysis = analyse(read_log_dir(tmp_path))
    training = analysis.training
    assert training is not None
    assert len(training.bubbles) == (2 * 2 - 1) + (2 * 1 - 1)
    # Per process: 0.1 s after each forward_backward, 0.5 s between steps; windows 1.5 s + 0.5 s.
    assert (training.window, training.nothing_queued) == approx((2.0, 0.2 + 0.5 + 0.1))
    assert training.concurrency.profile == approx({0: 0.8, 1: 1.2})
    sampling = analysis.sampling
    assert sampling is not None and sampling.profile == approx({0: 0.95, 1: 0.15})
    assert analysis.coverage == approx((3.0, 3.0))
