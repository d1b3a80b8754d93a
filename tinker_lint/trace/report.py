"""``tinker-lint trace`` output: text for people, JSON for tools, GitHub annotations and SARIF for
CI, and a merged Perfetto trace."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from tinker_lint import __version__
from tinker_lint.codes import ALL_CODES, name_of
from tinker_lint.diagnostics import docs_url
from tinker_lint.report.sarif_paths import INFORMATION_URI, SCHEMA_URI, SRCROOT, artifact, root_uri
from tinker_lint.trace import link, readers
from tinker_lint.trace.analysis import Analysis, Concurrency, LogSet, to_json
from tinker_lint.trace.link import Linked

BUBBLES_LISTED = 10  # the rest are counted: a long serialized run has one per submit
CLOCK_CYCLE_SECONDS = 10.0  # the Tinker docs' figure ("discrete clock cycles (~10 seconds each)")


def write_json(analysis: Analysis, out: TextIO, linked: Sequence[Linked] | None = None) -> None:
    data = to_json(analysis)
    if linked is not None:
        data["linked"] = [link.to_json(item) for item in linked]
    json.dump(data, out, indent=2)
    out.write("\n")


def _seconds(value: float) -> str:
    return f"{value * 1000:.1f} ms" if abs(value) < 1 else f"{value:.3f} s"


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole > 0 else "n/a"


def _profile(concurrency: Concurrency) -> str:
    depths = range(max(concurrency.profile, default=0) + 1)
    head = "/".join(str(depth) for depth in depths)
    values = " / ".join(f"{concurrency.profile.get(depth, 0.0):.3f}" for depth in depths)
    return f"seconds at depth {head}: {values}"


def text_lines(analysis: Analysis) -> Iterator[str]:
    levels = ", ".join(analysis.levels)
    yield f"{analysis.log_path}: evidence {levels} ({', '.join(analysis.files)})"
    steps = analysis.steps
    if steps is not None:
        first = min(steps.times)
        parts = [f"{len(steps.times)} steps from {first}"]
        if steps.median is not None:
            parts.append(f"median step {_seconds(steps.median)}")
        if steps.warmup_ratio is not None:
            parts.append(f"warm-up: step {first} takes {steps.warmup_ratio:.2f}x the median")
        if steps.get_batch_share is not None:
            parts.append(f"get_batch {steps.get_batch_share:.1%} of step time")
        yield f"steps: {'; '.join(parts)} ({steps.source})"
    if analysis.span_ranking:
        top = ", ".join(
            f"{name} {_seconds(seconds)} x{count}"
            for name, seconds, count in analysis.span_ranking[:5]
        )
        yield f"spans by time (timing_spans.jsonl, inclusive): {top}"
    if analysis.coverage is not None:
        covered, run = analysis.coverage
        yield f"coverage: client spans cover {_seconds(covered)} of {_seconds(run)} ({_share(covered, run)})"
    elif analysis.steps_covered is not None:
        covered, extent = analysis.steps_covered
        yield f"coverage per step: spans cover {_seconds(covered)} of {_seconds(extent)} ({_share(covered, extent)})"
    if analysis.sampling is not None:
        sampling = analysis.sampling
        yield (
            f"sampling: {sampling.ops} requests, up to {sampling.max_depth} in flight; "
            f"{_profile(sampling)} ({sampling.source})"
        )
    training = analysis.training
    if training is not None:
        concurrency = training.concurrency
        yield (
            f"training ops: {concurrency.ops}, up to {concurrency.max_depth} in flight; "
            f"{_profile(concurrency)} ({concurrency.source})"
        )
        yield (
            f"nothing queued: {_seconds(training.nothing_queued)} of {_seconds(training.window)} "
            f"from the first submit to the last completion "
            f"({training.nothing_queued_share:.1%}, a lower bound on server idle)"
        )
        yield f"bubbles: {len(training.bubbles)} (a training op submitted with none in flight)"
        for bubble in training.bubbles[:BUBBLES_LISTED]:
            where = f" in {bubble.completed_in}" if bubble.completed_in else ""
            yield (
                f"  at {bubble.submit:.3f} s: {bubble.op} submitted {_seconds(bubble.turnaround)} "
                f"after {bubble.previous} completed{where}"
            )
        if len(training.bubbles) > BUBBLES_LISTED:
            yield f"  ... and {len(training.bubbles) - BUBBLES_LISTED} more"
        # The seconds above are a lower bound: the server works in clock cycles, and a cycle that
        # starts with nothing queued is missed whole (spec §2, the Tinker docs' clock_cycles.py).
        yield (
            f"  on Tinker each can miss a whole clock cycle (about {CLOCK_CYCLE_SECONDS:.0f} s "
            f"in the docs): up to {len(training.bubbles) * CLOCK_CYCLE_SECONDS:.0f} s for these"
        )
        if training.idle_blame:
            blamed = ", ".join(
                f"{name} {_seconds(seconds)}" for name, seconds in training.idle_blame.items()
            )
            yield f"nothing queued while the client was in: {blamed}"
    stalls = analysis.stalls
    if stalls is not None:
        yield (
            f"stalls: {stalls.stalls}, {_seconds(stalls.seconds)} in all, longest "
            f"{_seconds(stalls.longest)}; GIL-hold dumps: {stalls.gil_dumps}"
        )
    if analysis.not_computable:
        yield "not computable:"
        for reason in analysis.not_computable:
            yield f"  - {reason}"
    if analysis.health:
        yield "health:"
        for name, notes in analysis.health.items():
            for note in notes:
                yield f"  {name}: {note}"


def write_text(analysis: Analysis, out: TextIO, linked: Sequence[Linked] | None = None) -> None:
    for line in text_lines(analysis):
        out.write(line + "\n")
    if linked is not None:
        out.write(f"static findings linked to a measured cost: {len(linked)}\n")
        for item in linked:
            out.write(f"  {item.summary(analysis)}\n")


# --- --perfetto ----------------------------------------------------------------------------------


def file_events(path: Path, label: str) -> Iterator[dict[str, Any]]:
    """A Chrome-trace JSONL file's records, line by line (damage skipped, as the readers do)."""
    for _, record in readers.iter_records(path, readers.FileHealth(label)):
        yield record


