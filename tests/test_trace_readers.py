"""The log readers: exact records from hand-made cookbook-format files, and every kind of damage
(truncated last line, bad lines, lost B/E events, tid collisions, appended resumes) counted, never
raised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trace_logs import TRACE_EPOCH_US, WALL_EPOCH_S, TraceWriter, capture_line, write_lines
from tinker_lint.trace import readers


def spans_of(
    trace: readers.TraceEvents, origin: float = TRACE_EPOCH_US / 1e6
) -> list[tuple[str, float, float, int, str]]:
    """(name, start, end, depth, track) of each closed span, in seconds from ``origin``."""
    table = trace.spans
    return sorted(
        (
            table.name(i),
            round(table.start[i] - origin, 6),
            round(table.end[i] - origin, 6),
            table.depth[i],
            trace.tracks[table.track_id[i]].name,
        )
        for i in range(len(table))
    )


def test_metrics_keep_time_keys_per_step_and_count_damage(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "metrics.jsonl",
        [
            json.dumps({"step": 0, "time/total": 2.5, "time/get_batch": 0.5, "loss": 1.0}),
            "not json",
            json.dumps([1, 2]),
            json.dumps({"loss": 3.0}),  # no step
            json.dumps({"step": 1, "time/total": 1.0, "time/flag": True}),
            json.dumps({"step": 1, "time/total": 1.25}),  # logged again after a resume
            '{"step": 2, "time/to',  # killed mid-write
        ],
        newline_at_end=False,
    )
    metrics = readers.read_metrics(path)
    assert metrics.times == {0: {"time/total": 2.5, "time/get_batch": 0.5}, 1: {"time/total": 1.25}}
    assert metrics.repeated_steps == 1
    health = metrics.health
    assert (health.lines, health.records, health.bad_lines, health.unusable) == (7, 4, 2, 1)
    assert health.truncated_last_line and health.first_bad_line == 2
    assert health.notes() == [
        "truncated last line (the run was killed while writing?)",
        "2 unreadable line(s), first at line 2",
        "1 record(s) without the fields this file needs",
    ]


def test_a_last_line_without_newline_that_parses_is_not_truncated(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "metrics.jsonl",
        [json.dumps({"step": 0, "time/total": 1.0})],
        newline_at_end=False,
    )
    metrics = readers.read_metrics(path)
    assert metrics.times == {0: {"time/total": 1.0}} and not metrics.health.truncated_last_line


def test_timing_spans_extent_and_union_per_step(tmp_path: Path) -> None:
    spans = [
        {"name": "get_batch", "duration": 0.2, "wall_start": 0.0, "wall_end": 0.2},
        {"name": "step", "duration": 0.5, "wall_start": 0.1, "wall_end": 0.6},
        {"name": "metrics", "duration": 0.1, "wall_start": 0.9, "wall_end": 1.0},
        {"name": "broken", "wall_start": "x"},
    ]
    path = write_lines(tmp_path / "timing_spans.jsonl", [json.dumps({"step": 3, "spans": spans})])
    timing = readers.read_timing_spans(path)
    step = timing.steps[3]
    assert step.extent == pytest.approx(1.0) and step.covered == pytest.approx(0.7)
    assert [name for name, _, _ in step.spans] == ["get_batch", "step", "metrics"]


def test_cookbook_trace_events_become_nested_spans(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("train_step", 0.0, 1.0, step=0)
    trace.span("get_batch", 0.0, 0.25)
    trace.span("forward_backward", 0.25, 0.26)  # the cookbook's submit-only SDK span
    trace.future("sample", 0.3, 0.8)
    path = write_lines(tmp_path / "trace_events.jsonl", trace.lines())
    result = readers.read_trace_events(path)
    assert spans_of(result) == [
        ("forward_backward", 0.25, 0.26, 1, "main"),
        ("get_batch", 0.0, 0.25, 1, "main"),
        ("sample", 0.3, 0.8, 0, "(future calls)"),
        ("train_step", 0.0, 1.0, 0, "main"),
    ]
    assert [track.is_future for track in result.tracks] == [False, True]
    step_of = {result.spans.name(i): result.spans.step[i] for i in range(len(result.spans))}
    assert step_of["train_step"] == 0 and step_of["get_batch"] == -1
    assert result.segments == [(TRACE_EPOCH_US / 1e6, TRACE_EPOCH_US / 1e6 + 1.0)]
    assert result.repair == readers.TraceHealth()


def _drop(lines: list[str], name: str, phase: str) -> list[str]:
    kept = [
        line for line in lines if not (f'"name": "{name}"' in line and f'"ph": "{phase}"' in line)
    ]
    assert len(kept) == len(lines) - 1
    return kept


def test_lost_end_is_repaired_by_the_outer_end(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("train_step", 0.0, 1.0)
    trace.span("get_batch", 0.0, 0.4)
    trace.span("compute", 0.5, 0.9)
    lines = _drop(trace.lines(), "get_batch", "E")
    result = readers.read_trace_events(write_lines(tmp_path / "t.jsonl", lines))
    # get_batch stays open until train_step's E pops down to it: it is not a span any more.
    assert spans_of(result) == [
        ("compute", 0.5, 0.9, 2, "main"),  # nested under the never-closed get_batch
        ("train_step", 0.0, 1.0, 0, "main"),
    ]
    assert (result.repair.lost_begin, result.repair.lost_end, result.repair.unclosed_at_end) == (
        0,
        1,
        0,
    )


def test_lost_begin_leaves_an_orphan_end_and_unclosed_spans_are_counted(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("train_step", 0.0, 1.0)
    trace.span("get_batch", 0.0, 0.4)
    trace.span("eval", 2.0, 3.0)
    lines = _drop(_drop(trace.lines(), "get_batch", "B"), "eval", "E")
    result = readers.read_trace_events(write_lines(tmp_path / "t.jsonl", lines))
    assert spans_of(result) == [("train_step", 0.0, 1.0, 0, "main")]
    repair = result.repair
    assert (repair.lost_begin, repair.lost_end, repair.unclosed_at_end) == (1, 1, 1)


def test_tid_collisions_are_counted_and_tracks_kept_apart(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("policy_sample", 0.0, 1.0, track="group_rollout_1", tid=42)
    trace.span("policy_sample", 0.5, 1.5, track="group_rollout_2", tid=42)
    trace.span("env_step", 1.0, 1.2, track="group_rollout_1", tid=42)
    result = readers.read_trace_events(write_lines(tmp_path / "t.jsonl", trace.lines()))
    assert result.repair.tid_collisions == 1
    # Keyed by tid alone, rollout 2's E would have closed rollout 1's span.
    assert spans_of(result) == [
        ("env_step", 1.0, 1.2, 0, "group_rollout_1"),
        ("policy_sample", 0.0, 1.0, 0, "group_rollout_1"),
        ("policy_sample", 0.5, 1.5, 0, "group_rollout_2"),
    ]
    assert (result.repair.lost_begin, result.repair.lost_end) == (0, 0)


def test_ten_thousand_rl_tasks_with_colliding_tids(tmp_path: Path) -> None:
    # One rollout task per group, each with its own track; 100 tids for 10,000 tasks forces the
    # collisions real runs get from hash(name) % 1e6. Written directly (the writer is slower).
    lines = []
    for task in range(10_000):
        start = TRACE_EPOCH_US + task * 1000.0
        common = f'"pid": 0, "tid": {task % 100}, "cat": "async"'
        args = f'"args": {{"track": "group_{task}", "thread": "MainThread"}}'
        lines.append(f'{{"name": "policy_sample", "ph": "B", "ts": {start}, {common}, {args}}}')
        lines.append(
            f'{{"name": "policy_sample", "ph": "E", "ts": {start + 5e5}, {common}, {args}}}'
        )
    lines.sort(key=lambda line: float(line.split('"ts": ')[1].split(",")[0]))
    result = readers.read_trace_events(write_lines(tmp_path / "t.jsonl", lines))
    assert len(result.spans) == 10_000 and len(result.tracks) == 10_000
    assert result.repair.tid_collisions == 9_900
    assert (result.repair.lost_begin, result.repair.lost_end) == (0, 0)
    durations = {round(result.spans.end[i] - result.spans.start[i], 9) for i in range(10_000)}
    assert durations == {0.5}


def test_two_processes_appended_on_one_boot(tmp_path: Path) -> None:
    first, second = TraceWriter(), TraceWriter()
    first.span("train_step", 0.0, 1.0)
    second.span("train_step", 100.0, 100.5)  # resumed later: ts goes on, pids restart at 0
    second.span("get_batch", 100.0, 100.25)
    path = write_lines(tmp_path / "t.jsonl", first.lines() + second.lines())
    result = readers.read_trace_events(path)
    assert result.repair.resume_boundaries == 1
    assert [(track.name, track.segment) for track in result.tracks] == [("main", 0), ("main", 1)]
    assert result.span_seconds() == pytest.approx(1.5)  # the 99 s between the processes: not run
    assert spans_of(result) == [
        ("get_batch", 100.0, 100.25, 1, "main"),
        ("train_step", 0.0, 1.0, 0, "main"),
        ("train_step", 100.0, 100.5, 0, "main"),
    ]
    assert (result.repair.lost_begin, result.repair.lost_end) == (0, 0)


def test_a_resume_on_another_boot_is_laid_after_the_first_process(tmp_path: Path) -> None:
    first, second = TraceWriter(), TraceWriter()
    first.span("train_step", 0.0, 10.0)
    second.span("train_step", 0.0, 2.0)
    lines = first.lines() + second.lines(epoch_us=1_000_000.0)  # a fresh monotonic clock
    result = readers.read_trace_events(write_lines(tmp_path / "t.jsonl", lines))
    assert result.repair.resume_boundaries == 1
    assert result.span_seconds() == pytest.approx(12.0)
    ends = sorted(round(result.spans.end[i] - TRACE_EPOCH_US / 1e6, 6) for i in range(2))
    assert ends == [10.0, 12.0]


def test_truncated_and_bad_lines_in_a_trace_are_counted(tmp_path: Path) -> None:
    trace = TraceWriter()
    trace.span("train_step", 0.0, 1.0)
    lines = trace.lines()
    lines.insert(1, "\x00\x00garbage")
    lines.insert(2, json.dumps({"name": "x", "ph": "B", "pid": 0, "tid": 1}))  # no ts
    lines.append('{"name": "train_step", "ph": "B", "pid": 0, "ti')
    result = readers.read_trace_events(
        write_lines(tmp_path / "t.jsonl", lines, newline_at_end=False)
    )
    assert spans_of(result) == [("train_step", 0.0, 1.0, 0, "main")]
    health = result.health
    assert (health.bad_lines, health.unusable, health.truncated_last_line) == (1, 1, True)


def test_runtime_file_anchor_complete_instant_and_counter_events(tmp_path: Path) -> None:
    lines = [
        json.dumps({"perf_counter_us": 2_000_000.0, "time_time_s": 1_790_000_000.0}),
        json.dumps(
            {"name": "watchdog_starved", "ph": "X", "pid": 0, "tid": 7, "ts": 3e6, "dur": 4e5}
        ),
        json.dumps(
            {"name": "gil_held_dump", "ph": "i", "pid": 0, "tid": 7, "ts": 3.2e6, "args": {}}
        ),
        json.dumps(
            {"name": "sdk_loop_lag_ms", "ph": "C", "pid": 0, "ts": 3e6, "args": {"value": 21.5}}
        ),
        json.dumps(
            {"name": "sdk_loop_lag_ms", "ph": "C", "pid": 0, "ts": 4e6, "args": {"value": 6.0}}
        ),
        json.dumps({"name": "mystery", "ph": "Q", "pid": 0, "tid": 7, "ts": 4e6}),
    ]
    result = readers.read_trace_events(write_lines(tmp_path / "r.jsonl", lines), readers.RUNTIME)
    assert result.clock_anchor == (2.0, 1_790_000_000.0)
    assert spans_of(result, origin=0.0) == [("watchdog_starved", 3.0, 3.4, 0, "tid:7")]
    assert [(instant.name, instant.ts) for instant in result.instants] == [("gil_held_dump", 3.2)]
    assert result.counter_max == {"sdk_loop_lag_ms": 21.5}
    assert result.repair.unknown_phases == 1


def test_capture_records_are_ops_from_submission_to_completion(tmp_path: Path) -> None:
    lines = [
        capture_line("forward_backward", 1.0, 1.5, iteration=3),
        json.dumps(
            {
                "kind": "train_op",
                "op": "optim_step",
                "created_at": WALL_EPOCH_S + 5,
                "status": "submitted",
            }
        ),
        json.dumps(
            {
                "kind": "train_op",
                "op": "optim_step",
                "created_at": WALL_EPOCH_S + 6,
                "status": "error",
                "latency_sec": 0.5,
            }
        ),
        json.dumps({"kind": "train_op", "op": 7}),
    ]
    capture = readers.read_capture(
        write_lines(tmp_path / "c.jsonl", lines), readers.CAPTURE_TRAIN_OPS
    )
    assert [(op.name, op.done - op.submit, op.iteration) for op in capture.ops] == [
        ("forward_backward", pytest.approx(0.5), 3),
        ("optim_step", pytest.approx(0.5), -1),
    ]
    assert (capture.unfinished, capture.errors, capture.health.unusable) == (1, 1, 1)


def _runtime(records: list[dict[str, object]]) -> readers.TraceEvents:
    result = readers.TraceEvents(readers.FileHealth(readers.RUNTIME))
    return readers.trace_from_records(records, result, real_pids=True)


def test_one_process_writing_the_runtime_file_out_of_order_is_not_a_resume() -> None:
    """The watchdog writes a stall's B when the stall ends, behind the recorder's later events:
    the same OS pid going back in time is one process. Another pid going back is a second one."""
    later = {"name": "wait", "ph": "X", "pid": 7, "tid": 1, "ts": 5_000_000.0, "dur": 10.0}
    stall_b = {"name": "stall", "ph": "B", "pid": 7, "tid": 2, "ts": 1_000_000.0, "args": {}}
    stall_e = {"name": "stall", "ph": "E", "pid": 7, "tid": 2, "ts": 5_100_000.0, "args": {}}
    one = _runtime([later, stall_b, stall_e])
    assert len(one.segments) == 1 and one.health.notes() == []
    assert [one.spans.name(i) for i in range(len(one.spans))] == ["wait", "stall"]
    other = {**later, "pid": 8, "ts": 1_000_000.0}
    two = _runtime([later, other])
    assert len(two.segments) == 2
