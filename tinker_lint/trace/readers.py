"""One reader per log format a training run leaves (spec: runtime-triage.md §1), line by line.

Nothing here loads a whole file: traces reach 100 MB. What cannot be read (a bad line, a truncated
last line, a record without the fields we need) is counted in the file's ``FileHealth`` and
skipped, never raised. Clocks are kept as each file has them and converted to seconds:

- ``metrics.jsonl``: no clock at all, durations in seconds;
- ``timing_spans.jsonl``: ``wall_*`` relative to the earliest span of each step;
- ``trace_events.jsonl`` and ``tinker_lint_runtime.jsonl``: ``ts`` = ``perf_counter() * 1e6``;
- ``capture/*.jsonl``: ``created_at`` = ``time.time()`` at submission, ``latency_sec`` to done.
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tinker_lint.trace.timeline import UnionAccumulator, union_length

METRICS = "metrics.jsonl"
TIMING_SPANS = "timing_spans.jsonl"
TRACE_EVENTS = "trace_events.jsonl"
CAPTURE_TRAIN_OPS = "capture/train_op.jsonl"
CAPTURE_SAMPLES = "capture/sample.jsonl"
RUNTIME = "tinker_lint_runtime.jsonl"
ALL_FILES = (METRICS, TIMING_SPANS, TRACE_EVENTS, CAPTURE_TRAIN_OPS, CAPTURE_SAMPLES, RUNTIME)

# Future-wrapped SDK calls get their own track, numbered from here (cookbook trace.py L30).
FUTURE_TID_START = 1_000_000
# The ops that occupy the training queue; their completion, not their submission, sets the depth.
TRAINING_OPS = frozenset(
    {"forward_backward", "forward_backward_custom", "optim_step"}
    | {"forward_backward_async", "forward_backward_custom_async", "optim_step_async"}
)
# The track record all future-wrapped calls of one thread share.
FUTURE_CALLS = "(future calls)"
# The recorder names its submit->done spans so, to leave the cookbook's dashboards their meaning.
INFLIGHT_PREFIX = "inflight:"
# A ``ts`` this far below the latest one seen starts a new process's segment (another boot's
# monotonic clock); small inversions between threads of one process are normal.
BACKWARDS_RESUME_US = 1_000_000.0


@dataclass
class FileHealth:
    """What could not be read from one file, by count (the first bad line is named)."""

    name: str
    lines: int = 0
    records: int = 0
    bad_lines: int = 0  # not JSON, or not a JSON object
    truncated_last_line: bool = False  # the last line has no newline and does not parse
    unusable: int = 0  # JSON objects without the fields this format needs
    negative: int = 0  # durations below zero, left out (a step cannot take -3 s)
    first_bad_line: int | None = None

    def bad(self, line_number: int) -> None:
        self.bad_lines += 1
        if self.first_bad_line is None:
            self.first_bad_line = line_number

    def notes(self) -> list[str]:
        notes = []
        if self.truncated_last_line:
            notes.append("truncated last line (the run was killed while writing?)")
        if self.bad_lines:
            notes.append(
                f"{self.bad_lines} unreadable line(s), first at line {self.first_bad_line}"
            )
        if self.unusable:
            notes.append(f"{self.unusable} record(s) without the fields this file needs")
        if self.negative:
            notes.append(f"{self.negative} negative duration(s), left out")
        return notes


_decode = json.JSONDecoder().decode  # on str: skips json.loads' encoding detection per line


def iter_records(path: Path, health: FileHealth) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each line that holds a JSON object; the rest is counted."""
    with path.open("rb") as stream:  # bytes: a stray invalid byte spoils one line, not the file
        for number, raw in enumerate(stream, start=1):
            health.lines += 1
            if not raw.strip():
                continue
            try:
                record = _decode(raw.decode("utf-8", "replace"))
            except ValueError:
                if not raw.endswith(b"\n"):
                    health.truncated_last_line = True
                else:
                    health.bad(number)
                continue
            if not isinstance(record, dict):
                health.bad(number)
                continue
            health.records += 1
            yield number, record


