"""The GIL-stall watchdog (``tinker_lint.runtime``, docs/watchdog.md): options, dump parsing, the
quiet path's allocations, and subprocess scenarios with deterministic hogs
(tests/watchdog_scenarios.py) pinned to their lines."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tests.pythons import newest_cpython
from tinker_lint.runtime import stacks
from tinker_lint.runtime.options import Options, options_from
from tinker_lint.runtime.watchdog import Stall, Watchdog, classify, stall_message

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "watchdog_scenarios.py"
RUNTIME_DIR = str(ROOT / "tinker_lint" / "runtime")


def marker_line(marker: str) -> int:
    """The line of ``tests/watchdog_scenarios.py`` carrying ``# MARKER:``."""
    for number, text in enumerate(SCENARIOS.read_text().splitlines(), 1):
        if f"# {marker}:" in text:
            return number
    raise AssertionError(f"no # {marker}: in {SCENARIOS}")


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(
    tmp_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    python: str = sys.executable,
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    out = tmp_path / "tinker_lint_runtime.jsonl"
    full_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TINKER_LINT_WATCHDOG_OUT": str(out),
        **(env or {}),
    }
    done = subprocess.run(
        [python, *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done, events(out) if out.exists() else []


def stall_ends(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per stall: the E of each loop's stall, else the watchdog_starved X."""
    ends = [e for e in evs if e["name"] == "stall" and e["ph"] == "E"]
    starved = [e for e in evs if e["name"] == "watchdog_starved"]
    return ends or starved


def summary(evs: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = [e for e in evs if e["name"] == "watchdog_summary"]
    result: dict[str, Any] = record["args"]
    return result


# -- options -------------------------------------------------------------------------------------


def test_options_defaults_environment_then_keywords(tmp_path):
    defaults = options_from(env={})
    assert (defaults.interval, defaults.threshold, defaults.backstop, defaults.pyspy) == (
        0.1,
        0.25,
        1.0,
        False,
    )
    assert defaults.out == "tinker_lint_runtime.jsonl"
    env = {
        "TINKER_LINT_WATCHDOG_INTERVAL": "0.05",
        "TINKER_LINT_WATCHDOG_THRESHOLD": "0.5",
        "TINKER_LINT_WATCHDOG_BACKSTOP": "0",
        "TINKER_LINT_WATCHDOG_PYSPY": "1",
        "TINKER_LINT_WATCHDOG_OUT": str(tmp_path / "w.jsonl"),
    }
    from_env = options_from(env=env)
    assert (from_env.interval, from_env.threshold, from_env.backstop, from_env.pyspy) == (
        0.05,
        0.5,
        0.0,
        True,
    )
    assert from_env.out == str(tmp_path / "w.jsonl")
    given = options_from(env=env, threshold=0.3, pyspy=False, interval=None)
    assert (given.interval, given.threshold, given.pyspy) == (0.05, 0.3, False)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TINKER_LINT_WATCHDOG_INTERVAL": "fast"}, "TINKER_LINT_WATCHDOG_INTERVAL='fast' is not"),
        ({"TINKER_LINT_WATCHDOG_THRESHOLD": "0.005"}, "threshold must be at least 0.020 s"),
        ({"TINKER_LINT_WATCHDOG_BACKSTOP": "-1"}, "backstop must be 0 (off) or above"),
        ({"TINKER_LINT_WATCHDOG_PYSPY": "maybe"}, "TINKER_LINT_WATCHDOG_PYSPY='maybe': use 1 or 0"),
    ],
)
def test_bad_options_say_which_and_why(env, message):
    with pytest.raises(ValueError) as error:
        options_from(env=env)
    assert message in str(error.value)


def test_importing_the_runtime_loads_nothing_of_the_linter():
    code = (
        "import sys, tinker_lint.runtime; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tinker_lint', 'libcst', "
        "'tinker', 'packaging')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.replace("'", '"')) == [
        "tinker_lint",
        "tinker_lint.runtime",
        "tinker_lint.runtime.options",
        "tinker_lint.runtime.stacks",
        "tinker_lint.runtime.watchdog",
    ]


# -- stacks --------------------------------------------------------------------------------------

DUMP = """Timeout (0:00:00.500000)!
Thread 0x00007f65c6f8e6c0 (most recent call first):
  File "/proj/sdk_stub.py", line 4 in bg
  File "/usr/lib/python3.11/threading.py", line 982 in run

Thread 0x00007f65c7dd0b80 (most recent call first):
  File "/proj/train.py", line 72 in busy_c_call
  File "/proj/train.py", line 197 in finish_batch
  File "/proj/train.py", line 260 in <module>
"""


def test_a_faulthandler_dump_is_parsed_and_the_running_thread_holds_the_gil(tmp_path):
    (tmp_path / "sdk_stub.py").write_text("import time\n\n\nwhile True: time.sleep(0.01)\n")
    dump = DUMP.replace("/proj/", f"{tmp_path}/")
    parsed = stacks.parse_dump(dump)
    main, other = 0x00007F65C7DD0B80, 0x00007F65C6F8E6C0
    assert parsed[main] == (
        (f"{tmp_path}/train.py", 72, "busy_c_call"),
        (f"{tmp_path}/train.py", 197, "finish_batch"),
        (f"{tmp_path}/train.py", 260, "<module>"),
    )
    assert parsed[other][0] == (f"{tmp_path}/sdk_stub.py", 4, "bg")
    root = f"{tmp_path}/"
    # The other thread's line sleeps (a C call with no frame): parked, so main held the GIL,
    # even when main is not the preferred candidate.
    assert stacks.holder(parsed, None, frozenset(), root) == main
    assert stacks.holder(parsed, None, frozenset({main}), root) is None


def test_a_sample_keeps_the_innermost_frames_and_every_frame_under_the_root():
    def nest(depth: int, root: str) -> tuple[stacks.Frame, ...]:
        if depth:
            return nest(depth - 1, root)
        return stacks.walk(sys._getframe(), root)

    assert len(nest(30, "/nowhere/")) == stacks.INNERMOST_KEPT
    here = str(Path(__file__).resolve().parent) + os.sep
    kept = nest(30, here)
    # The 31 nest frames and this test's frame are all under the root, far past the innermost 8.
    assert [f[2] for f in kept if f[0] == __file__] == ["nest"] * 31 + [
        "test_a_sample_keeps_the_innermost_frames_and_every_frame_under_the_root"
    ]


# -- the quiet path ------------------------------------------------------------------------------


def test_quiet_cycles_keep_no_allocation(tmp_path):
    dog = Watchdog(Options(out=str(tmp_path / "unused.jsonl"), threshold=5.0))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="user-loop", daemon=True)
    thread.start()
    try:
        dog.register(loop, thread)
        (watch,) = dog._loops

        def cycles(n: int) -> None:
            for _ in range(n):
                dog.cycle(time.perf_counter())
                time.sleep(0.002)

        cycles(20)  # first-use caches (bisect, the histogram's ints) before measuring
        ticks = watch.ticks
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            cycles(200)
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        ours = [tracemalloc.Filter(True, f"{RUNTIME_DIR}{os.sep}*")]
        grown = [
            stat
            for stat in after.filter_traces(ours).compare_to(before.filter_traces(ours), "lineno")
            if stat.size_diff > 0
        ]
        # Nothing that grows with the cycles: a leak of one object per cycle would be 200 here.
        # At the instant of a snapshot a tick may be in flight, its timestamps (two floats of
        # ``us()``) alive until it is answered; seen once in a CI run on a loaded machine.
        assert sum(stat.count_diff for stat in grown) <= 4, grown
        assert watch.ticks - ticks >= 150  # the loop really answered the ticks
        assert dog.stalls == [] and dog._stall is None
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_a_loop_run_in_bursts_is_not_lagging_between_its_runs(tmp_path):
    dog = Watchdog(Options(out=str(tmp_path / "unused.jsonl")))
    loop = asyncio.new_event_loop()
    try:
        here = threading.current_thread()
        dog.register(loop, here)
        dog.cycle(time.perf_counter())  # a tick posted; the loop stops before running it
        dog.unregister(loop)
        time.sleep(0.4)
        dog.register(loop, here)  # run_until_complete again: the same record
        loop.run_until_complete(asyncio.sleep(0))  # the old tick runs now
        dog.cycle(time.perf_counter())
        loop.run_until_complete(asyncio.sleep(0))
        dog.cycle(time.perf_counter())
        (watch,) = dog._loops
        assert watch.ticks == 1 and watch.max_lag < 0.1
        assert dog.stalls == [] and dog._stall is None
    finally:
        loop.close()


@pytest.mark.parametrize(
    ("main_at", "label", "holder"),
    [
        # The main thread computing while only the SDK loop is late: the SDK thread waits for the
        # GIL (which looks parked in its own samples).
        ("PY_LOOP", "gil_starved", "MainThread"),
        # The main thread idle too: the SDK loop's own callback blocks it.
        ("SLEEP", "loop_blocked_sync", "the SDK thread"),
    ],
)
def test_a_stall_of_the_sdk_loop_alone_is_told_by_what_the_main_thread_did(
    tmp_path, main_at, label, holder
):
    dog = Watchdog(Options(out=str(tmp_path / "unused.jsonl"), root=str(ROOT)))
    dog._main_ident, dog._sdk_thread_ident = 1, 2
    stall = Stall(start=0.0, end=1.0, loops={"sdk": (0.0, 1.0)})
    path = str(SCENARIOS)
    main_stack = ((path, marker_line(main_at), "f"),)
    sdk_stack = ((path, marker_line("SLEEP"), "callback"),)
    stall.samples = {1: stacks.ThreadSamples("MainThread"), 2: stacks.ThreadSamples("sdk")}
    for _ in range(10):
        stall.samples[1].add(main_stack, dog.root)
        stall.samples[2].add(sdk_stack, dog.root)
    classify(stall, dog)
    assert (stall.label, stall.holder) == (label, holder)
    assert stall.line == (main_stack if label == "gil_starved" else sdk_stack)[0]


@pytest.mark.parametrize(
    ("gil", "loops", "label", "holder", "line"),
    [
        # Only the watchdog late, the main thread computing: a GIL hold...
        (True, {}, "gil_starved", "MainThread", "PY_LOOP"),
        # ...but free-threaded (3.13t) there is no GIL to hold: this process got no CPU.
        (False, {}, "cpu_oversubscribed", "no thread", None),
        # Free-threaded with the main loop stalled too: the loop's own samples say why, and the
        # backstop's dump names no holder.
        (False, {"main": (0.0, 1.0)}, "loop_blocked_cpu", "MainThread", "PY_LOOP"),
    ],
)
def test_free_threaded_the_watchdog_s_own_lateness_is_no_gil_hold(
    tmp_path, gil, loops, label, holder, line
):
    dog = Watchdog(Options(out=str(tmp_path / "unused.jsonl"), root=str(ROOT)))
    dog._main_ident, dog._sdk_thread_ident = 1, 2
    dog.gil_enabled = gil
    stall = Stall(start=0.0, end=1.0, loops=dict(loops), starved=[(0.0, 1.0)])
    path = str(SCENARIOS)
    stall.samples = {1: stacks.ThreadSamples("MainThread")}
    for _ in range(10):
        stall.samples[1].add(((path, marker_line("PY_LOOP"), "compute_metrics"),), dog.root)
    if loops:
        stall.dump = {1: ((path, marker_line("C_CALL"), "busy_c_call"),)}
    classify(stall, dog)
    assert (stall.label, stall.holder) == (label, holder)
    assert stall.line == (None if line is None else (path, marker_line(line), "compute_metrics"))
    if label == "cpu_oversubscribed":
        assert stall_message(stall, dog.root) == (
            "tinker-lint: every Python thread (the watchdog woke up late) stalled 1.00 s: process "
            "not scheduled (free-threaded: no GIL to hold) (no rule); more runnable threads than "
            "CPUs; raise the threshold on a shared machine [10 samples]"
        )


def test_started_inside_a_pytest_test_the_backstop_steps_aside(tmp_path, capsys):
    # pytest may have armed dump_traceback_later for this test (faulthandler_timeout): re-arming
    # would cancel it, so the watchdog leaves faulthandler alone and says so.
    assert "_pytest.faulthandler" in sys.modules and os.environ.get("PYTEST_CURRENT_TEST")
    dog = Watchdog(Options(out=str(tmp_path / "w.jsonl")))
    dog._setup_backstop()
    assert dog.backstop_owner is False
    assert dog.backstop_note.startswith(
        "tinker-lint: watchdog backstop disabled: faulthandler.dump_traceback_later is used "
        "elsewhere (started inside a pytest test"
    )


# -- subprocess scenarios ------------------------------------------------------------------------


@pytest.fixture(params=["running", "newest"])
def python(request: pytest.FixtureRequest) -> str:
    """The interpreter running the tests, then the newest CPython on the machine (tests/pythons.py):
    the runtime imports only the standard library, so any Python 3.10+ runs it from the source."""
    if request.param == "running":
        return sys.executable
    found = newest_cpython()
    if found is None:
        pytest.skip(
            f"no CPython newer than {platform.python_version()} (looked in pyenv's versions and "
            "for python3.12-3.19 on PATH)"
        )
    return found[0]


def ran_under(evs: list[dict[str, Any]], python: str) -> None:
    """The watchdog's clock anchor names the version of the interpreter it was run with."""
    (anchor,) = [e for e in evs if e["name"] == "clock_anchor"]
    newest = newest_cpython()
    expected = newest[1] if python != sys.executable and newest else platform.python_version()
    assert anchor["args"]["python"] == expected


@pytest.mark.slow
def test_a_c_call_holding_the_gil_is_pinned_to_its_line_by_the_backstop(tmp_path, python):
    done, evs = run(
        tmp_path,
        "-m",
        "tests.watchdog_scenarios",
        "c_call",
        env={"TINKER_LINT_WATCHDOG_BACKSTOP": "0.5"},
        python=python,
    )
    ran_under(evs, python)
    c_line, caller_line = marker_line("C_CALL"), marker_line("C_CALLER")
    starved = [e for e in evs if e["name"] == "watchdog_starved"]
    # On an oversubscribed machine the process itself can go unscheduled past the threshold: such
    # a stall names no holder's line (docs/watchdog.md, Pitfalls; seen twice in 12 runs next to a
    # busy loop). The C call's is the one stall at its line.
    (hold,) = [e for e in starved if (e["args"]["line"] or {}).get("line") == c_line]
    assert hold["dur"] >= 0.3e6  # the watchdog's own lateness measured the hold
    assert hold["args"]["label"] == "gil_starved"
    assert hold["args"]["holder"] == "MainThread"
    (dump,) = [e for e in evs if e["name"] == "gil_held_dump"]
    main_stacks = [s for s in dump["args"]["stacks"].values() if s[0]["line"] == c_line]
    assert [f["line"] for f in main_stacks[0][:2]] == [c_line, caller_line]
    assert (
        f"SDK thread starved by GIL (TNK2xx); GIL held by MainThread at "
        f"tests/watchdog_scenarios.py:{c_line} in busy_c_call [faulthandler dump]" in done.stderr
    )
    ends = [
        e
        for e in evs
        if e["name"] == "watchdog_starved" or (e["name"] == "stall" and e["ph"] == "E")
    ]
    assert summary(evs)["stalls"] == len({e["args"]["stall"] for e in ends})


@pytest.mark.slow
def test_a_pure_python_loop_stalls_the_main_loop_with_samples_on_its_line(tmp_path, python):
    # Through the front door, python -m tinker_lint.watch, with the scenario's own arguments; with
    # --pyspy and a stand-in py-spy on PATH (the real one: tests/test_watchdog_pyspy.py).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "py-spy"
    fake.write_text('#!/bin/sh\necho "py-spy stand-in: $*"\n')
    fake.chmod(0o755)
    done, evs = run(
        tmp_path,
        "-m",
        "tinker_lint.watch",
        "--backstop",
        "0",
        "--pyspy",
        str(SCENARIOS),
        "py_loop",
        env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        python=python,
    )
    ran_under(evs, python)
    line = marker_line("PY_LOOP")
    (end,) = stall_ends(evs)
    assert end["args"]["track"] == "main"
    assert end["args"]["label"] == "loop_blocked_cpu"
    assert end["args"]["line"]["line"] == line
    assert end["args"]["duration_s"] >= 0.8
    assert end["args"]["pyspy"] == f"py-spy stand-in: dump --pid {end['pid']}\n"
    # Inclusive counts: the loop's line and its callers share (nearly) every sample.
    top = {t["line"]: t["samples"] for t in end["args"]["top_lines"]}
    assert top[line] >= 10
    assert top[line] >= 0.9 * max(top.values())
    assert [e for e in evs if e["name"] == "watchdog_starved"] == []
    loops = summary(evs)["loops"]
    assert loops["sdk"]["max_ms"] < 250  # the GIL switches every 5 ms: the SDK loop kept ticking
    assert loops["main"]["max_ms"] >= 800
    assert (
        f"event loop blocked by CPU work (TNK2xx); MainThread at tests/watchdog_scenarios.py:{line}"
        in done.stderr
    )


@pytest.mark.slow
def test_sync_calls_inside_async_def_block_the_event_loop_at_their_lines(tmp_path):
    done, evs = run(
        tmp_path,
        "-m",
        "tests.watchdog_scenarios",
        "sync_call",
        env={"TINKER_LINT_WATCHDOG_BACKSTOP": "0"},
    )
    ends = stall_ends(evs)
    assert [(e["args"]["track"], e["args"]["label"], e["args"]["line"]["line"]) for e in ends] == [
        ("main", "loop_blocked_sync", marker_line("SLEEP")),
        ("main", "loop_blocked_sync", marker_line("RESULT")),
    ]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("tinker-lint: main")]
    assert len(warnings) == 2
    assert all(
        "stalled" in w and "event loop blocked by a sync call (TNK104)" in w for w in warnings
    )


