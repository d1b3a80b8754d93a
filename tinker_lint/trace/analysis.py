"""What a run's logs prove, by evidence level (spec §6(a) table), and what each missing file prevents.

| level | files | computable |
|---|---|---|
| L0 | metrics.jsonl | per-step time (``time/total``), get_batch share, warm-up |
| L1 | + timing_spans.jsonl | SL step extent, covered time per step, spans ranked by time |
| L2 | + trace_events.jsonl | global timeline: coverage, sampling concurrency, nesting |
| L3 | + capture/*.jsonl or recorder spans | training-op depth, nothing queued, bubbles |
| L4 | + the watchdog's records in tinker_lint_runtime.jsonl | stalls and GIL holds |

Every figure is computed on one clock: the trace's (``perf_counter`` seconds). Capture files are
on the wall clock; they join the trace only through a clock anchor (``perf_counter_us`` with
``time_time_s``) written by the recorder or the watchdog.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tinker_lint.trace import readers
from tinker_lint.trace.readers import (
    INFLIGHT_PREFIX,
    TRAINING_OPS,
    Capture,
    FileHealth,
    Metrics,
    Op,
    TimingSpans,
    TraceEvents,
)
from tinker_lint.trace.timeline import (
    NO_SPAN,
    Span,
    blame,
    bubbles,
    depth_profile,
    depth_profile_of,
    innermost_at,
    median,
    zero_intervals,
)

GIL_DUMP = "gil_held_dump"


class NoLogs(Exception):
    """LOG_PATH is not a directory, or holds none of the files a run writes."""


@dataclass
class LogSet:
    path: Path
    metrics: Metrics | None = None
    timing_spans: TimingSpans | None = None
    trace: TraceEvents | None = None
    train_ops: Capture | None = None
    samples: Capture | None = None
    runtime: TraceEvents | None = None

    def health(self) -> list[FileHealth]:
        return [item.health for _, item in _files(self) if item is not None]


def read_log_dir(path: Path) -> LogSet:
    if not path.is_dir():
        raise NoLogs(f"{path}: not a directory" if path.exists() else f"{path}: no such directory")
    logs = LogSet(path)
    names = {name: path / name for name in readers.ALL_FILES}
    present = {name: where for name, where in names.items() if where.is_file()}
    if not present:
        listed = ", ".join(readers.ALL_FILES)
        raise NoLogs(f"{path}: none of the files a training run writes ({listed})")
    if readers.METRICS in present:
        logs.metrics = readers.read_metrics(present[readers.METRICS])
    if readers.TIMING_SPANS in present:
        logs.timing_spans = readers.read_timing_spans(present[readers.TIMING_SPANS])
    if readers.TRACE_EVENTS in present:
        logs.trace = readers.read_trace_events(present[readers.TRACE_EVENTS])
    if readers.CAPTURE_TRAIN_OPS in present:
        where = present[readers.CAPTURE_TRAIN_OPS]
        logs.train_ops = readers.read_capture(where, readers.CAPTURE_TRAIN_OPS)
    if readers.CAPTURE_SAMPLES in present:
        logs.samples = readers.read_capture(
            present[readers.CAPTURE_SAMPLES], readers.CAPTURE_SAMPLES
        )
    if readers.RUNTIME in present:
        logs.runtime = readers.read_trace_events(present[readers.RUNTIME], readers.RUNTIME)
    read = logs.health()
    if not any(health.records for health in read) and any(health.bad_lines for health in read):
        # Files of the right names holding no JSON record at all (binary or foreign data): a
        # report of zeros from them would look like a measurement.
        garbled = ", ".join(health.name for health in read if health.bad_lines)
        raise NoLogs(f"{path}: no readable record in {garbled} (not JSON lines)")
    return logs


# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepFigures:
    source: str  # where the step time comes from
    times: dict[int, float]  # step -> seconds
    get_batch: dict[int, float]  # step -> seconds in get_batch
    median: float | None
    warmup_ratio: float | None  # first step / median of the others
    get_batch_share: float | None  # sum of get_batch / sum of step times (steps with both)


@dataclass(frozen=True)
class BubbleFigure:
    submit: float  # seconds from the start of the run
    completed_at: float  # when the previous op completed, on its source's clock
    op: str
    previous: str
    turnaround: float
    completed_in: str | None  # innermost client span open when the previous op completed


@dataclass(frozen=True)
class Concurrency:
    source: str
    ops: int
    profile: dict[int, float]  # depth -> seconds, from the first submit to the last completion
    max_depth: int


@dataclass(frozen=True)
class TrainingFigures:
    concurrency: Concurrency
    window: float  # first submit to last completion, seconds
    nothing_queued: float  # seconds with no training op in flight in the window (a lower bound)
    bubbles: tuple[BubbleFigure, ...]
    idle_blame: dict[str, float] | None  # None: no trace, or the ops are not on its clock
    on_trace_clock: bool  # the ops' times are perf_counter seconds, as the trace's and recorder's

    @property
    def nothing_queued_share(self) -> float:
        return self.nothing_queued / self.window if self.window > 0 else 0.0


@dataclass(frozen=True)
class StallFigures:
    stalls: int
    seconds: float
    longest: float
    gil_dumps: int
    counters_max: dict[str, float]


@dataclass
class Analysis:
    log_path: str
    files: list[str]
    levels: list[str]
    steps: StepFigures | None = None
    span_ranking: list[tuple[str, float, int]] = field(default_factory=list)  # name, s, count
    steps_covered: tuple[float, float] | None = None  # L1: sum of per-step unions, extents
    coverage: tuple[float, float] | None = None  # L2: union of client spans, run seconds
    sampling: Concurrency | None = None
    training: TrainingFigures | None = None
    stalls: StallFigures | None = None
    not_computable: list[str] = field(default_factory=list)
    health: dict[str, list[str]] = field(default_factory=dict)

    @property
    def findings(self) -> int:
        """What makes ``tinker-lint trace`` exit 1: bubbles and stalls."""
        count = len(self.training.bubbles) if self.training else 0
        return count + (self.stalls.stalls if self.stalls else 0)


# --- the analysis --------------------------------------------------------------------------------


def analyse(logs: LogSet) -> Analysis:
    present = [name for name, item in _files(logs) if item is not None]
    result = Analysis(str(logs.path), present, _levels(logs))
    result.steps = _step_figures(logs, result.not_computable)
    if logs.timing_spans is not None:
        _span_figures(logs.timing_spans, result)
    trace = logs.trace
    if trace is not None:
        result.coverage = (trace.client_union.length(), trace.span_seconds())
        result.sampling = _sampling_from_trace(trace)
    else:
        result.not_computable.append(
            "no trace_events.jsonl: no global timeline (coverage, sampling concurrency, what the "
            "client was doing during a bubble); run with enable_trace=True"
        )
    if result.sampling is None and logs.samples is not None and logs.samples.ops:
        result.sampling = _concurrency(logs.samples.ops, readers.CAPTURE_SAMPLES)
    result.training = _training_figures(logs, result.not_computable)
    # Stalls are measured only where the watchdog wrote: the recorder shares its file, and a
    # file of the recorder's alone must not read as "stalls: 0".
    if _watchdog_ran(logs):
        assert logs.runtime is not None
        result.stalls = _stall_figures(logs.runtime)
    elif logs.runtime is None:
        result.not_computable.append(NO_RUNTIME_FILE)
    else:
        result.not_computable.append(NO_WATCHDOG_RECORDS)
    result.health = _health(logs)
    return result


Reading = Metrics | TimingSpans | TraceEvents | Capture


def _files(logs: LogSet) -> list[tuple[str, Reading | None]]:
    return [
        (readers.METRICS, logs.metrics),
        (readers.TIMING_SPANS, logs.timing_spans),
        (readers.TRACE_EVENTS, logs.trace),
        (readers.CAPTURE_TRAIN_OPS, logs.train_ops),
        (readers.CAPTURE_SAMPLES, logs.samples),
        (readers.RUNTIME, logs.runtime),
    ]


NO_RUNTIME_FILE = (
    "no tinker_lint_runtime.jsonl: no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1"
)
NO_WATCHDOG_RECORDS = (
    "no watchdog records in tinker_lint_runtime.jsonl (the recorder's alone; the watchdog writes "
    "a clock_anchor when it starts): no stalls or GIL holds; run with TINKER_LINT_WATCHDOG=1"
)


def _watchdog_ran(logs: LogSet) -> bool:
    return logs.runtime is not None and logs.runtime.watchdog_records > 0


def _levels(logs: LogSet) -> list[str]:
    levels = []
    if logs.metrics is not None:
        levels.append("L0")
    if logs.timing_spans is not None:
        levels.append("L1")
    if logs.trace is not None:
        levels.append("L2")
    if logs.train_ops is not None or logs.samples is not None or _recorded_ops(logs.runtime):
        levels.append("L3")
    if _watchdog_ran(logs):
        levels.append("L4")
    return levels


def _step_figures(logs: LogSet, missing: list[str]) -> StepFigures | None:
    times: dict[int, float] = {}
    get_batch: dict[int, float] = {}
    source = ""
    if logs.metrics is not None:
        for step, row in logs.metrics.times.items():
            if "time/total" in row:
                times[step] = row["time/total"]
            value = row.get("time/get_batch", row.get("time/get_batch:total"))
            if value is not None:
                get_batch[step] = value
        source = "metrics.jsonl time/total" if times else ""
    if not times and logs.timing_spans is not None:
        # SL rows have no time/total (spec D4): the step's span extent stands in for it.
        times = {step: spans.extent for step, spans in logs.timing_spans.steps.items()}
        source = "timing_spans.jsonl step extent" if times else ""
        if not get_batch:
            for step, spans in logs.timing_spans.steps.items():
                total = sum(end - start for name, start, end in spans.spans if name == "get_batch")
                if any(name == "get_batch" for name, _, _ in spans.spans):
                    get_batch[step] = total
    if not times:
        if logs.metrics is None and logs.timing_spans is None:
            missing.append(
                "no metrics.jsonl and no timing_spans.jsonl: no per-step time, get_batch share or "
                "warm-up"
            )
        else:
            missing.append(
                "no time/total in metrics.jsonl (SL rows never have it) and no timing_spans.jsonl: "
                "no per-step time, get_batch share or warm-up"
            )
        return None
    ordered = sorted(times)
    others = [times[step] for step in ordered[1:]]
    middle = median(others) if others else None
    warmup = times[ordered[0]] / middle if middle else None
    shared = [step for step in ordered if step in get_batch]
    step_total = sum(times[step] for step in shared)
    share = sum(get_batch[step] for step in shared) / step_total if step_total > 0 else None
    return StepFigures(source, times, get_batch, median(list(times.values())), warmup, share)


def _span_figures(timing: TimingSpans, result: Analysis) -> None:
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for spans in timing.steps.values():
        for name, start, end in spans.spans:
            totals[name] += end - start
            counts[name] += 1
    # Ranked to the microsecond, so that float noise in a sum does not decide a tie.
    result.span_ranking = sorted(
        ((name, totals[name], counts[name]) for name in totals),
        key=lambda row: (-round(row[1], 6), row[0]),
    )
    steps = timing.steps.values()
    result.steps_covered = (sum(s.covered for s in steps), sum(s.extent for s in steps))


def _client_spans(trace: TraceEvents) -> list[Span]:
    spans, tracks = trace.spans, trace.tracks
    return [
        Span(spans.start[i], spans.end[i], spans.depth[i], spans.name(i))
        for i in range(len(spans))
        if not tracks[spans.track_id[i]].is_future
    ]


def _future_ops(trace: TraceEvents, training: bool) -> list[Op]:
    spans, tracks = trace.spans, trace.tracks
    return [
        Op(spans.name(i), spans.start[i], spans.end[i])
        for i in range(len(spans))
        if tracks[spans.track_id[i]].is_future and (spans.name(i) in TRAINING_OPS) == training
    ]


def _recorded_ops(runtime: TraceEvents | None, training: bool = True) -> list[Op]:
    """The recorder's submit->done spans (``inflight:<op>``) in the runtime file."""
    if runtime is None:
        return []
    spans = runtime.spans
    ops = []
    for i in range(len(spans)):
        name = spans.name(i)
        if name.startswith(INFLIGHT_PREFIX):
            op = name[len(INFLIGHT_PREFIX) :]
            if (op in TRAINING_OPS) == training:
                ops.append(Op(op, spans.start[i], spans.end[i]))
    return ops


