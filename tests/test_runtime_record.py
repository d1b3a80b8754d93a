"""The recorder (`tinker_lint.runtime.record`) on the real SDK's loop thread, against a fake
in-process server (`tests/runtime_scenarios.py`), alone and under the real cookbook tracing
(tinker-cookbook 0.6.1's `utils/trace.py`, from its wheel: its own dependencies are not needed for
tracing, so the wheel is unpacked and put on the path rather than installed).

Each scenario runs in a fresh interpreter: the wrapping and the SDK's thread are per process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import runtime_scenarios

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = Path(runtime_scenarios.__file__)
STEPS = runtime_scenarios.STEPS
pytestmark = pytest.mark.slow  # a fresh interpreter per scenario


def _wait_lines(source: Path = SCENARIOS) -> dict[str, int]:
    """``# wait: NAME`` comment -> its line in the scenarios file."""
    lines = source.read_text(encoding="utf-8").splitlines()
    found = {}
    for number, line in enumerate(lines, 1):
        match = re.search(r"# wait: (\S+)", line)
        if match:
            found[match[1]] = number
    return found


WAIT = _wait_lines()


@pytest.fixture(scope="session")
def cookbook_site(cookbook: Path) -> Path:
    """The folder holding tinker-cookbook 0.6.1's package, for PYTHONPATH: the suite's one
    download of its wheel (tests/conftest.py)."""
    return cookbook.parent