@pytest.mark.slow
def test_serialization_on_the_sdk_loop_is_an_sdk_serialization_stall(tmp_path):
    done, evs = run(
        tmp_path,
        "-m",
        "tests.watchdog_scenarios",
        "serialization",
        env={"TINKER_LINT_WATCHDOG_BACKSTOP": "0"},
    )
    line = marker_line("SERIALIZE")
    (end,) = stall_ends(evs)
    assert (end["args"]["track"], end["args"]["label"], end["args"]["line"]["line"]) == (
        "sdk",
        "sdk_serialization",
        line,
    )
    assert end["args"]["duration_s"] >= 0.6
    assert (
        f"Tinker SDK event loop stalled {end['args']['duration_s']:.2f} s: SDK serialization "
        f"stall (TNK30x); GIL held by the SDK thread at tests/watchdog_scenarios.py:{line} in "
        f"serialize_for [" in done.stderr
    )


SDK_FIRST = """
import asyncio, sys, threading, time, types

# The SDK singleton's shape (tinker.lib.internal_client_holder), its loop started before watch(),
# on a thread whose name does not say so: only the singleton can tell the watchdog (importing the
# real tinker takes 10 s here).
class Singleton:
    def __init__(self):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="io", daemon=True)
        self._thread.start()

module = types.ModuleType("tinker.lib.internal_client_holder")
module._internal_client_holder_thread_singleton = Singleton()
sys.modules[module.__name__] = module
time.sleep(0.2)
import tinker_lint.runtime as r
r.watch(backstop=0)
time.sleep(1.0)
"""