def capture_events(logs: LogSet) -> list[dict[str, Any]]:
    """The capture files' requests as X events on the trace's clock, each on its own track as
    the cookbook draws its future calls; none without the runtime file's clock anchor."""
    anchor = logs.runtime.clock_anchor if logs.runtime is not None else None
    if anchor is None:
        return []
    perf, wall = anchor
    events: list[dict[str, Any]] = []
    for capture in (logs.train_ops, logs.samples):
        for number, op in enumerate(capture.ops if capture is not None else ()):
            track = f"{capture.health.name if capture else ''}:{op.name}:{number}"
            events.append(
                {
                    "name": op.name,
                    "ph": "X",
                    "pid": 0,
                    "tid": 0,
                    "ts": (op.submit - wall + perf) * 1e6,
                    "dur": (op.done - op.submit) * 1e6,
                    "args": {"track": track, "iteration": op.iteration},
                }
            )
    return events


def perfetto_events(
    sources: Iterable[tuple[str, Iterable[dict[str, Any]]]],
) -> Iterator[dict[str, Any]]:
    """Every event of the sources (a label and its Chrome-trace records), renumbered so that
    nothing collides: a pid per (source, process, fake pid), since the cookbook's fake pids
    restart at 0 in each process; a tid per track name (``args.track``), since the cookbook's tids
    collide (spec D2). Each group and track is named once, by us."""
    next_pid = 0
    for label, source in sources:
        pids: dict[tuple[int, object], int] = {}
        tids: dict[tuple[int, str], int] = {}
        segment = 0
        named: set[object] = set()
        for record, opens_process in _with_process_starts(source):
            phase = record.get("ph")
            if phase is None:
                continue  # a clock anchor
            pid = record.get("pid", 0)
            if opens_process and pid in named:  # a process names each pid once: the next begins
                segment += 1
                named = set()
            if phase == "M":
                if record.get("name") == "process_name":
                    named.add(pid)
                continue  # groups and tracks are named below
            key = (segment, pid)
            if key not in pids:
                pids[key] = next_pid
                next_pid += 1
                name = f"{label} (process {segment}, pid {pid})"
                yield _metadata("process_name", pids[key], 0, name)
            args = record.get("args")
            track = args.get("track") if isinstance(args, dict) else None
            track = track if isinstance(track, str) else f"tid {record.get('tid', 0)}"
            new_pid = pids[key]
            if (new_pid, track) not in tids:
                tids[(new_pid, track)] = len(tids) + 1
                yield _metadata("thread_name", new_pid, tids[(new_pid, track)], track)
            yield dict(record, pid=new_pid, tid=tids[(new_pid, track)])


