"""The seam between measured costs and static findings (spec §6(a) "Linking to static findings").

``link(findings, analysis, waits)`` takes the linter's findings as plain ``Diagnostic`` values (so
this package never imports the rules or the engine) and the measured events, and charges each
finding with what the run shows at its line. Implemented: join key 1, the most exact one: a
finding's line equals a recorded wait's call site; the bubbles whose previous op completed during
that wait belong to it. Join key 2: a finding's line is the holder's line of a watchdog stall, or
on its sampled stack (inclusive: TNK104 at a ``.result()`` call site, TNK2xx at the hot loop's call
of a helper); the stall belongs to it. Join key 3, for a finding neither key links (a run with the
cookbook's trace but no recorder or watchdog): the innermost cookbook span whose source holds the
finding's line (``span_index``), charged with its instances in the trace and with the bubbles whose
previous op completed inside one. It is coarse: every finding in a span shares its cost.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io.files import read_bytes
from tinker_lint.trace.analysis import Analysis, BubbleFigure
from tinker_lint.trace.readers import StallSite, TraceEvents, WaitSite
from tinker_lint.trace.span_index import SourceSpan, innermost

WAIT_SITE = "recorded wait call site"
STALL_STACK = "on a watchdog stall's stack"
TRACED_SPAN = "inside a traced span (coarse: the findings in it share its cost)"


@dataclass(frozen=True)
class Linked:
    finding: Diagnostic
    evidence: str  # which join key matched (WAIT_SITE)
    waits: int  # recorded waits at the finding's line
    wait_seconds: float
    bubbles: int  # bubbles whose previous op completed during one of those waits
    turnaround: float  # their client turnaround, summed
    stalls: int = 0  # watchdog stalls that name the finding's line
    stall_seconds: float = 0.0
    stall_labels: tuple[str, ...] = ()  # their kinds, sorted, each once
    span: str | None = None  # join key 3: the span holding the line (``parent>name``)
    span_instances: int = 0
    span_seconds: float = 0.0

    def summary(self, analysis: Analysis) -> str:
        """``TNK101 train.py:42: 4 bubbles after this wait; ...`` for the report."""
        parts = []
        if self.waits:
            parts.append(f"{self.bubbles} bubble(s) after this wait")
            parts.append(f"{self.waits} wait(s), {self.wait_seconds:.3f} s blocked")
            if self.bubbles:
                parts.append(f"client turnaround {self.turnaround:.3f} s")
        if self.stalls:
            kinds = ", ".join(self.stall_labels)
            parts.append(f"{self.stalls} stall(s), {self.stall_seconds:.3f} s ({kinds})")
        training = analysis.training
        if self.span is not None:
            parts.append(
                f"inside span `{self.span}`: {self.span_instances} instance(s), "
                f"{self.span_seconds:.3f} s"
            )
            if analysis.coverage is not None and analysis.coverage[1] > 0:
                parts[-1] += f" ({self.span_seconds / analysis.coverage[1]:.0%} of the run)"
            if training is not None and training.on_trace_clock:
                parts.append(f"{self.bubbles} bubble(s) after an op completed inside it")
        if training is not None and training.window > 0:
            parts.append(
                f"nothing queued {training.nothing_queued_share:.0%} of the training window"
            )
        where = f"{self.finding.path}:{self.finding.line}"
        return f"{self.finding.code} {where}: {'; '.join(parts)} (evidence: {self.evidence})"


class BadFindings(Exception):
    pass


def read_findings(path: Path) -> list[Diagnostic]:
    """The findings of ``tinker-lint --output-format json`` (ruff's shape: a list of objects with
    ``code``, ``filename``, ``location.row`` and ``location.column``). A small file: read whole."""
    try:
        # A regular file only (a FIFO would wait for a writer, a device never end), size-capped.
        data = json.loads(read_bytes(path).decode("utf-8"))
    except OSError as error:  # NotReadable (a FIFO, a device, too large) is one too
        raise BadFindings(f"{path}: cannot read findings: {error.strerror or error}") from None
    except ValueError as error:  # not UTF-8, not JSON
        raise BadFindings(f"{path}: cannot read findings: {error}") from None
    except RecursionError:
        raise BadFindings(f"{path}: cannot read findings: JSON nested too deeply") from None
    if not isinstance(data, list):
        raise BadFindings(
            f"{path}: expected the JSON list `tinker-lint --output-format json` writes"
        )
    findings = []
    for item in data:
        diagnostic = _diagnostic(item)
        if diagnostic is None:
            raise BadFindings(f"{path}: not a tinker-lint finding: {json.dumps(item)[:80]}")
        findings.append(diagnostic)
    return findings


def _diagnostic(item: Any) -> Diagnostic | None:
    if not isinstance(item, dict) or not isinstance(item.get("location"), dict):
        return None
    code, path, message = item.get("code"), item.get("filename"), item.get("message", "")
    row, column = item["location"].get("row"), item["location"].get("column")
    if not (isinstance(code, str) and isinstance(path, str) and isinstance(message, str)):
        return None
    if not (isinstance(row, int) and isinstance(column, int)):
        return None
    return Diagnostic(path, row, column, code, message)


def to_json(linked: Linked) -> dict[str, Any]:
    return {
        "code": linked.finding.code,
        "filename": linked.finding.path,
        "row": linked.finding.line,
        "evidence": linked.evidence,
        "waits": linked.waits,
        "wait_seconds": linked.wait_seconds,
        "bubbles": linked.bubbles,
        "turnaround": linked.turnaround,
        "stalls": linked.stalls,
        "stall_seconds": linked.stall_seconds,
        "stall_labels": list(linked.stall_labels),
        "span": linked.span,
        "span_instances": linked.span_instances,
        "span_seconds": linked.span_seconds,
    }


def same_file(recorded: str, finding_path: str) -> bool:
    """The recorder writes ``co_filename`` (absolute); findings name paths as given on the command
    line (relative). The same file when one's parts end the other's."""
    left, right = PurePath(recorded).parts, PurePath(finding_path).parts
    shorter, longer = (left, right) if len(left) <= len(right) else (right, left)
    shorter = tuple(part for part in shorter if part not in (".", ""))
    return bool(shorter) and longer[len(longer) - len(shorter) :] == shorter


def link(
    findings: Sequence[Diagnostic],
    analysis: Analysis,
    waits: Sequence[WaitSite],
    stalls: Sequence[StallSite] = (),
    trace: TraceEvents | None = None,
    spans_of: Callable[[str], Sequence[SourceSpan]] | None = None,
) -> list[Linked]:
    """Each finding with a recorded wait at its line (charged with that wait's bubbles), or a
    watchdog stall whose holder line or sampled stack holds its line; else, with the trace and
    the span regions of the finding's file (``spans_of(path)``, asked only then), the span holding
    it.
    Waits and ops must share a clock: the recorder writes both on ``perf_counter``; bubbles from
    capture without a clock anchor are not charged (their wait cannot be found)."""
    training = analysis.training
    bubbles = training.bubbles if training is not None and training.on_trace_clock else ()
    linked = []
    instances_of: dict[SourceSpan, list[tuple[float, float]]] = {}  # one pass per span region
    for finding in sorted(findings):
        here = [
            wait
            for wait in waits
            if wait.line == finding.line and same_file(wait.file, finding.path)
        ]
        stalled = [
            stall
            for stall in stalls
            if any(
                line == finding.line and same_file(file, finding.path) for file, line in stall.lines
            )
        ]
        if not here and not stalled:
            spanned = _in_span(finding, trace, spans_of, bubbles, instances_of)
            if spanned is not None:
                linked.append(spanned)
            continue
        # A wait observes the previous op's completion: the completion falls inside the wait.
        after = [
            bubble
            for bubble in bubbles
            if any(wait.start <= bubble.completed_at <= wait.end for wait in here)
        ]
        linked.append(
            Linked(
                finding,
                ", ".join(e for e, found in ((WAIT_SITE, here), (STALL_STACK, stalled)) if found),
                len(here),
                sum(wait.end - wait.start for wait in here),
                len(after),
                sum(bubble.turnaround for bubble in after),
                len(stalled),
                sum(stall.end - stall.start for stall in stalled),
                tuple(sorted({stall.label or stall.name for stall in stalled})),
            )
        )
    return linked


def _in_span(
    finding: Diagnostic,
    trace: TraceEvents | None,
    spans_of: Callable[[str], Sequence[SourceSpan]] | None,
    bubbles: Sequence[BubbleFigure],
    instances_of: dict[SourceSpan, list[tuple[float, float]]],
) -> Linked | None:
    if trace is None or spans_of is None:
        return None
    region = innermost(list(spans_of(finding.path)), finding.line)
    if region is None:
        return None
    if region not in instances_of:
        instances_of[region] = span_instances(trace, region)
    instances = instances_of[region]
    if not instances:
        return None
    inside = [
        bubble
        for bubble in bubbles
        if any(start <= bubble.completed_at <= end for start, end in instances)
    ]
    return Linked(
        finding,
        TRACED_SPAN,
        0,
        0.0,
        len(inside),
        sum(bubble.turnaround for bubble in inside),
        span=region.label(),
        span_instances=len(instances),
        span_seconds=sum(end - start for start, end in instances),
    )


def span_instances(trace: TraceEvents, region: SourceSpan) -> list[tuple[float, float]]:
    """The closed client spans named like ``region``, and, when the source shows the span it
    opens in, directly inside one of that name on the same track (spec D5: names are reused)."""
    spans, tracks = trace.spans, trace.tracks
    client = [i for i in range(len(spans)) if not tracks[spans.track_id[i]].is_future]
    named = [i for i in client if spans.name(i) == region.name]
    if region.parent is None:
        return [(spans.start[i], spans.end[i]) for i in named]
    # The parents by track, by start: an instance's parent is the latest one starting before it
    # at one depth less (spans on a track nest).
    parents: dict[int, list[int]] = {}
    for i in client:
        if spans.name(i) == region.parent:
            parents.setdefault(spans.track_id[i], []).append(i)
    starts: dict[int, list[float]] = {}
    for track, indices in parents.items():
        indices.sort(key=lambda i: (spans.start[i], i))
        starts[track] = [spans.start[i] for i in indices]
    found = []
    for i in named:
        track = spans.track_id[i]
        candidates = parents.get(track, [])
        position = bisect.bisect_right(starts.get(track, []), spans.start[i]) - 1
        while position >= 0:
            j = candidates[position]
            if spans.end[j] >= spans.end[i] and spans.depth[j] == spans.depth[i] - 1:
                found.append((spans.start[i], spans.end[i]))
                break
            position -= 1
    return found