@pytest.mark.slow
def test_an_sdk_loop_started_before_watch_is_found_through_the_singleton(tmp_path):
    _, evs = run(tmp_path, "-c", SDK_FIRST)
    (name,) = [e for e in evs if e["name"] == "thread_name"]
    assert name["args"] == {"name": "sdk loop"}
    assert summary(evs)["loops"]["sdk"]["ticks"] >= 5


@pytest.mark.slow
def test_a_quiet_run_has_no_stall(tmp_path):
    # 0.5 s: on the shared 2-core machine the process itself can go unscheduled for 0.25 s (seen
    # once in the benchmark's runs); a watchdog's own false stall (a stale tick, a lag counted
    # across a loop's idle gap) would be seconds long.
    done, evs = run(
        tmp_path,
        "-m",
        "tests.watchdog_scenarios",
        "quiet",
        "3",
        env={"TINKER_LINT_WATCHDOG_THRESHOLD": "0.5"},
    )
    assert stall_ends(evs) == []
    result = summary(evs)
    assert result["stalls"] == 0 and result["gil_hold_s"] == 0
    assert result["loops"]["main"]["ticks"] >= 15 and result["loops"]["sdk"]["ticks"] >= 15
    assert "stalled" not in done.stderr
    assert "tinker-lint watchdog: 0 stall(s)" in done.stderr


