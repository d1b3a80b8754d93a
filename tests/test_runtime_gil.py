"""GIL hogs and a quiet run with the watchdog on, under the real cookbook tracing (tinker-cookbook
0.6.1's `trace_init` and `scope_span`), on the real SDK loop thread against the fake in-process
server (`tests/runtime_scenarios.py`), read back with the real `tinker-lint trace --findings`.

Each scenario runs in a fresh interpreter (tests/test_runtime_record.py's helpers); the cookbook
is conftest's unpacked 0.6.1 wheel (``cookbook`` is its package directory, on the path by its
parent).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests import runtime_scenarios
from tests.test_runtime_record import WAIT, _findings_of_the_scenarios, _run, _spans, _trace

pytestmark = [pytest.mark.slow, pytest.mark.network]
SCENARIOS = Path(runtime_scenarios.__file__)


def _hog_lines() -> dict[str, int]:
    """``# hog: NAME`` comment -> its line in the scenarios file."""
    found = {}
    for number, line in enumerate(SCENARIOS.read_text(encoding="utf-8").splitlines(), 1):
        match = re.search(r"# hog: (\S+)", line)
        if match:
            found[match[1]] = number
    return found


HOG = _hog_lines()


def _stalls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per watchdog stall, in the order they ended: its args (shared by every event of
    the stall), the loop tracks it stalled, its extent (µs) and the watchdog's own lateness."""
    by_number: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"tracks": [], "start": float("inf"), "end": 0.0, "starved_us": 0.0}
    )
    begins = {}
    for event in events:
        if event["name"] == "stall" and event["ph"] == "B":
            begins[event["args"]["track"]] = event["ts"]
        elif event["name"] == "stall" and event["ph"] == "E":
            stall = by_number[event["args"]["stall"]]
            stall["args"] = event["args"]
            stall["tracks"].append(event["args"]["track"])
            stall["start"] = min(stall["start"], begins.pop(event["args"]["track"]))
            stall["end"] = max(stall["end"], event["ts"])
        elif event["name"] == "watchdog_starved":
            stall = by_number[event["args"]["stall"]]
            stall["args"] = event["args"]
            stall["start"] = min(stall["start"], event["ts"])
            stall["end"] = max(stall["end"], event["ts"] + event["dur"])
            stall["starved_us"] += event["dur"]
    return [by_number[n] for n in sorted(by_number)]


