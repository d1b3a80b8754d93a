"""Hand-made run logs in the cookbook 0.6.1 formats, for the ``tinker-lint trace`` tests.

``TraceWriter`` writes ``trace_events.jsonl`` as ``TraceCollector`` does (trace.py L546-657): a B
with ``args = {track, thread}``, then the track's ``thread_name`` and the thread's ``process_name``
metadata (each only the first time per (pid, tid) in a process), ``ts`` in µs; an E with the same
args plus the scope attributes (``step``). Future-wrapped SDK calls get tids from 1,000,000.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACE_EPOCH_US = 5_000_000_000.0  # a perf_counter far from 0, as on a machine up for hours
WALL_EPOCH_S = 1_790_000_000.0  # time.time() at perf_counter == TRACE_EPOCH_US


@dataclass
class TraceWriter:
    """Events sorted by time when written; metadata placed as the collector places it."""

    # (sort key, event, ts in s): at one instant, ends before begins, inner ends first.
    events: list[tuple[tuple[float, ...], dict[str, Any], float]] = field(default_factory=list)
    next_future_tid: int = 1_000_000

    def span(
        self,
        name: str,
        start: float,
        end: float,
        *,
        track: str = "main",
        pid: int = 0,
        thread: str = "MainThread",
        tid: int | None = None,
        step: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        tid = abs(hash_stable(track)) % 1_000_000 if tid is None else tid
        args = {"track": track, "thread": thread, **(extra or {})}
        base = {"pid": pid, "tid": tid, "cat": "async"}
        seq = float(len(self.events))
        begin = {"name": name, "ph": "B", "args": args, **base}
        self.events.append(((start, 1.0, seq), begin, start))
        end_args = dict(args, **({"step": step} if step is not None else {}))
        end_event = {"name": name, "ph": "E", "args": end_args, **base}
        self.events.append(((end, 0.0, -start, -seq), end_event, end))

    def future(self, name: str, start: float, end: float, *, task: str = "main") -> None:
        """A future-wrapped SDK call (``sample``; ``forward_backward`` on a completion-timing
        cookbook): its own track, from submission to completion."""
        tid = self.next_future_tid
        self.next_future_tid += 1
        self.span(name, start, end, track=f"{task}:{name}:{tid}", tid=tid)

    def lines(self, epoch_us: float = TRACE_EPOCH_US) -> list[str]:
        out = []
        named: set[tuple[int, int]] = set()
        for _, event, ts_s in sorted(self.events, key=lambda item: item[0]):
            event = dict(event, ts=epoch_us + ts_s * 1e6)
            out.append(json.dumps(event))
            pid, tid = event["pid"], event["tid"]
            if event["ph"] == "B":
                if (pid, tid) not in named:
                    named.add((pid, tid))
                    meta = {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "ts": 0}
                    out.append(json.dumps(dict(meta, args={"name": event["args"]["track"]})))
                if (pid, 0) not in named:
                    named.add((pid, 0))
                    meta = {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "ts": 0}
                    thread = event["args"]["thread"]
                    out.append(json.dumps(dict(meta, args={"name": f"{thread} Thread"})))
        return out


def hash_stable(text: str) -> int:
    """A stand-in for ``hash(task_name)`` that does not change with PYTHONHASHSEED."""
    value = 0
    for char in text:
        value = (value * 131 + ord(char)) % 1_000_003
    return value


def write_lines(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + ("\n" if newline_at_end and lines else "")
    path.write_text(text)
    return path


def capture_line(op: str, submit: float, done: float, *, iteration: int = 0) -> str:
    record: dict[str, Any] = {
        "kind": "train_op",
        "op": op,
        "scope": {"run_id": "r1", "iteration": iteration},
        "created_at": WALL_EPOCH_S + submit,
        "status": "ok",
        "latency_sec": done - submit,
    }
    if op == "forward_backward":
        record["num_data"] = 2
    return json.dumps(record)


def anchor_line() -> str:
    """The clock anchor the recorder and the watchdog write (spec §6 "Pitfalls")."""
    return json.dumps({"perf_counter_us": TRACE_EPOCH_US, "time_time_s": WALL_EPOCH_S})


def watchdog_start_line(pid: int = 0) -> str:
    """What the watchdog writes when it starts (``Watchdog.start``): its clock anchor, at the top
    level and in ``args`` with the interpreter and its options."""
    clock = {"perf_counter_us": TRACE_EPOCH_US, "time_time_s": WALL_EPOCH_S}
    options = {"interval": 0.1, "threshold": 0.25, "backstop": 1.0, "pyspy": False}
    args = {**clock, "python": "3.12.3", "gil_enabled": True, "options": options}
    record = {"name": "clock_anchor", "ph": "M", "tid": 0, **clock, "args": args}
    return json.dumps({**record, "pid": pid, "cat": "tinker_lint", "ts": TRACE_EPOCH_US})


@dataclass(frozen=True)
class Loop:
    """A hand-made SL-shaped loop: per step, get_batch, forward_backward, optim_step, metrics."""

    steps: int
    pipelined: bool = False
    period: float = 0.6

    def step_start(self, step: int) -> float:
        return step * self.period

    def ops(self) -> list[tuple[str, float, float, int]]:
        """(op, submit, done, step). Serialized: submit, wait, submit, wait. Pipelined: the next
        step's forward_backward is submitted before this step's optim_step completes."""
        ops = []
        for step in range(self.steps):
            t = self.step_start(step)
            if self.pipelined:
                ops.append(("forward_backward", t + 0.1, t + 0.7, step))
                ops.append(("optim_step", t + 0.11, t + 0.8, step))
            else:
                ops.append(("forward_backward", t + 0.1, t + 0.4, step))
                ops.append(("optim_step", t + 0.41, t + 0.5, step))
        return ops

    def client_spans(self) -> list[tuple[str, float, float, int]]:
        spans = []
        for step in range(self.steps):
            t = self.step_start(step)
            spans.append(("get_batch", t, t + 0.1, step))
            if self.pipelined:
                spans.append(("compute_metrics", t + 0.11, t + 0.6, step))
            else:
                # A wait ends a poll after the op completes: the completion falls inside it.
                spans.append(("wait_fwd", t + 0.1, t + 0.405, step))
                spans.append(("wait_optim", t + 0.41, t + 0.505, step))
                spans.append(("compute_metrics", t + 0.505, t + 0.6, step))
        return spans

    def write(
        self,
        log_dir: Path,
        *,
        capture: bool = True,
        anchor: bool = True,
        recorder: bool = False,
        wait_file: str | None = None,
        watchdog: bool = False,
    ) -> Path:
        """The run's logs; with ``recorder``, its in-flight spans, and with ``wait_file`` too its
        waits at that file's lines 42 (the forward_backward wait) and 45 (the optim_step one).
        ``anchor`` alone is a bare clock anchor (no watchdog records: stalls not measured);
        ``watchdog`` writes the watchdog's start record instead (it anchors the clock too), as a
        watchdog that ran and saw no stall leaves it."""
        trace = TraceWriter()
        for step in range(self.steps):
            t = self.step_start(step)
            trace.span("train_step", t, t + self.period, step=step)
        for name, start, end, step in self.client_spans():
            trace.span(name, start, end, step=step)
        write_lines(log_dir / "trace_events.jsonl", trace.lines())
        rows, spans_rows = [], []
        for step in range(self.steps):
            rows.append(
                json.dumps({"step": step, "time/get_batch": 0.1, "time/forward_backward": 0.002})
            )
            t = self.step_start(step)
            step_spans = [
                {
                    "name": name,
                    "duration": end - start,
                    "wall_start": start - t,
                    "wall_end": end - t,
                }
                for name, start, end, s in self.client_spans()
                if s == step
            ]
            spans_rows.append(json.dumps({"step": step, "spans": step_spans}))
        write_lines(log_dir / "metrics.jsonl", rows)
        write_lines(log_dir / "timing_spans.jsonl", spans_rows)
        if capture:
            lines = [capture_line(op, s, d, iteration=k) for op, s, d, k in self.ops()]
            write_lines(log_dir / "capture" / "train_op.jsonl", sorted(lines, key=_done_key))
        runtime = []
        if watchdog:
            runtime.append(watchdog_start_line())
        elif anchor:
            runtime.append(anchor_line())
        if recorder:
            recorded = TraceWriter()
            for op, submit, done, _ in self.ops():
                recorded.span(f"inflight:{op}", submit, done, track=f"inflight:{op}:{submit}")
            for name, start, end, _ in self.client_spans() if wait_file else ():
                line = {"wait_fwd": 42, "wait_optim": 45}.get(name)
                if line is not None:
                    site = {"file": wait_file, "line": line, "function": "train_step"}
                    recorded.span("wait", start, end, track="main", extra=site)
            runtime.extend(recorded.lines())
        if runtime:
            write_lines(log_dir / "tinker_lint_runtime.jsonl", runtime)
        return log_dir


def _done_key(line: str) -> float:
    # Capture writes each record at completion.
    record = json.loads(line)
    return float(record["created_at"] + record["latency_sec"])


SAMPLES_PER_STEP = 8
SPANS_PER_STEP = 5 + SAMPLES_PER_STEP  # train_step, get_batch, sampling, fwd, optim + samples


def _pair(name: str, start: float, end: float, where: str) -> list[str]:
    return [
        f'{{"name": "{name}", "ph": "B", "ts": {start}, {where}}}}}',
        f'{{"name": "{name}", "ph": "E", "ts": {end}, {where}}}}}',
    ]


def write_big_trace(path: Path, min_bytes: int) -> int:
    """An RL-shaped trace of at least ``min_bytes``, written in blocks; returns the step count.

    Per 1 s step on the main track: train_step > get_batch, sampling (with 8 future-wrapped
    ``sample`` calls, each on its own track), then the submit-only forward_backward/optim_step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    thread = '"thread": "MainThread"'
    main = f'"pid": 0, "tid": 4242, "cat": "async", "args": {{"track": "main", {thread}'
    written, step, tid = 0, 0, 1_000_000
    with path.open("w") as out:
        meta = {"name": "thread_name", "ph": "M", "pid": 0, "tid": 4242, "ts": 0}
        out.write(json.dumps(dict(meta, args={"name": "main"})) + "\n")
        while written < min_bytes:
            t = TRACE_EPOCH_US + step * 1e6
            lines = [f'{{"name": "train_step", "ph": "B", "ts": {t}, {main}}}}}']
            lines += _pair("get_batch", t, t + 1e5, main)
            lines.append(f'{{"name": "sampling", "ph": "B", "ts": {t + 1e5}, {main}}}}}')
            for k in range(SAMPLES_PER_STEP):
                future = f'"pid": 0, "tid": {tid}, "cat": "async", "args": {{"track": "main:sample:{tid}", {thread}'
                lines += _pair("sample", t + 1e5 + k * 1e3, t + 5e5 + k * 1e4, future)
                tid += 1
            lines.append(f'{{"name": "sampling", "ph": "E", "ts": {t + 6e5}, {main}}}}}')
            lines += _pair("forward_backward", t + 6e5, t + 6.1e5, main)
            lines += _pair("optim_step", t + 6.1e5, t + 6.2e5, main)
            lines.append(
                f'{{"name": "train_step", "ph": "E", "ts": {t + 9e5}, {main}, "step": {step}}}}}'
            )
            block = "\n".join(lines) + "\n"
            out.write(block)
            written += len(block)
            step += 1
    return step