def _concurrency(ops: Sequence[Op], source: str) -> Concurrency:
    profile = depth_profile([(op.submit, op.done) for op in ops])
    return Concurrency(source, len(ops), profile, max(profile, default=0))


def _sampling_from_trace(trace: TraceEvents) -> Concurrency | None:
    """Sampling concurrency from the future tracks, read off the span table's arrays (a long RL
    trace holds 10^5 sample calls), process by process (nothing runs between them)."""
    spans, tracks = trace.spans, trace.tracks
    sampling_names = [name not in TRAINING_OPS for name in spans.names]

    def chosen() -> Iterator[int]:  # twice over the arrays rather than a list of 10^5 indices
        for i in range(len(spans)):
            if sampling_names[spans.name_id[i]] and tracks[spans.track_id[i]].is_future:
                yield i

    count = sum(1 for _ in chosen())
    if not count:
        return None
    profile: dict[int, float] = defaultdict(float)
    bounds = [first for first, _ in trace.segments[1:]] + [math.inf]
    low = -math.inf
    for high in bounds:  # segments are laid end to end: a call belongs to the one it starts in

        def inside(i: int, low: float = low, high: float = high) -> bool:
            return low <= spans.start[i] < high

        starts = (spans.start[i] for i in chosen() if inside(i))
        ends = (spans.end[i] for i in chosen() if inside(i))
        for depth, seconds in depth_profile_of(starts, ends).items():
            profile[depth] += seconds
        low = high
    ordered = dict(sorted(profile.items()))
    return Concurrency("trace_events.jsonl future tracks", count, ordered, max(ordered, default=0))


