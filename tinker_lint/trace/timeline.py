"""Interval maths on one timeline (spec §6(a)), as pure functions of (start, end) pairs in seconds.

Intervals are half-open, [start, end): an op that completes at t is no longer in flight at t, so
a submit at the very instant of the previous completion still finds the queue empty. Empty and
reversed intervals count for nothing. Results never depend on the input order.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Interval = tuple[float, float]

NO_SPAN = "(no span open)"


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """The union as sorted, disjoint intervals (touching ones joined)."""
    merged: list[Interval] = []
    for start, end in sorted(pair for pair in intervals if pair[1] > pair[0]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def union_length(intervals: Iterable[Interval]) -> float:
    """Seconds covered by at least one interval: robust to overlap and to lost nesting."""
    return sum(end - start for start, end in merge(intervals))


def depth_profile(
    intervals: Iterable[Interval], window: Interval | None = None
) -> dict[int, float]:
    """Seconds spent at each number of intervals open at once, over ``window`` (default: from the
    first start to the last end). Depth 0 appears only when the window holds a gap."""
    starts: list[float] = []
    ends: list[float] = []
    for start, end in intervals:
        if end > start:
            starts.append(start)
            ends.append(end)
    return depth_profile_of(starts, ends, window)


def depth_profile_of(
    starts: Iterable[float], ends: Iterable[float], window: Interval | None = None
) -> dict[int, float]:
    """``depth_profile`` of intervals given as their starts and ends (each end after its start):
    two sorted lists of floats, not a list of pairs, for the 10^5 calls of a long trace."""
    opened, closed = sorted(starts), sorted(ends)
    if not opened:
        if window is None or window[1] <= window[0]:
            return {}
        return {0: window[1] - window[0]}
    low, high = window if window is not None else (opened[0], closed[-1])
    profile: dict[int, float] = defaultdict(float)
    depth, previous = 0, low
    i = j = 0
    while i < len(opened) or j < len(closed):
        # At one instant ends come first: intervals are half-open.
        if j < len(closed) and (i == len(opened) or closed[j] <= opened[i]):
            time, change = closed[j], -1
            j += 1
        else:
            time, change = opened[i], 1
            i += 1
        if time > previous:
            segment = min(time, high) - previous
            if segment > 0:
                profile[depth] += segment
            previous = max(previous, min(time, high))
        depth += change
    if high > previous:
        profile[depth] += high - previous
    return dict(sorted((key, value) for key, value in profile.items() if value > 0))


class UnionAccumulator:
    """The union of intervals added one by one, in any order, in memory proportional to its
    disjoint pieces (a client track's spans mostly touch): pending intervals are merged in
    batches."""

    BATCH = 4096

    def __init__(self) -> None:
        self._merged: list[Interval] = []
        self._pending: list[Interval] = []

    def add(self, start: float, end: float) -> None:
        self._pending.append((start, end))
        if len(self._pending) >= self.BATCH:
            self._compact()

    def _compact(self) -> None:
        self._merged = merge(self._merged + self._pending)
        self._pending = []

    def intervals(self) -> list[Interval]:
        self._compact()
        return list(self._merged)

    def length(self) -> float:
        return sum(end - start for start, end in self.intervals())


def zero_intervals(intervals: Iterable[Interval], window: Interval) -> list[Interval]:
    """The parts of ``window`` that no interval covers."""
    low, high = window
    gaps: list[Interval] = []
    cursor = low
    for start, end in merge(intervals):
        if start > cursor:
            gaps.append((cursor, min(start, high)))
        cursor = max(cursor, end)
        if cursor >= high:
            break
    if cursor < high:
        gaps.append((cursor, high))
    return [(start, end) for start, end in gaps if end > start]


@dataclass(frozen=True)
class Bubble:
    """A submit made while no op was in flight (the first submit of all is not one)."""

    op: int  # index into the ops given: the op submitted into the empty queue
    previous: int  # index of the op whose completion emptied it (the latest completion)
    submit: float
    completed: float  # the previous op's completion

    @property
    def turnaround(self) -> float:
        """Client time between seeing the queue empty and refilling it."""
        return self.submit - self.completed


def submit_order(ops: Sequence[Interval]) -> list[int]:
    """Indices by submit time; ties by completion, then by index (same input, same order)."""
    return sorted(range(len(ops)), key=lambda index: (ops[index][0], ops[index][1], index))


def bubbles(ops: Sequence[Interval]) -> list[Bubble]:
    """Each op submitted while every earlier-submitted op had completed (spec §6(a) "Bubble")."""
    found: list[Bubble] = []
    in_flight: list[tuple[float, int]] = []  # heap of (completion, index) of submitted ops
    latest: tuple[float, int] | None = None  # the latest completion seen so far
    for index in submit_order(ops):
        submit, done = ops[index]
        while in_flight and in_flight[0][0] <= submit:
            completed = heapq.heappop(in_flight)
            if latest is None or completed >= latest:
                latest = completed
        if not in_flight and latest is not None:
            found.append(Bubble(index, latest[1], submit, latest[0]))
        heapq.heappush(in_flight, (max(done, submit), index))
    return found


@dataclass(frozen=True)
class Span:
    """A client span on the timeline, for asking what the client was doing at an instant."""

    start: float
    end: float
    depth: int
    name: str


def _innermost_key(span: Span) -> tuple[float, int, str]:
    # The span opened last is the one the client is inside; nesting depth breaks exact ties.
    return (span.start, span.depth, span.name)


def innermost_at(spans: Iterable[Span], time: float) -> str:
    """The name of the innermost span open at ``time`` (``NO_SPAN`` if none)."""
    open_spans = [span for span in spans if span.start <= time < span.end]
    if not open_spans:
        return NO_SPAN
    return max(open_spans, key=_innermost_key).name


def blame(spans: Iterable[Span], windows: Iterable[Interval]) -> dict[str, float]:
    """Seconds of ``windows`` spent inside each innermost open span (spec "Idle blame")."""
    merged = merge(windows)
    points: list[tuple[float, int, int]] = []  # (time, kind, index); kind 0 end, 1 start
    live = [span for span in spans if span.end > span.start]
    for index, span in enumerate(live):
        points.append((span.start, 1, index))
        points.append((span.end, 0, index))
    for index, (start, end) in enumerate(merged):
        points.append((start, 3, index))  # window open: after the spans starting there
        points.append((end, 2, index))
    points.sort()
    result: dict[str, float] = defaultdict(float)
    active: dict[int, tuple[float, int, str]] = {}
    inside = 0
    previous: float | None = None
    for time, kind, index in points:
        if previous is not None and time > previous and inside:
            name = max(active.values())[2] if active else NO_SPAN
            result[name] += time - previous
        previous = time
        if kind == 0:
            del active[index]
        elif kind == 1:
            active[index] = _innermost_key(live[index])
        elif kind == 2:
            inside -= 1
        else:
            inside += 1
    # Largest first, to the microsecond: float noise in a sum does not decide a tie.
    return dict(sorted(result.items(), key=lambda item: (-round(item[1], 6), item[0])))


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