PYTEST_SUITE = """
import time

def test_slow():
    time.sleep(0.9)
"""


@pytest.mark.slow
def test_next_to_pytest_faulthandler_timeout_the_backstop_steps_aside(tmp_path):
    # The watchdog starts first (as the .pth hook would), then pytest arms its own per-test timer:
    # the watchdog says so once and stops re-arming, and pytest's timeout still fires.
    suite = tmp_path / "test_suite.py"
    suite.write_text(PYTEST_SUITE)
    code = (
        "import sys, pytest, tinker_lint.runtime as r; r.watch(); "
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-o', 'faulthandler_timeout=0.5', "
        f"{str(suite)!r}]))"
    )
    # Without third-party plugins (hypothesis, xdist, benchmark...): 2 s instead of 9 s here.
    done, evs = run(tmp_path, "-c", code, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert (
        "Timeout (0:00:00.500000)!" in done.stderr
    )  # pytest's dump, not cancelled by the watchdog
    # Said once, in the exit summary (pytest captures the WARNING log line of a passing test).
    assert done.stderr.count("tinker-lint: watchdog backstop disabled") == 1
    note = summary(evs)["backstop"]
    assert note.startswith(
        "tinker-lint: watchdog backstop disabled: faulthandler.dump_traceback_later is used "
        "elsewhere (called from "
    )
    assert os.path.join("_pytest", "faulthandler.py") in note


FORK = """
import faulthandler, os, sys, time
import tinker_lint.runtime as r
r.watch()
time.sleep(0.3)
pid = os.fork()
if pid == 0:
    # Armed over the fork, faulthandler's timer would hang this call in the child.
    faulthandler.dump_traceback_later(5)
    faulthandler.cancel_dump_traceback_later()
    time.sleep(0.3)
    sys.exit(0)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.slow
def test_a_forked_child_restarts_its_own_watchdog(tmp_path):
    _, evs = run(tmp_path, "-c", FORK, timeout=30)
    anchors = [e for e in evs if e["name"] == "clock_anchor"]
    assert len(anchors) == 2 and anchors[0]["pid"] != anchors[1]["pid"]
    assert len([e for e in evs if e["name"] == "watchdog_summary"]) == 2
    assert {e["pid"] for e in evs if e["name"] == "watchdog_summary"} == {a["pid"] for a in anchors}


# -- the .pth switch -----------------------------------------------------------------------------

PTH_SOURCE = ROOT / "tinker_lint" / "runtime" / "tinker_lint_watchdog.pth"
PTH_PROBE = (
    "import site, sys; site.addsitedir({dir!r}); "
    "import json; names = sorted(m for m in sys.modules if m.startswith('tinker_lint')); "
    "dog = sys.modules.get('tinker_lint.runtime.watchdog'); "
    "print(json.dumps([names, bool(dog and dog.current())]))"
)


@pytest.mark.parametrize(
    ("value", "started"), [(None, False), ("", False), ("0", False), ("1", True)]
)
def test_the_pth_line_starts_the_watchdog_only_when_the_variable_is_set(tmp_path, value, started):
    # site.addsitedir runs a directory's .pth files as site-packages' are run at start-up.
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / PTH_SOURCE.name).write_bytes(PTH_SOURCE.read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "TINKER_LINT_WATCHDOG"}
    if value is not None:
        env["TINKER_LINT_WATCHDOG"] = value
    env.update(PYTHONPATH=str(ROOT), TINKER_LINT_WATCHDOG_OUT=str(tmp_path / "w.jsonl"))
    done = subprocess.run(
        [sys.executable, "-c", PTH_PROBE.format(dir=str(site_dir))],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    names, running = json.loads(done.stdout)
    assert running is started
    assert (names != []) is started  # unset: nothing of tinker-lint is even imported
    assert (tmp_path / "w.jsonl").exists() is started


def test_a_bad_option_in_the_environment_leaves_the_program_running(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TINKER_LINT_WATCHDOG": "1",
        "TINKER_LINT_WATCHDOG_THRESHOLD": "0.001",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import tinker_lint.runtime.autostart; print('ran')"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "ran\n"
    assert done.stderr == (
        "tinker-lint: TINKER_LINT_WATCHDOG is set but the watchdog is off: threshold must be at "
        "least 0.020 s (4x sys.getswitchinterval()), not 0.001\n"
    )


@pytest.mark.slow
def test_the_build_puts_the_pth_at_the_top_of_site_packages(tmp_path):
    # setup.py's build_py (what a wheel is made from) in a copy, so nothing is written here.
    for name in ("setup.py", "pyproject.toml", "README.md"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    shutil.copytree(
        ROOT / "tinker_lint", tmp_path / "tinker_lint", ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", "out"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    assert (tmp_path / "out" / PTH_SOURCE.name).read_bytes() == PTH_SOURCE.read_bytes()
    assert not (tmp_path / "out" / "tinker_lint" / "runtime" / PTH_SOURCE.name).exists()


# -- the benchmark's parts (the benchmark itself is run by hand: docs/watchdog.md) ---------------


def test_the_overhead_benchmarks_child_reports_cpu_and_the_watchdog_threads_own_time(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "watchdog_overhead.py"),
            "--child",
            "100 ms + backstop",
            "--calls",
            # A few tenths of a second: several of the watchdog's 100 ms wake-ups (1,000,000
            # took 0.10 s on a 2026-12 machine, and the watchdog then sometimes never ran).
            "3000000",
        ],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    assert sorted(result) == ["cpu_s", "stalls", "wall_s", "watchdog_cpu_s"]
    assert result["wall_s"] > 0 and result["watchdog_cpu_s"] > 0
    assert list(tmp_path.iterdir()) == []  # its events file is removed