def _training_ops(logs: LogSet, missing: list[str]) -> tuple[list[Op], str, bool]:
    """The training ops with their completions, their source, and whether they are on the
    trace's clock (only then can a bubble say which client span it fell in)."""
    recorded = _recorded_ops(logs.runtime)
    if recorded:
        return recorded, "tinker_lint_runtime.jsonl recorder spans", True
    if logs.trace is not None:
        traced = _future_ops(logs.trace, training=True)
        if traced:
            return traced, "trace_events.jsonl future tracks", True
    if logs.train_ops is not None:
        ops = [op for op in logs.train_ops.ops if op.name in TRAINING_OPS]
        anchor = logs.runtime.clock_anchor if logs.runtime is not None else None
        if anchor is not None:
            perf, wall = anchor
            shifted = [Op(op.name, op.submit - wall + perf, op.done - wall + perf) for op in ops]
            return (
                shifted,
                "capture/train_op.jsonl (aligned by the runtime file's clock anchor)",
                True,
            )
        if logs.trace is not None and ops:
            missing.append(
                "capture/train_op.jsonl is on the wall clock and no clock anchor was found "
                "(tinker_lint_runtime.jsonl): bubbles are not placed on the trace's timeline (no "
                "'completed in' span, no idle blame)"
            )
        return ops, "capture/train_op.jsonl", False
    missing.append(
        "no training-op completions (capture/train_op.jsonl, or the recorder's spans in "
        "tinker_lint_runtime.jsonl): no training depth, nothing-queued time or bubbles; the "
        "cookbook times forward_backward/optim_step at submission only. Wrap the loop in "
        "tinker_cookbook.capture.capture_to_store(...) or record with tinker_lint.runtime"
    )
    return [], "", False