def _with_process_starts(
    records: Iterable[dict[str, Any]],
) -> Iterator[tuple[dict[str, Any], bool]]:
    """Each record, and whether it may open a process: a ``process_name`` event, or the B the
    cookbook writes just before it (B, its track's thread_name, then process_name)."""
    window: list[dict[str, Any]] = []
    for record in records:
        window.append(record)
        if len(window) == 3:
            first = window.pop(0)
            yield first, _opens(first, window)
    while window:
        first = window.pop(0)
        yield first, _opens(first, window)


def _opens(record: dict[str, Any], after: list[dict[str, Any]]) -> bool:
    if record.get("ph") == "M":
        return record.get("name") == "process_name"
    names = [event.get("name") for event in after if event.get("ph") == "M"]
    return record.get("ph") == "B" and "process_name" in names[:2] and len(names) == len(after)


def _metadata(name: str, pid: int, tid: int, label: str) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "ts": 0, "args": {"name": label}}


def write_perfetto(sources: Iterable[tuple[str, Iterable[dict[str, Any]]]], out: TextIO) -> int:
    """A bare JSON array (Chrome "JSON Array Format"), one event a line; returns the count."""
    count = 0
    out.write("[\n")
    for event in perfetto_events(sources):
        out.write(("," if count else "") + json.dumps(event) + "\n")
        count += 1
    out.write("]\n")
    return count


# --- GitHub Actions annotations ------------------------------------------------------------------


def _escape(text: str, *, in_property: bool = False) -> str:
    # As the Actions toolkit escapes workflow-command values.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def _command(kind: str, message: str, **properties: str) -> str:
    props = ",".join(
        f"{key}={_escape(value, in_property=True)}" for key, value in properties.items()
    )
    return f"::{kind} {props}::{_escape(message)}"


def github_lines(analysis: Analysis, linked: Sequence[Linked] | None = None) -> Iterator[str]:
    """A warning per kind of finding (bubbles, stalls) and per linked static finding, at its
    line; a notice for what could not be computed."""
    title = "tinker-lint trace"
    training = analysis.training
    if training is not None and training.bubbles:
        yield _command(
            "warning",
            f"{len(training.bubbles)} bubble(s): a training op submitted with none in flight; "
            f"nothing queued {_seconds(training.nothing_queued)} of {_seconds(training.window)} "
            f"({training.nothing_queued_share:.1%}, a lower bound on server idle)",
            title=title,
        )
    stalls = analysis.stalls
    if stalls is not None and stalls.stalls:
        yield _command(
            "warning",
            f"{stalls.stalls} stall(s), {_seconds(stalls.seconds)} in all, longest "
            f"{_seconds(stalls.longest)}",
            title=title,
        )
    for item in linked or ():
        path = item.finding.path.replace("\\", "/")
        yield _command(
            "warning",
            item.summary(analysis),
            title=f"{title} ({item.finding.code})",
            file=path,
            line=str(item.finding.line),
        )
    if analysis.not_computable:
        yield _command(
            "notice", "not computable: " + "; ".join(analysis.not_computable), title=title
        )