# Every number these files hold is a time or a count: perf_counter µs are about 1e13, epoch seconds
# 2e9. Larger ones are damage, and sums of them would overflow to inf.
LARGEST = 1e16


def _number(value: object) -> float | None:
    """A finite int or float of a plausible size (JSON booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond float
        return None
    return number if math.isfinite(number) and abs(number) <= LARGEST else None


def _step(record: dict[str, Any]) -> int | None:
    for key in ("step", "progress/batch"):  # SL rows carry "step"; RL rows also "progress/batch"
        value = record.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


# --- metrics.jsonl -------------------------------------------------------------------------------


@dataclass
class Metrics:
    """The ``time/*`` keys of each step's row; a step logged twice (a resume) keeps its last row."""

    health: FileHealth
    times: dict[int, dict[str, float]] = field(default_factory=dict)
    repeated_steps: int = 0


def read_metrics(path: Path) -> Metrics:
    metrics = Metrics(FileHealth(METRICS))
    for _, record in iter_records(path, metrics.health):
        step = _step(record)
        if step is None:
            metrics.health.unusable += 1
            continue
        times = {}
        for key, value in record.items():
            number = _number(value)
            if not key.startswith("time/") or number is None:
                continue
            if number < 0:  # every time/* key is a duration: a negative one is no measurement
                metrics.health.negative += 1
                continue
            times[key] = number
        if step in metrics.times:
            metrics.repeated_steps += 1
        metrics.times[step] = times
    return metrics


# --- timing_spans.jsonl --------------------------------------------------------------------------


@dataclass(frozen=True)
class StepSpans:
    """One step's spans, reduced: ``wall_*`` are relative to the step's earliest span, so steps
    cannot be placed on one timeline; only their extents and unions are comparable."""

    extent: float  # latest wall_end - earliest wall_start
    covered: float  # the union of the spans' wall intervals
    spans: tuple[tuple[str, float, float], ...]  # (name, wall_start, wall_end), in file order


@dataclass
class TimingSpans:
    health: FileHealth
    steps: dict[int, StepSpans] = field(default_factory=dict)
    repeated_steps: int = 0


def read_timing_spans(path: Path) -> TimingSpans:
    result = TimingSpans(FileHealth(TIMING_SPANS))
    for _, record in iter_records(path, result.health):
        step = _step(record)
        raw_spans = record.get("spans")
        if step is None or not isinstance(raw_spans, list):
            result.health.unusable += 1
            continue
        spans = []
        for span in raw_spans:
            if not isinstance(span, dict):
                continue
            name = span.get("name")
            start, end = _number(span.get("wall_start")), _number(span.get("wall_end"))
            if isinstance(name, str) and start is not None and end is not None and end >= start:
                spans.append((name, start, end))
        if not spans:
            result.health.unusable += 1
            continue
        first = min(start for _, start, _ in spans)
        last = max(end for _, _, end in spans)
        covered = union_length([(start, end) for _, start, end in spans])
        if step in result.steps:
            result.repeated_steps += 1
        result.steps[step] = StepSpans(last - first, covered, tuple(spans))
    return result


# --- trace_events.jsonl and tinker_lint_runtime.jsonl (Chrome trace events) ---------------------


@dataclass(frozen=True, slots=True)  # one per future-wrapped call: 10^5 of them in a long run
class Track:
    """One coroutine's track: keyed by ``args.track``, not by ``tid`` (tids collide, spec D2)."""

    segment: int  # which process appended it (0 for the first)
    pid: int  # the cookbook's fake pid: one per OS thread, renumbered from 0 in each process
    name: str  # ``args.track``: the coroutine's name, ``sync:<thread>``, or ``<task>:<op>:<n>``
    thread: str
    tid: int

    @property
    def is_future(self) -> bool:
        """A future-wrapped SDK call's own track: open from submission to completion."""
        return self.tid >= FUTURE_TID_START


@dataclass(frozen=True)
class Instant:
    name: str
    ts: float  # seconds
    track: int
    args: dict[str, Any]


@dataclass(frozen=True)
class WaitSite:
    """A recorded wait (the recorder's spans carry their call site in ``args``: ``file``, ``line``
    and ``function``): where the client blocked, from when to when, in seconds."""

    name: str
    file: str
    line: int
    function: str
    start: float
    end: float


@dataclass(frozen=True)
class StallSite:
    """A stall the watchdog recorded (a loop's ``stall`` span, or ``watchdog_starved``), with the
    lines it names: where the holder was (``args.line``) and the project's lines its stack samples
    passed through (``args.top_lines``, inclusive: a call site counts with its callees)."""

    name: str
    label: str
    rule: str
    start: float
    end: float
    lines: tuple[tuple[str, int], ...]  # (file, line), the holder's line first
    # (process segment, pid, the watchdog's stall number): one stall writes a span per loop it
    # stalled and one for the watchdog's own lateness. None: a file without numbers.
    key: tuple[int, int, int] | None = None


STALL_NAMES = frozenset({"stall", "watchdog_starved"})
# Records only the watchdog writes (tinker_lint/runtime/watchdog.py): ``clock_anchor`` when it
# starts (every version has written it), ``watchdog_summary`` when it stops, its stalls and GIL
# dumps, and ``<loop>_loop_lag_ms`` counters. The recorder shares the file and writes none of them.
WATCHDOG_NAMES = frozenset({"clock_anchor", "watchdog_summary", "gil_held_dump", *STALL_NAMES})
LOOP_LAG_SUFFIX = "_loop_lag_ms"


def stall_site(
    name: str, start: float, end: float, args: dict[str, Any], process: tuple[int, int] = (0, 0)
) -> StallSite | None:
    if name not in STALL_NAMES:
        return None
    lines: list[tuple[str, int]] = []
    for item in [args.get("line"), *(args.get("top_lines") or [])]:
        if not isinstance(item, dict):
            continue
        file, line = item.get("file"), item.get("line")
        if not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool):
            continue
        if (file, line) not in lines:
            lines.append((file, line))
    label, rule, number = args.get("label"), args.get("rule"), _int(args, "stall")
    return StallSite(
        name,
        label if isinstance(label, str) else "",
        rule if isinstance(rule, str) else "",
        start,
        end,
        tuple(lines),
        (*process, number) if number >= 0 else None,
    )


def merge_stalls(sites: Iterable[StallSite]) -> list[StallSite]:
    """One site per watchdog stall: the sites that share a key become one, from the first start
    to the last end, with every line they name (in the order first named)."""
    merged: list[StallSite] = []
    at: dict[tuple[int, int, int], int] = {}
    for site in sites:
        where = at.get(site.key) if site.key is not None else None
        if where is None:
            if site.key is not None:
                at[site.key] = len(merged)
            merged.append(site)
            continue
        first = merged[where]
        lines = first.lines + tuple(line for line in site.lines if line not in first.lines)
        merged[where] = replace(
            first, start=min(first.start, site.start), end=max(first.end, site.end), lines=lines
        )
    return merged


def wait_site(name: str, start: float, end: float, args: dict[str, Any]) -> WaitSite | None:
    file, line, function = args.get("file"), args.get("line"), args.get("function", "")
    if not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool):
        return None
    return WaitSite(name, file, line, function if isinstance(function, str) else "", start, end)


class SpanTable:
    """Closed spans in parallel arrays (about 40 bytes a span): a 100 MB trace stays small."""

    def __init__(self) -> None:
        self.start = array("d")
        self.end = array("d")
        self.depth = array("i")
        self.name_id = array("i")
        self.track_id = array("i")
        self.step = array("q")  # from the E event's ``args.step``; -1 when absent
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.start)

    def add(self, name: str, start: float, end: float, depth: int, track: int, step: int) -> None:
        name_id = self._name_ids.get(name)
        if name_id is None:
            name_id = self._name_ids[name] = len(self.names)
            self.names.append(name)
        self.start.append(start)
        self.end.append(end)
        self.depth.append(depth)
        self.name_id.append(name_id)
        self.track_id.append(track)
        self.step.append(step)

    def name(self, index: int) -> str:
        return self.names[self.name_id[index]]


@dataclass
class TraceHealth:
    """What the B/E repair and the process boundaries found (spec §1.3 D1, D2; §1.2 resume)."""

    lost_begin: int = 0  # E events whose B was never seen (an orphan E)
    lost_end: int = 0  # B events closed by an outer E, or left open at the end of the file
    unclosed_at_end: int = 0  # of lost_end: still open when the file ended
    tid_collisions: int = 0  # distinct tracks sharing a (pid, tid) with an earlier track
    resume_boundaries: int = 0  # another process appended to the same file
    unknown_phases: int = 0


@dataclass
class TraceEvents:
    """A Chrome-trace JSONL file read into closed spans, instants, counters and health."""

    health: FileHealth
    repair: TraceHealth = field(default_factory=TraceHealth)
    spans: SpanTable = field(default_factory=SpanTable)
    tracks: list[Track] = field(default_factory=list)
    instants: list[Instant] = field(default_factory=list)
    counter_max: dict[str, float] = field(default_factory=dict)
    # Per process segment: (first ts, last ts) in seconds, after the segment's offset.
    segments: list[tuple[float, float]] = field(default_factory=list)
    # The union of the closed spans on the client's own tracks (not futures'), at every depth.
    client_union: UnionAccumulator = field(default_factory=UnionAccumulator)
    # Spans whose args name a call site (the recorder's waits): kept whole, they are few.
    waits: list[WaitSite] = field(default_factory=list)
    # The watchdog's stalls (few), one per stall once the file is read (merge_stalls).
    stalls: list[StallSite] = field(default_factory=list)
    # (perf_counter seconds, time.time() seconds): the recorder's or watchdog's clock anchor.
    clock_anchor: tuple[float, float] | None = None
    # The watchdog's own records (``WATCHDOG_NAMES``, lag counters): 0 means it did not write to
    # this file, so no stall was measured (rather than none seen).
    watchdog_records: int = 0

    def span_seconds(self) -> float:
        return sum(last - first for first, last in self.segments)


class _EventReader:
    """The state of one pass over a Chrome-trace JSONL file."""

    def __init__(self, result: TraceEvents, real_pids: bool = False) -> None:
        self.result = result
        # tinker-lint's runtime file carries OS process ids: a process is its pid, and one
        # process's writers (the recorder, the watchdog, which writes a stall's B when the stall
        # ends) may append out of order. The cookbook's pids are fake and restart at 0.
        self.real_pids = real_pids
        self.max_ts_pid: int | None = None
        self.segment = 0
        self.offset_us = 0.0  # added to a backwards segment's ts to lay it after the previous
        self.max_ts_us: float | None = None
        self.segment_first_us = 0.0
        self.named_pids: set[int] = set()  # pids whose process_name this segment has written
        self.track_ids: dict[tuple[int, int, str], int] = {}
        self.future_tracks: dict[tuple[int, int], int] = {}  # (segment, pid) -> shared track
        self.future_stacks: dict[tuple[int, int, str], int] = {}  # open future calls
        self.future_owner: dict[int, tuple[int, tuple[int, int, str]]] = {}
        self.futures_done = 0
        self.first_track_at: dict[tuple[int, int, int], str] = {}
        self.collided: set[tuple[int, int, int, str]] = set()
        # Per track: the open B events as (name, ts seconds, depth).
        self.stacks: dict[int, list[tuple[str, float, int]]] = {}
        # The last B read: the cookbook writes a span's B before its process's metadata, so a
        # process boundary found at the metadata moves that B into the new segment.
        # (record index, pid, track id, the segment's (first, max) ts before it)
        self.last_begin: tuple[int, int, int, float | None, float | None] | None = None
        self.index = 0

    def new_segment(self, ts_us: float | None) -> None:
        self.close_segment()
        self.segment += 1
        self.result.repair.resume_boundaries += 1
        self.named_pids = set()
        if ts_us is not None and self.max_ts_us is not None and ts_us < self.max_ts_us:
            # Another boot's clock: lay the new process's events after the previous ones. A
            # boundary found at the metadata (ts_us None) is on the previous process's clock.
            self.offset_us = self.max_ts_us + self.offset_us - ts_us
        self.max_ts_us = None

    def close_segment(self) -> None:
        if self.max_ts_us is None:
            return
        first = self.segment_first_us
        self.result.segments.append(
            ((first + self.offset_us) / 1e6, (self.max_ts_us + self.offset_us) / 1e6)
        )

    def see_ts(self, ts_us: float) -> None:
        if self.max_ts_us is None:
            self.max_ts_us = ts_us
            self.segment_first_us = ts_us
        else:
            self.max_ts_us = max(self.max_ts_us, ts_us)
            self.segment_first_us = min(self.segment_first_us, ts_us)

    def track(self, pid: int, tid: int, args: dict[str, Any]) -> int:
        """The stack id of the event's track: its index in ``tracks``, or, for a future-wrapped
        call (one span on a track of its own), a negative id that lives until the call ends."""
        name = args.get("track")
        name = name if isinstance(name, str) else f"tid:{tid}"
        if tid >= FUTURE_TID_START:
            return self.future_stack(pid, name, args)
        key = (self.segment, pid, name)
        track_id = self.track_ids.get(key)
        if track_id is None:
            track_id = self.track_ids[key] = self.new_track(pid, name, args, tid)
            first = self.first_track_at.setdefault((self.segment, pid, tid), name)
            if first != name and (self.segment, pid, tid, name) not in self.collided:
                self.collided.add((self.segment, pid, tid, name))
                self.result.repair.tid_collisions += 1
        return track_id

    def new_track(self, pid: int, name: str, args: dict[str, Any], tid: int) -> int:
        thread = args.get("thread")
        thread = sys.intern(thread) if isinstance(thread, str) else ""
        self.result.tracks.append(Track(self.segment, pid, name, thread, tid))
        return len(self.result.tracks) - 1

    def future_stack(self, pid: int, name: str, args: dict[str, Any]) -> int:
        # A long RL run makes 10^5 future calls: their spans share one track record per thread
        # (its ``name`` is FUTURE_CALLS), and each call's stack is forgotten once it ends.
        key = (self.segment, pid, name)
        stack_id = self.future_stacks.get(key)
        if stack_id is None:
            shared = self.future_tracks.get((self.segment, pid))
            if shared is None:
                shared = self.new_track(pid, FUTURE_CALLS, args, FUTURE_TID_START)
                self.future_tracks[(self.segment, pid)] = shared
            stack_id = self.future_stacks[key] = -len(self.future_owner) - 1 - self.futures_done
            self.future_owner[stack_id] = (shared, key)
        return stack_id

    def owner(self, stack_id: int) -> int:
        return stack_id if stack_id >= 0 else self.future_owner[stack_id][0]

    def forget(self, stack_id: int) -> None:
        del self.stacks[stack_id]
        if stack_id < 0:
            _, key = self.future_owner.pop(stack_id)
            del self.future_stacks[key]
            self.futures_done += 1

    def read(self, record: dict[str, Any], health: FileHealth) -> None:
        self.index += 1
        name = record.get("name")
        if isinstance(name, str) and (name in WATCHDOG_NAMES or name.endswith(LOOP_LAG_SUFFIX)):
            self.result.watchdog_records += 1
        if "perf_counter_us" in record or "perf_counter_us" in _args(record):
            self.anchor(record)
            return
        phase = record.get("ph")
        name = record.get("name")
        pid, tid = record.get("pid", 0), record.get("tid", 0)
        if not isinstance(pid, int) or not isinstance(tid, int) or not isinstance(name, str):
            health.unusable += 1
            return
        args = _args(record)
        if phase == "M":
            if name == "process_name" and tid == 0:
                if pid in self.named_pids:  # a process names each of its pids once
                    moved = self.take_last_begin(pid)
                    self.new_segment(None)
                    if moved is not None:
                        self.begin_moved(*moved)
                self.named_pids.add(pid)
            return
        ts_us = _number(record.get("ts"))
        if ts_us is None:
            health.unusable += 1
            return
        if (
            self.max_ts_us is not None
            and ts_us < self.max_ts_us - BACKWARDS_RESUME_US
            and not (self.real_pids and pid == self.max_ts_pid)
        ):
            self.new_segment(ts_us)
        if self.max_ts_us is None or ts_us >= self.max_ts_us:
            self.max_ts_pid = pid
        ts = (ts_us + self.offset_us) / 1e6
        if phase != "B":
            self.see_ts(ts_us)
        if phase == "B":
            track_id = self.track(pid, tid, args)
            stack = self.stacks.setdefault(track_id, [])
            before = (
                (self.segment_first_us, self.max_ts_us)
                if self.max_ts_us is not None
                else (None, None)
            )
            self.see_ts(ts_us)
            stack.append((name, ts, len(stack)))
            self.last_begin = (self.index, pid, track_id, *before)
            return
        elif phase == "E":
            self.end(name, ts, self.track(pid, tid, args), args)
        elif phase == "X":
            duration = _number(record.get("dur"))
            if duration is None or duration < 0:
                health.unusable += 1
                return
            track_id = self.track(pid, tid, args)
            depth = len(self.stacks.get(track_id, ()))
            self.result.spans.add(
                name, ts, ts + duration / 1e6, depth, track_id, _int(args, "step")
            )
            # The recorder writes each wait as one complete event, its call site in ``args``;
            # the watchdog a stall of every thread (``watchdog_starved``).
            self.keep_wait(name, ts, ts + duration / 1e6, args)
            self.keep_stall(name, ts, ts + duration / 1e6, args, (self.segment, pid))
        elif phase in ("i", "I"):
            track_id = self.owner(self.track(pid, tid, args))
            self.result.instants.append(Instant(name, ts, track_id, args))
        elif phase == "C":
            for key, value in args.items():
                number = _number(value)
                if number is not None:
                    counter = f"{name}.{key}" if key != "value" else name
                    previous = self.result.counter_max.get(counter, number)
                    self.result.counter_max[counter] = max(previous, number)
        else:
            self.result.repair.unknown_phases += 1

    def end(self, name: str, ts: float, stack_id: int, args: dict[str, Any]) -> None:
        """Close the innermost open span of that name on the track (spec D1): the spans opened
        inside it lost their E; an E with no such span open lost its B."""
        stack = self.stacks.get(stack_id, [])
        for position in range(len(stack) - 1, -1, -1):
            if stack[position][0] == name:
                break
        else:
            self.result.repair.lost_begin += 1
            if not stack and stack_id < 0:
                self.stacks[stack_id] = stack
                self.forget(stack_id)
            return
        self.result.repair.lost_end += len(stack) - 1 - position
        _, start, depth = stack[position]
        del stack[position:]
        end = max(ts, start)
        self.result.spans.add(name, start, end, depth, self.owner(stack_id), _int(args, "step"))
        self.keep_wait(name, start, end, args)
        track = self.result.tracks[self.owner(stack_id)]
        self.keep_stall(name, start, end, args, (track.segment, track.pid))
        if stack_id >= 0:
            self.result.client_union.add(start, end)
        if not stack:
            self.forget(stack_id)

    def keep_stall(
        self, name: str, start: float, end: float, args: dict[str, Any], process: tuple[int, int]
    ) -> None:
        site = stall_site(name, start, end, args, process)
        if site is not None:
            self.result.stalls.append(site)

    def keep_wait(self, name: str, start: float, end: float, args: dict[str, Any]) -> None:
        if "file" in args:
            site = wait_site(name, start, end, args)
            if site is not None:
                self.result.waits.append(site)

    def take_last_begin(self, pid: int) -> tuple[str, float, Track] | None:
        """Take back the B read just before this process's metadata (B, thread_name, then
        process_name): it opened the new process's first span. Returns (name, ts us, old track)."""
        last = self.last_begin
        self.last_begin = None
        if last is None or last[1] != pid or last[0] != self.index - 2:
            return None
        _, _, old_track, first_us, max_us = last
        stack = self.stacks.get(old_track)
        if not stack or old_track < 0:
            return None
        name, start, _ = stack.pop()
        # The old segment ends where it ended before that B.
        self.max_ts_us = max_us
        if first_us is not None:
            self.segment_first_us = first_us
        return name, start * 1e6 - self.offset_us, self.result.tracks[old_track]

    def begin_moved(self, name: str, ts_us: float, old: Track) -> None:
        self.see_ts(ts_us)
        track_id = self.track(old.pid, old.tid, {"track": old.name, "thread": old.thread})
        self.stacks.setdefault(track_id, []).append((name, ts_us / 1e6, 0))

    def anchor(self, record: dict[str, Any]) -> None:
        source = record if "perf_counter_us" in record else _args(record)
        perf_us, wall = _number(source.get("perf_counter_us")), _number(source.get("time_time_s"))
        if perf_us is not None and wall is not None and self.result.clock_anchor is None:
            self.result.clock_anchor = (perf_us / 1e6, wall)

    def finish(self) -> None:
        self.close_segment()
        self.result.stalls = merge_stalls(self.result.stalls)
        for stack in self.stacks.values():
            self.result.repair.lost_end += len(stack)
            self.result.repair.unclosed_at_end += len(stack)


def _args(record: dict[str, Any]) -> dict[str, Any]:
    args = record.get("args")
    return args if isinstance(args, dict) else {}


def _int(args: dict[str, Any], key: str) -> int:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def read_trace_events(path: Path, name: str = TRACE_EVENTS) -> TraceEvents:
    result = TraceEvents(FileHealth(name))
    records = (record for _, record in iter_records(path, result.health))
    return trace_from_records(records, result, real_pids=name == RUNTIME)


def trace_from_records(
    records: Iterable[dict[str, Any]], result: TraceEvents, real_pids: bool = False
) -> TraceEvents:
    """The event reader over already-parsed records (a file's, or a test's)."""
    reader = _EventReader(result, real_pids)
    for record in records:
        reader.read(record, result.health)
    reader.finish()
    return result


# --- capture/train_op.jsonl, capture/sample.jsonl ------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One SDK request from submission to completion, in seconds on its file's clock."""

    name: str
    submit: float
    done: float
    iteration: int = -1  # capture's ``scope.iteration``, when the loop sets one


@dataclass
class Capture:
    health: FileHealth
    ops: list[Op] = field(default_factory=list)
    unfinished: int = 0  # "submitted" records, or no latency: never completed while recorded
    errors: int = 0


def read_capture(path: Path, name: str) -> Capture:
    """Records are written at completion: ``created_at`` (epoch s) is the submission, and
    ``latency_sec`` runs from just before it to done (capture/instrument.py L156-160, L497-501)."""
    result = Capture(FileHealth(name))
    for _, record in iter_records(path, result.health):
        created, latency = _number(record.get("created_at")), _number(record.get("latency_sec"))
        op = record.get("op") if record.get("kind") == "train_op" else record.get("kind")
        if created is None or not isinstance(op, str):
            result.health.unusable += 1
            continue
        if record.get("status") == "error":
            result.errors += 1
        if latency is None or latency < 0 or record.get("status") == "submitted":
            result.unfinished += 1
            continue
        scope = record.get("scope")
        iteration = _int(scope, "iteration") if isinstance(scope, dict) else -1
        result.ops.append(Op(op, created, created + latency, iteration))
    result.ops.sort(key=lambda op: (op.submit, op.done, op.name))
    return result