def _by_process(ops: Sequence[Op], segments: Sequence[tuple[float, float]]) -> list[list[Op]]:
    """The ops of each process appended to the log (each op by its submit; ops sorted). Between
    processes nothing is queued because nothing runs: that is not idle time, and the first submit
    of a resumed run is not a bubble."""
    if len(segments) < 2:
        return [list(ops)] if ops else []
    starts = [first for first, _ in segments]
    groups: list[list[Op]] = [[] for _ in segments]
    for op in ops:
        groups[max(bisect.bisect_right(starts, op.submit) - 1, 0)].append(op)
    return [group for group in groups if group]


def _segments(logs: LogSet, source: str) -> list[tuple[float, float]]:
    if logs.trace is not None and logs.trace.segments:
        return logs.trace.segments
    if logs.runtime is not None and source.startswith(readers.RUNTIME):
        return logs.runtime.segments
    return []


def _training_figures(logs: LogSet, missing: list[str]) -> TrainingFigures | None:
    ops, source, on_trace_clock = _training_ops(logs, missing)
    if not ops:
        return None
    ops.sort(key=lambda op: (op.submit, op.done, op.name))
    client = _client_spans(logs.trace) if logs.trace is not None and on_trace_clock else None
    origin = _origin(logs, ops, on_trace_clock)
    groups = _by_process(ops, _segments(logs, source) if on_trace_clock else [])
    profile: dict[int, float] = defaultdict(float)
    window_seconds = 0.0
    gaps: list[tuple[float, float]] = []
    found = []
    for group in groups:
        intervals = [(op.submit, op.done) for op in group]
        window = (group[0].submit, max(op.done for op in group))
        window_seconds += window[1] - window[0]
        for depth, seconds in depth_profile(intervals, window).items():
            profile[depth] += seconds
        gaps += zero_intervals(intervals, window)
        for bubble in bubbles(intervals):
            completed_in = innermost_at(client, bubble.completed) if client is not None else None
            found.append(
                BubbleFigure(
                    bubble.submit - origin,
                    bubble.completed,
                    group[bubble.op].name,
                    group[bubble.previous].name,
                    bubble.turnaround,
                    completed_in,
                )
            )
    concurrency = Concurrency(
        source, len(ops), dict(sorted(profile.items())), max(profile, default=0)
    )
    return TrainingFigures(
        concurrency,
        window_seconds,
        sum(end - start for start, end in gaps),
        tuple(found),
        blame(client, gaps) if client is not None else None,
        on_trace_clock,
    )