def _run(
    scenario: str,
    log_dir: Path,
    cookbook: Path | None = None,
    *flags: str,
    busy: float | None = None,
) -> dict[str, list[Any]]:
    path = [str(ROOT)] + ([str(cookbook)] if cookbook is not None else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    if busy is not None:
        env["SCENARIO_BUSY"] = str(busy)
    command = [sys.executable, "-m", "tests.runtime_scenarios", scenario, str(log_dir), *flags]
    if cookbook is not None:
        command.append("--cookbook")
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    files = {}
    for name in ("tinker_lint_runtime.jsonl", "server_truth.jsonl", "trace_events.jsonl"):
        file = log_dir / name
        if file.exists():
            files[name] = [json.loads(line) for line in file.read_text().splitlines()]
    return files


def _spans(events: list[dict[str, Any]], prefix: str) -> list[tuple[str, float, float]]:
    """(name, begin, end) of each B/E pair on its own track whose name starts with ``prefix``, in
    the order begun."""
    begun: dict[tuple[int, int], dict[str, Any]] = {}
    spans = []
    for event in events:
        if not event.get("name", "").startswith(prefix):
            continue
        key = (event["pid"], event["tid"])
        if event["ph"] == "B":
            begun[key] = event
        elif event["ph"] == "E":
            start = begun.pop(key)
            spans.append((event["name"], start["ts"], event["ts"]))
    assert not begun, f"unclosed spans: {begun}"
    return sorted(spans, key=lambda span: span[1])


def _max_depth(spans: list[tuple[str, float, float]]) -> int:
    """The most spans open at once (brute force over every begin)."""
    return max(sum(1 for _, b, e in spans if b <= at < e) for _, at, _ in spans)


def _waits(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["args"] for e in events if e.get("name") == "wait" and e.get("ph") == "X"]


def test_serialized_loop_never_has_two_requests_in_flight(tmp_path: Path) -> None:
    files = _run("serialized", tmp_path)
    events = files["tinker_lint_runtime.jsonl"]
    assert events[0]["name"] == "tinker_lint_clock"
    spans = _spans(events, "inflight:")
    names = ["inflight:forward_backward", "inflight:optim_step"] * STEPS
    assert [name for name, _, _ in spans] == names
    assert _max_depth(spans) == 1
    # Every request but the first is submitted with nothing in flight: 2 * STEPS - 1 bubbles.
    bubbles = [b for (_, b, _), (_, _, e) in zip(spans[1:], spans[:-1], strict=True) if b >= e]
    assert len(bubbles) == 2 * STEPS - 1
    waits = _waits(events)
    assert [(w["line"], w["op"], w["in_flight"]) for w in waits] == [
        (WAIT["serialized-fwd"], "forward_backward", 1),
        (WAIT["serialized-optim"], "optim_step", 1),
    ] * STEPS
    assert {w["function"] for w in waits} == {"serialized"}
    assert {w["file"] for w in waits} == {str(SCENARIOS)}


def test_each_request_is_in_flight_while_the_server_works_on_it(tmp_path: Path) -> None:
    files = _run("serialized", tmp_path)
    spans = _spans(files["tinker_lint_runtime.jsonl"], "inflight:")
    truth = files["server_truth.jsonl"]
    assert len(truth) == len(spans) == 2 * STEPS
    for (name, begin, end), served in zip(spans, truth, strict=True):
        assert name == f"inflight:{served['op']}"
        assert begin <= served["start"] < served["end"] <= end


def test_pipelined_loop_has_both_requests_of_a_step_in_flight(tmp_path: Path) -> None:
    files = _run("pipelined", tmp_path)
    events = files["tinker_lint_runtime.jsonl"]
    assert _max_depth(_spans(events, "inflight:")) == 2
    assert [(w["line"], w["op"], w["in_flight"]) for w in _waits(events)] == [
        (WAIT["pipelined-fwd"], "forward_backward", 2),
        (WAIT["pipelined-optim"], "optim_step", 1),
    ] * STEPS


def test_awaits_in_async_code_are_waits_at_the_await(tmp_path: Path) -> None:
    """``await future`` and ``await future.result_async()``: one wait each (not one per layer the
    SDK awaits through), at the line of the ``await``."""
    files = _run("serialized_async", tmp_path)
    events = files["tinker_lint_runtime.jsonl"]
    assert _max_depth(_spans(events, "inflight:")) == 1
    assert [(w["line"], w["op"]) for w in _waits(events)] == [
        (WAIT["async-fwd"], "forward_backward"),
        (WAIT["async-optim"], "optim_step"),
    ] * STEPS


@pytest.mark.network
def test_under_the_cookbook_tracing_both_files_keep_their_meaning(
    tmp_path: Path, cookbook_site: Path
) -> None:
    """The cookbook's `trace_init` wraps the same methods: its `forward_backward` spans stay
    submit-only (what its dashboards mean), ours cover the request until it is done, and neither
    file holds the other's events."""
    files = _run("serialized", tmp_path, cookbook_site)
    ours = files["tinker_lint_runtime.jsonl"]
    theirs = files["trace_events.jsonl"]
    in_flight = _spans(ours, "inflight:")
    submitted = [s for s in _spans(theirs, "") if s[0] in ("forward_backward", "optim_step")]
    assert [name for name, _, _ in submitted] == ["forward_backward", "optim_step"] * STEPS
    assert [f"inflight:{name}" for name, _, _ in submitted] == [name for name, _, _ in in_flight]
    busy = runtime_scenarios.BUSY * 1e6
    for (_, sub_begin, sub_end), (_, begin, end) in zip(submitted, in_flight, strict=True):
        assert end - begin >= busy  # the server's work is inside our span
        assert sub_end - sub_begin < end - begin  # theirs ends when the call returns
    assert not any(e.get("name", "").startswith("inflight:") for e in theirs)
    assert _max_depth(in_flight) == 1
    assert len(_waits(ours)) == 2 * STEPS


def _trace(log_dir: Path, *args: str, status: int = 1) -> dict[str, Any]:
    """`tinker-lint trace LOG_DIR --output-format json ...`, as a user runs it; it exits 1 when
    it finds bubbles or stalls."""
    command = [sys.executable, "-m", "tinker_lint", "trace", str(log_dir)]
    command += ["--output-format", "json", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert done.returncode == status, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _findings_of_the_scenarios(tmp_path: Path, source: Path = SCENARIOS) -> Path:
    """The linter's JSON findings on the scenarios file (relative paths, as CI writes them)."""
    command = [sys.executable, "-m", "tinker_lint", "--isolated", "--output-format", "json"]
    command.append(str(source.relative_to(ROOT)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert done.returncode == 1, done.stderr
    findings = tmp_path / "findings.json"
    findings.write_text(done.stdout)
    return findings


def test_trace_charges_the_serialized_loop_s_bubbles_to_its_static_findings(
    tmp_path: Path,
) -> None:
    """From source to measured cost: the linter's TNK101 (a wait before an independent submit)
    and TNK102 (the step waits for itself) are the two waits of the serialized loop, and
    `tinker-lint trace` over the recorded run charges each with the bubbles after it: every
    submit but the first found nothing in flight."""
    log_dir = tmp_path / "run"
    _run("serialized", log_dir)
    report = _trace(log_dir, "--findings", str(_findings_of_the_scenarios(tmp_path)))
    training = report["training"]
    assert training["source"] == "tinker_lint_runtime.jsonl recorder spans"
    assert training["ops"] == 2 * STEPS
    assert training["max_depth"] == 1
    assert len(training["bubbles"]) == 2 * STEPS - 1
    linked = [(x["code"], x["row"], x["waits"], x["bubbles"]) for x in report["linked"]]
    assert linked == [
        ("TNK101", WAIT["serialized-fwd"], STEPS, STEPS),
        ("TNK102", WAIT["serialized-optim"], STEPS, STEPS - 1),
    ]


def test_trace_of_the_pipelined_loop_sees_two_requests_in_flight(tmp_path: Path) -> None:
    """Submitting both requests of a step before waiting: depth 2, and a bubble where each step
    starts after the previous one's last wait. TNK102 is reported at the step's first wait, while
    the bubble follows the last one (``pipelined-optim``), which no finding names: join key 1
    charges the finding nothing, as asserted, so that a change to either side shows here."""
    log_dir = tmp_path / "run"
    _run("pipelined", log_dir)
    report = _trace(log_dir, "--findings", str(_findings_of_the_scenarios(tmp_path)))
    assert report["training"]["max_depth"] == 2
    bubbles = report["training"]["bubbles"]
    assert [b["op"] for b in bubbles] == ["forward_backward"] * (STEPS - 1)
    linked = [(x["code"], x["row"], x["bubbles"]) for x in report["linked"]]
    assert linked == [("TNK102", WAIT["pipelined-fwd"], 0)]


@pytest.mark.network
def test_trace_of_a_blocking_loop_under_the_cookbook_tracing_charges_tnk101_and_tnk104(
    tmp_path: Path, cookbook_site: Path
) -> None:
    """The serialized loop in ``async def`` with ``.result()`` (TNK104 at both waits, TNK101 and
    TNK102 beside it), run under the real cookbook tracing: `tinker-lint trace` reads the
    cookbook's trace_events.jsonl (L2) with the recorder's file (L3) and charges every bubble to
    the findings at the wait that saw the previous request complete."""
    log_dir = tmp_path / "run"
    files = _run("blocking_in_async", log_dir, cookbook_site)
    assert "trace_events.jsonl" in files
    report = _trace(log_dir, "--findings", str(_findings_of_the_scenarios(tmp_path)))
    # No watchdog ran: its stalls are not evidence here (issue 28, item 9), the recorder's spans are.
    assert report["evidence"] == ["L2", "L3"]
    assert report["training"]["max_depth"] == 1
    assert len(report["training"]["bubbles"]) == 2 * STEPS - 1
    linked = [(x["code"], x["row"], x["bubbles"]) for x in report["linked"]]
    assert linked == [
        ("TNK101", WAIT["blocking-fwd"], STEPS),
        ("TNK104", WAIT["blocking-fwd"], STEPS),
        ("TNK102", WAIT["blocking-optim"], STEPS - 1),
        ("TNK104", WAIT["blocking-optim"], STEPS - 1),
    ]


def test_trace_charges_the_watchdog_s_stall_to_the_blocking_waits(tmp_path: Path) -> None:
    """Join key 2: with the watchdog on, the event loop blocked by ``.result()`` inside
    ``async def`` is one stall of the main loop ("blocked by a sync call"), its sampled stack on both
    waits: every finding there is charged with it, TNK104 included. The watchdog appends the
    stall's events when it ends, behind the recorder's later ones: one process writing out of
    order, not a resumed run (no health note)."""
    log_dir = tmp_path / "run"
    _run("blocking_in_async", log_dir, None, "--watch", busy=0.3)
    report = _trace(log_dir, "--findings", str(_findings_of_the_scenarios(tmp_path)))
    assert report["health"] == {}
    assert report["stalls"]["count"] == 1
    assert report["stalls"]["seconds"] >= 2 * STEPS * 0.3 * 0.9
    linked = [(x["code"], x["row"], x["stalls"], x["stall_labels"]) for x in report["linked"]]
    assert linked == [
        ("TNK101", WAIT["blocking-fwd"], 1, ["loop_blocked_sync"]),
        ("TNK104", WAIT["blocking-fwd"], 1, ["loop_blocked_sync"]),
        ("TNK102", WAIT["blocking-optim"], 1, ["loop_blocked_sync"]),
        ("TNK104", WAIT["blocking-optim"], 1, ["loop_blocked_sync"]),
    ]
    assert {x["evidence"] for x in report["linked"]} == {
        "recorded wait call site, on a watchdog stall's stack"
    }


@pytest.mark.network
def test_trace_links_findings_by_the_cookbook_span_around_them(
    tmp_path: Path, cookbook_site: Path
) -> None:
    """Join key 3: a run with the cookbook's trace alone (`tests/traced_loop.py`: no recorder, no
    watchdog). The cookbook times training ops at submission, so there are no bubbles to charge
    and the run exits 0; the TNK101 and TNK102 findings inside ``train_step``'s ``train`` block
    are charged with that span's instances and time, which the fake server's work fills."""
    source = ROOT / "tests" / "traced_loop.py"
    log_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cookbook_site)])}
    done = subprocess.run(
        [sys.executable, "-m", "tests.traced_loop", str(log_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    findings = _findings_of_the_scenarios(tmp_path, source)
    report = _trace(log_dir, "--findings", str(findings), status=0)
    assert report["evidence"] == ["L2"]
    wait = _wait_lines(source)
    linked = [(x["code"], x["row"], x["span"], x["span_instances"]) for x in report["linked"]]
    assert linked == [
        ("TNK101", wait["traced-fwd"], "train_step>train", STEPS),
        ("TNK102", wait["traced-optim"], "train_step>train", STEPS),
    ]
    busy = 2 * STEPS * runtime_scenarios.BUSY
    assert all(busy * 0.9 <= x["span_seconds"] < busy + 2.0 for x in report["linked"])