def _summary(events: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = [e for e in events if e["name"] == "watchdog_summary"]
    result: dict[str, Any] = record["args"]
    return result


def test_a_c_call_and_a_python_loop_holding_the_gil_are_pinned_to_their_lines(
    tmp_path: Path, cookbook: Path
) -> None:
    """With both training requests in flight, the client holds the GIL in one C call
    (``json.dumps`` of the batch), then in a pure-Python per-element loop, each inside a cookbook
    ``scope_span``. The C call starves every other thread, the watchdog's own included: its
    lateness measures the hold and the faulthandler backstop's dump names the line ("SDK thread
    starved by GIL"). The Python loop gives the GIL up every 5 ms, so the SDK loop keeps ticking
    while the main loop is blocked ("event loop blocked by CPU work"), its samples on the line.
    `tinker-lint trace` charges each stall to the static finding at its line: TNK204 (the
    serialization) and TNK203 (per-element array work)."""
    log_dir = tmp_path / "run"
    files = _run("gil_hog", log_dir, cookbook.parent, "--watch")
    events = files["tinker_lint_runtime.jsonl"]
    c_call, py_loop = _stalls(events)
    assert (c_call["args"]["label"], c_call["args"]["holder"]) == ("gil_starved", "MainThread")
    assert c_call["args"]["line"]["line"] == HOG["c_call"]
    assert c_call["args"]["line"]["function"] == "gil_hog"
    assert c_call["starved_us"] >= 0.5e6  # against the 0.25 s threshold; the hog is ~1 s
    (dump,) = [e for e in events if e["name"] == "gil_held_dump"]
    assert dump["args"]["holder"] == "MainThread"
    # The main thread's stack in the dump: inside json's encoder (its C part has no frame),
    # called from the hog's line.
    ours = (str(SCENARIOS), HOG["c_call"])
    (main,) = [
        stack
        for stack in dump["args"]["stacks"].values()
        if ours in [(f["file"], f["line"]) for f in stack]
    ]
    inner = [(f["file"], f["line"]) for f in main].index(ours)
    assert inner > 0
    assert all(f"{os.sep}json{os.sep}" in f["file"] for f in main[:inner])
    assert (py_loop["args"]["label"], py_loop["args"]["holder"]) == (
        "loop_blocked_cpu",
        "MainThread",
    )
    assert py_loop["args"]["line"]["line"] == HOG["py_loop"]
    assert py_loop["tracks"] == ["main"]  # the SDK loop was not stalled by it
    assert py_loop["end"] - py_loop["start"] >= 0.5e6
    assert py_loop["starved_us"] == 0
    top = {t["line"]: t["samples"] for t in py_loop["args"]["top_lines"]}
    assert top[HOG["py_loop"]] >= 0.5 * max(top.values())
    assert _summary(events)["stalls"] == 2
    # Each stall lies inside the cookbook span around its hog (one clock: perf_counter µs).
    spans = {name: (b, e) for name, b, e in _spans(files["trace_events.jsonl"], "") if "_" in name}
    for stall, name in ((c_call, "serialize_batch"), (py_loop, "per_token_weights")):
        begin, end = spans[name]
        assert begin <= stall["start"] + 0.3e6 and stall["end"] - 0.3e6 <= end, (name, stall)

    report = _trace(log_dir, "--findings", str(_findings_of_the_scenarios(tmp_path)))
    assert report["evidence"] == ["L2", "L3", "L4"]
    assert report["health"] == {}
    assert (report["stalls"]["count"], report["stalls"]["gil_dumps"]) == (2, 1)
    assert report["training"]["max_depth"] == 2
    linked = [(x["code"], x["row"], x["stalls"], x["stall_labels"]) for x in report["linked"]]
    assert linked == [
        ("TNK204", HOG["c_call"], 1, ["gil_starved"]),
        ("TNK203", HOG["py_loop"], 1, ["loop_blocked_cpu"]),
        ("TNK102", WAIT["hog-fwd"], 0, []),
    ]
    (serialized,) = [x for x in report["linked"] if x["code"] == "TNK204"]
    assert serialized["stall_seconds"] == pytest.approx(
        (c_call["end"] - c_call["start"]) / 1e6, abs=1e-3
    )


def test_a_quiet_run_under_the_cookbook_tracing_has_no_stall(
    tmp_path: Path, cookbook: Path
) -> None:
    """About 3 s of pipelined steps, each in a cookbook ``scope_span``, with the watchdog at its
    default threshold and a backstop: no stall, no GIL hold, no dump over the whole run, every
    loop ticking throughout; `tinker-lint trace` agrees, and its coverage and depth are the
    run's."""
    log_dir = tmp_path / "run"
    files = _run("quiet", log_dir, cookbook.parent, "--watch")
    events = files["tinker_lint_runtime.jsonl"]
    steps = runtime_scenarios.QUIET_STEPS
    assert len(files["server_truth.jsonl"]) == 2 * steps
    assert [e for e in events if e["name"] in ("stall", "watchdog_starved", "gil_held_dump")] == []
    result = _summary(events)
    assert (result["stalls"], result["gil_hold_s"], result["backstop"]) == (0, 0, "on")
    # The run lasts 2 x steps x BUSY (3 s) at one tick per 0.1 s.
    seconds = 2 * steps * runtime_scenarios.BUSY
    assert result["loops"]["main"]["ticks"] >= 0.7 * seconds / 0.1
    assert result["loops"]["sdk"]["ticks"] >= 0.7 * seconds / 0.1
    assert max(loop["max_ms"] for loop in result["loops"].values()) < 250

    report = _trace(log_dir)  # exit 1: each step's first submit finds nothing in flight
    assert report["health"] == {}
    stalls = report["stalls"]
    assert (stalls["count"], stalls["seconds"], stalls["gil_dumps"]) == (0, 0, 0)
    training = report["training"]
    assert (training["ops"], training["max_depth"]) == (2 * steps, 2)
    assert [b["op"] for b in training["bubbles"]] == ["forward_backward"] * (steps - 1)
    covered, run = report["coverage"]["covered"], report["coverage"]["run"]
    assert seconds <= run < 3 * seconds  # the run's length, from the cookbook's events
    assert covered / run >= 0.9  # each step is inside its train_step span