def _origin(logs: LogSet, ops: Sequence[Op], on_trace_clock: bool) -> float:
    """Times are printed from the start of the run: the trace's first event when on its clock."""
    if on_trace_clock and logs.trace is not None and logs.trace.segments:
        return min(logs.trace.segments[0][0], ops[0].submit)
    return ops[0].submit


def _stall_figures(runtime: TraceEvents) -> StallFigures:
    # One per stall: a stall of two loops and of the watchdog itself is three spans in the file.
    durations = [stall.end - stall.start for stall in runtime.stalls]
    dumps = sum(1 for instant in runtime.instants if instant.name == GIL_DUMP)
    return StallFigures(
        len(durations),
        sum(durations, 0.0),
        max(durations, default=0.0),
        dumps,
        dict(runtime.counter_max),
    )


def _health(logs: LogSet) -> dict[str, list[str]]:
    health: dict[str, list[str]] = {}
    for name, item in _files(logs):
        if item is None:
            continue
        notes = item.health.notes()
        repeated = getattr(item, "repeated_steps", 0)
        if repeated:
            notes.append(f"{repeated} step(s) logged again (a resume?): the last row is used")
        if isinstance(item, TraceEvents):
            notes.extend(_repair_notes(item))
        if isinstance(item, Capture):
            if item.unfinished:
                notes.append(f"{item.unfinished} request(s) never completed while recorded")
            if item.errors:
                notes.append(f"{item.errors} request(s) failed")
        if notes:
            health[name] = notes
    return health