def write_github(analysis: Analysis, out: TextIO, linked: Sequence[Linked] | None = None) -> None:
    for line in github_lines(analysis, linked):
        out.write(line + "\n")


# --- SARIF ---------------------------------------------------------------------------------------

# The run-level results: what the trace measured, with no source line of its own.
BUBBLES_RULE = "trace-bubbles"
STALLS_RULE = "trace-stalls"
_TRACE_RULES = {
    BUBBLES_RULE: "training ops submitted with none in flight (the server sat idle)",
    STALLS_RULE: "stalls the watchdog saw (an event loop late, or the GIL held)",
}


def to_sarif(
    analysis: Analysis, linked: Sequence[Linked] | None = None, *, cwd: str | None = None
) -> dict[str, Any]:
    """SARIF 2.1.0: a result per linked finding at its line (the rule's code, the measured cost
    in the message and the properties), one for the bubbles and one for the stalls (no
    location), and what could not be computed as notifications."""
    codes = sorted({item.finding.code for item in linked or ()})
    rules: list[dict[str, Any]] = [
        {"id": rule, "name": rule, "shortDescription": {"text": text}}
        for rule, text in _TRACE_RULES.items()
    ] + [
        {
            "id": code,
            "name": name_of(code) if code in ALL_CODES else code,
            "helpUri": docs_url(code),
        }
        for code in codes
    ]
    index: dict[str, int] = {rule["id"]: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    training, stalls = analysis.training, analysis.stalls
    if training is not None and training.bubbles:
        message = (
            f"{len(training.bubbles)} bubble(s): a training op submitted with none in flight; "
            f"nothing queued {_seconds(training.nothing_queued)} of {_seconds(training.window)} "
            f"({training.nothing_queued_share:.1%}, a lower bound on server idle)"
        )
        properties = {
            "bubbles": len(training.bubbles),
            "nothing_queued_seconds": training.nothing_queued,
            "window_seconds": training.window,
        }
        results.append(_run_result(BUBBLES_RULE, index, message, properties))
    if stalls is not None and stalls.stalls:
        message = (
            f"{stalls.stalls} stall(s), {_seconds(stalls.seconds)} in all, longest "
            f"{_seconds(stalls.longest)}"
        )
        properties = {"stalls": stalls.stalls, "seconds": stalls.seconds}
        results.append(_run_result(STALLS_RULE, index, message, properties))
    for item in linked or ():
        region = {"startLine": item.finding.line, "startColumn": item.finding.col}
        physical = {"artifactLocation": artifact(item.finding.path), "region": region}
        results.append(
            {
                "ruleId": item.finding.code,
                "ruleIndex": index[item.finding.code],
                "level": "warning",
                "message": {"text": item.summary(analysis)},
                "locations": [{"physicalLocation": physical}],
                "properties": link.to_json(item),
            }
        )
    invocation = {
        "executionSuccessful": True,
        "toolExecutionNotifications": [
            {"level": "note", "message": {"text": f"not computable: {note}"}}
            for note in analysis.not_computable
        ],
    }
    run = {
        "tool": {
            "driver": {
                "name": "tinker-lint trace",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": root_uri(cwd)}},
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _run_result(
    rule: str, index: dict[str, int], message: str, properties: dict[str, Any]
) -> dict[str, Any]:
    return {
        "ruleId": rule,
        "ruleIndex": index[rule],
        "level": "warning",
        "message": {"text": message},
        "properties": properties,
    }


def write_sarif(analysis: Analysis, out: TextIO, linked: Sequence[Linked] | None = None) -> None:
    json.dump(to_sarif(analysis, linked), out, indent=2)
    out.write("\n")