def _repair_notes(trace: TraceEvents) -> list[str]:
    repair = trace.repair
    notes = []
    if repair.lost_begin or repair.lost_end:
        notes.append(
            f"unbalanced begin/end events repaired: {repair.lost_begin} E without its B, "
            f"{repair.lost_end} B without its E ({repair.unclosed_at_end} still open at the end); "
            "the cookbook's trace writer drops events in bursts (spec D1); coverage uses the "
            "union of what is left"
        )
    if repair.tid_collisions:
        notes.append(
            f"{repair.tid_collisions} track id collision(s) (one tid, two coroutines): tracks "
            "are told apart by args.track"
        )
    if repair.resume_boundaries:
        notes.append(
            f"{repair.resume_boundaries} resume boundary(ies): {repair.resume_boundaries + 1} "
            "processes appended to this file; the time between them is not counted"
        )
    if repair.unknown_phases:
        notes.append(f"{repair.unknown_phases} event(s) of a phase not read")
    return notes


def to_json(analysis: Analysis) -> dict[str, Any]:
    """The analysis as plain JSON values (keys and lists in a fixed order)."""

    def profile(values: dict[int, float]) -> dict[str, float]:
        return {str(depth): seconds for depth, seconds in sorted(values.items())}

    def concurrency(value: Concurrency | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {
            "source": value.source,
            "ops": value.ops,
            "depth_seconds": profile(value.profile),
            "max_depth": value.max_depth,
        }

    steps = analysis.steps
    training = analysis.training
    stalls = analysis.stalls
    return {
        "log_path": analysis.log_path,
        "files": analysis.files,
        "evidence": analysis.levels,
        "findings": analysis.findings,
        "steps": None
        if steps is None
        else {
            "source": steps.source,
            "count": len(steps.times),
            "seconds": {str(step): steps.times[step] for step in sorted(steps.times)},
            "median": steps.median,
            "warmup_ratio": steps.warmup_ratio,
            "get_batch_share": steps.get_batch_share,
        },
        "spans": [
            {"name": name, "seconds": seconds, "count": count}
            for name, seconds, count in analysis.span_ranking
        ],
        "steps_covered": None
        if analysis.steps_covered is None
        else {"covered": analysis.steps_covered[0], "extent": analysis.steps_covered[1]},
        "coverage": None
        if analysis.coverage is None
        else {"covered": analysis.coverage[0], "run": analysis.coverage[1]},
        "sampling": concurrency(analysis.sampling),
        "training": None
        if training is None
        else {
            **(concurrency(training.concurrency) or {}),
            "window": training.window,
            "nothing_queued": training.nothing_queued,
            "nothing_queued_share": training.nothing_queued_share,
            "bubbles": [
                {
                    "submit": bubble.submit,
                    "op": bubble.op,
                    "previous": bubble.previous,
                    "turnaround": bubble.turnaround,
                    "completed_in": bubble.completed_in,
                }
                for bubble in training.bubbles
            ],
            "idle_blame": training.idle_blame,
        },
        "stalls": None
        if stalls is None
        else {
            "count": stalls.stalls,
            "seconds": stalls.seconds,
            "longest": stalls.longest,
            "gil_dumps": stalls.gil_dumps,
            "counters_max": dict(sorted(stalls.counters_max.items())),
        },
        "not_computable": analysis.not_computable,
        "health": analysis.health,
    }


__all__ = ["NO_SPAN", "Analysis", "LogSet", "NoLogs", "analyse", "read_log_dir", "to_json"]
