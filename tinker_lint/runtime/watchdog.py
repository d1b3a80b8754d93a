"""The GIL-stall watchdog: one daemon thread measuring every event loop's tick lag and its own
lateness, sampling stacks only while a stall is open, with a faulthandler backstop.

Design and evidence: docs/watchdog.md (spec: runtime-triage §6(b)).
"""

from __future__ import annotations

import asyncio
import atexit
import bisect
import contextlib
import faulthandler
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from tinker_lint.runtime import stacks
from tinker_lint.runtime.options import Options

logger = logging.getLogger("tinker_lint.runtime")
perf_counter = time.perf_counter

SDK_MODULE = "tinker.lib.internal_client_holder"
SDK_SINGLETON = "_internal_client_holder_thread_singleton"
SDK_THREAD_TARGET = "_background_thread_func"
LAG_COUNTER_MIN_MS = 5.0  # a tick lag below one switch interval is not worth a counter event
HEARTBEAT_PERIOD_S = 10.0  # tinker's session heartbeat (internal_client_holder.py, 0.3.0-0.38.0)
HEARTBEAT_WARNING_S = 120.0  # the SDK warns only after this long of failed heartbeats

# Lag histogram buckets (ms), about 10% apart from 0.01 ms to 1000 s: fixed, so recording a tick
# allocates nothing.
_BOUNDS_MS = array("d", [0.01 * 1.1**i for i in range(194)])

LABELS = {
    "gil_starved": "SDK thread starved by GIL",
    "gil_held": "GIL held by one thread",
    "sdk_serialization": "SDK serialization stall",
    "loop_blocked_sync": "event loop blocked by a sync call",
    "loop_blocked_cpu": "event loop blocked by CPU work",
    "cpu_oversubscribed": "process not scheduled (free-threaded: no GIL to hold)",
}
# The static rules each kind of stall points to (docs/watchdog.md, "Classification").
RULES = {
    "gil_starved": "TNK2xx",
    "gil_held": "TNK2xx",
    "sdk_serialization": "TNK30x",
    "loop_blocked_sync": "TNK104",
    "loop_blocked_cpu": "TNK2xx",
    "cpu_oversubscribed": "no rule",
}


def us(seconds: float) -> float:
    """The cookbook's trace clock: ``perf_counter()`` in microseconds."""
    return round(seconds * 1e6, 1)


class LoopWatch:
    """One event loop: the tick in flight and its lag histogram. The tick is a bound method made
    once, and the histogram a fixed array, so a quiet cycle allocates nothing that lives on."""

    __slots__ = (
        "accounted",
        "counts",
        "ident",
        "loop",
        "max_lag",
        "name",
        "pending",
        "posted",
        "ran",
        "stall_max",
        "stall_start",
        "tick",
        "ticks",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, name: str, ident: int) -> None:
        self.loop = loop
        self.name = name
        self.ident = ident
        self.posted = 0.0
        self.ran = 0.0
        self.pending = False
        self.accounted = True
        self.counts = array("q", [0] * (len(_BOUNDS_MS) + 1))
        self.ticks = 0
        self.max_lag = 0.0
        self.stall_start: float | None = None
        self.stall_max = 0.0
        self.tick = self._tick

    def _tick(self) -> None:
        self.ran = perf_counter()
        self.pending = False

    def record(self, lag: float) -> None:
        self.counts[bisect.bisect_left(_BOUNDS_MS, lag * 1e3)] += 1
        self.ticks += 1
        if lag > self.max_lag:
            self.max_lag = lag

    def percentile_ms(self, q: float) -> float:
        """The bucket bound under which a share ``q`` of the ticks ran (10% resolution)."""
        if not self.ticks:
            return 0.0
        target = q * self.ticks
        seen = 0
        for i, n in enumerate(self.counts):
            seen += n
            if seen >= target:
                return _BOUNDS_MS[min(i, len(_BOUNDS_MS) - 1)]
        return self.max_lag * 1e3


@dataclass
class Stall:
    """One stall: from the first open condition to the last one closing."""

    start: float
    end: float = 0.0
    loops: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (start, end)
    starved: list[tuple[float, float]] = field(default_factory=list)  # the watchdog's own lateness
    samples: dict[int, stacks.ThreadSamples] = field(default_factory=dict)
    dump: dict[int, tuple[stacks.Frame, ...]] | None = None
    dump_ts: float = 0.0
    pyspy: subprocess.Popen[str] | None = None
    pyspy_text: str = ""
    label: str = ""
    holder: str = ""
    line: stacks.Frame | None = None
    note: str = ""


class Watchdog:
    """The watchdog thread and what it has seen. ``watch()`` makes and starts one per process."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.root = os.path.abspath(options.root) + os.sep
        self._lock = threading.Lock()
        self._arm_lock = threading.Lock()
        self._loops: tuple[LoopWatch, ...] = ()
        self._by_loop: dict[int, LoopWatch] = {}
        self._ended: list[LoopWatch] = []  # loops that stopped, for the summary
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._stall: Stall | None = None
        self._buffer: list[dict[str, Any]] = []
        self._logs: list[str] = []
        self._out_fd = -1
        self._dump_file: IO[bytes] | None = None
        self._dump_fd = -1
        self._dump_seen = 0
        self._armed_at = 0.0
        self.backstop_owner = False
        self.backstop_note = ""
        self.stalls: list[Stall] = []
        self.gil_hold_s = 0.0
        self.pid = os.getpid()
        self._main_ident = threading.main_thread().ident
        self._sdk_checked: object = None
        self._sdk_thread_ident: int | None = None
        # Free-threaded builds (3.13t): no thread holds a GIL, so the watchdog's own lateness
        # means the CPUs were oversubscribed, and a backstop dump names no holder.
        self.gil_enabled = gil_enabled()

    # -- loops -----------------------------------------------------------------------------------

    def register(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        ident = thread.ident or threading.get_ident()
        with self._lock:
            if id(loop) in self._by_loop:
                return
            # asyncio.run runs its loop again to shut down: the same loop keeps its record.
            again = next((w for w in self._ended if w.loop is loop), None)
            if again is not None:
                self._ended.remove(again)
                self._by_loop[id(loop)] = again
                self._loops = (*self._loops, again)
                return
            if thread is threading.main_thread():
                name = "main"
            elif SDK_THREAD_TARGET in thread.name or ident == self._sdk_thread_ident:
                name = "sdk"
            else:
                name = thread.name
            taken = {w.name for w in self._loops}
            base, n = name, 2
            while name in taken:
                name, n = f"{base}-{n}", n + 1
            watch = LoopWatch(loop, name, ident)
            self._by_loop[id(loop)] = watch
            self._loops = (*self._loops, watch)
        self._emit(
            {"name": "thread_name", "ph": "M", "tid": ident, "args": {"name": f"{name} loop"}}
        )

    def unregister(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            watch = self._by_loop.pop(id(loop), None)
            if watch is None:
                return
            self._loops = tuple(w for w in self._loops if w is not watch)
            self._ended.append(watch)
            # A tick left in a stopped loop runs when it runs again: that gap is not lag.
            watch.pending, watch.accounted = False, True
            stall = self._stall
            if watch.stall_start is not None and stall is not None:
                stall.loops[watch.name] = (watch.stall_start, perf_counter())
            watch.stall_start = None

    def _find_sdk_loop(self) -> None:
        """The SDK's loop, if it started before the ``run_forever`` wrap (or runs on uvloop)."""
        module = sys.modules.get(SDK_MODULE)
        if module is None:
            return
        singleton = getattr(module, SDK_SINGLETON, None)
        loop = getattr(singleton, "_loop", None)
        if loop is None or loop is self._sdk_checked:
            return
        thread = getattr(singleton, "_thread", None)
        if not (isinstance(thread, threading.Thread) and thread.ident and loop.is_running()):
            return
        self._sdk_checked = loop
        self._sdk_thread_ident = thread.ident
        self.register(loop, thread)

    # -- the thread ------------------------------------------------------------------------------

    def start(self) -> None:
        self._open_out()
        self._emit(
            {
                "name": "clock_anchor",
                "ph": "M",
                "tid": 0,
                **anchor(),
                "args": {
                    **anchor(),
                    "python": sys.version.split()[0],
                    "gil_enabled": self.gil_enabled,
                    "options": {
                        k: getattr(self.options, k)
                        for k in ("interval", "threshold", "backstop", "pyspy")
                    },
                },
            }
        )
        self._flush()
        self._setup_backstop()
        self._thread = threading.Thread(target=self._run, name="tinker-lint-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2 * max(self.options.interval, self.options.sample_interval) + 1)
        if self.backstop_owner:
            _original_cancel()
            self.backstop_owner = False
        if self._stall is not None:
            self._close(self._stall, perf_counter())
        self._flush()

    def _run(self) -> None:
        options = self.options
        rearm = options.backstop / 10
        try:
            while not self._stopping:
                step = options.sample_interval if self._stall is not None else options.interval
                # A re-arm costs about 66 us (faulthandler starts a new C thread): every cycle at
                # the default 100 ms, at most every backstop/10 at shorter intervals, so a hold of
                # 0.9 x backstop or more is dumped, and one of backstop or more always is.
                if perf_counter() - self._armed_at >= rearm - step / 2:
                    with self._arm_lock:  # step_aside() runs on the thread calling faulthandler
                        if self.backstop_owner:
                            self._armed_at = perf_counter()
                            _original_arm(options.backstop, file=self._dump_fd)
                expected = perf_counter() + step
                time.sleep(step)
                self.cycle(expected)
        except Exception:  # the watchdog must never take the program down with it
            logger.exception("tinker-lint: the watchdog stopped")

    def cycle(self, expected: float) -> None:
        """One wake-up: lateness, ticks, stalls. Nothing is allocated to keep on a quiet cycle."""
        now = perf_counter()
        options = self.options
        late = now - expected
        self._find_sdk_loop()
        if self.backstop_owner and now - self._armed_at >= options.backstop:
            self._read_dump()
        stall = self._stall
        if late > options.threshold:
            if stall is None:
                stall = self._open(expected)
            stall.starved.append((expected, now))
        for watch in self._loops:
            if watch.pending:
                age = now - watch.posted
                if age > options.threshold and watch.stall_start is None:
                    watch.stall_start = watch.posted
                    if stall is None:
                        stall = self._open(watch.posted)
                continue
            if not watch.accounted:
                watch.accounted = True
                lag = watch.ran - watch.posted
                watch.record(lag)
                if lag * 1e3 >= LAG_COUNTER_MIN_MS:
                    self._counter(watch, lag)
                if watch.stall_start is not None and stall is not None:
                    stall.loops[watch.name] = (watch.stall_start, watch.ran)
                    watch.stall_start = None
            watch.posted = perf_counter()
            watch.pending = True
            watch.accounted = False
            try:
                watch.loop.call_soon_threadsafe(watch.tick)
            except RuntimeError:  # closed between its run_forever and our post
                self.unregister(watch.loop)
        if stall is None:
            return
        if any(w.stall_start is not None for w in self._loops):
            self._sample(stall)
        else:
            self._close(stall, now)

    # -- stalls ----------------------------------------------------------------------------------

    def _open(self, start: float) -> Stall:
        stall = Stall(start=start)
        self._stall = stall
        if self.options.pyspy:
            stall.pyspy = start_pyspy(self.pid)
        return stall

    def _sample(self, stall: Stall) -> None:
        frames = sys._current_frames()
        wanted = {w.ident for w in self._loops if w.stall_start is not None}
        if self._main_ident is not None:
            wanted.add(self._main_ident)
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident in wanted:
            frame = frames.get(ident)
            if frame is None:
                continue
            samples = stall.samples.get(ident)
            if samples is None:
                samples = stall.samples[ident] = stacks.ThreadSamples(names.get(ident, str(ident)))
            samples.add(stacks.walk(frame, self.root), self.root)

    def _close(self, stall: Stall, now: float) -> None:
        self._stall = None
        for watch in self._loops:
            if watch.stall_start is not None:  # still late at stop(): end it here
                stall.loops[watch.name] = (watch.stall_start, now)
                watch.stall_start = None
        ends = [e for _, e in stall.loops.values()] + [e for _, e in stall.starved]
        stall.end = max(ends, default=now)
        if stall.pyspy is not None:
            stall.pyspy_text = finish_pyspy(stall.pyspy)
            stall.pyspy = None
        if self.backstop_owner:
            self._read_dump(stall)
        classify(stall, self)
        self.stalls.append(stall)
        self.gil_hold_s += sum(e - s for s, e in stall.starved)
        self._stall_events(stall)
        self._flush()

    def _read_dump(self, stall: Stall | None = None) -> None:
        """A dump the backstop wrote (it fired: nobody re-armed it for ``backstop`` seconds)."""
        fd = self._dump_fd
        size = os.fstat(fd).st_size
        if size <= self._dump_seen:
            return
        text = os.pread(fd, size - self._dump_seen, self._dump_seen).decode("utf-8", "replace")
        self._dump_seen = size
        stall = stall or self._stall or self._open(self._armed_at)
        stall.dump = stacks.parse_dump(text)
        stall.dump_ts = self._armed_at + self.options.backstop

    # -- output ----------------------------------------------------------------------------------

    def _open_out(self) -> None:
        path = self.options.out
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        # O_APPEND: forked children, spawned workers and resumed runs append whole lines.
        self._out_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def _emit(self, event: dict[str, Any]) -> None:
        event.setdefault("pid", self.pid)
        event.setdefault("cat", "tinker_lint")
        event.setdefault("ts", us(perf_counter()))
        self._buffer.append(event)

    def _flush(self) -> None:
        """Write the buffered events and log lines; never while a stall is open (the stalled thread
        may hold the logging lock or the file's)."""
        if self._stall is not None:
            return
        events, self._buffer = self._buffer, []
        if events and self._out_fd >= 0:
            data = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
            try:
                os.write(self._out_fd, data.encode())
            except OSError as error:
                logger.warning("tinker-lint: cannot write %s: %s", self.options.out, error)
        logs, self._logs = self._logs, []
        for line in logs:
            logger.warning("%s", line)

    def _counter(self, watch: LoopWatch, lag: float) -> None:
        self._emit(
            {
                "name": f"{watch.name}_loop_lag_ms",
                "ph": "C",
                "tid": watch.ident,
                "ts": us(watch.posted),
                "args": {f"{watch.name}_loop_lag_ms": round(lag * 1e3, 2)},
            }
        )
        if self._stall is None:
            self._flush()

    def _stall_events(self, stall: Stall) -> None:
        common = {
            # One stall writes a span per loop it stalled and the watchdog's own lateness: the
            # number (per process, from 1) lets a reader count it once.
            "stall": len(self.stalls),
            "label": stall.label,
            "kind": LABELS[stall.label],
            "rule": RULES[stall.label],
            "holder": stall.holder,
            "line": frame_json(stall.line),
            "top_lines": top_lines(stall, self.root),
        }
        if stall.pyspy_text:
            common["pyspy"] = stall.pyspy_text
        for name, (start, end) in stall.loops.items():
            ident = next((w.ident for w in self._loops if w.name == name), 0)
            self._emit(
                {"name": "stall", "ph": "B", "tid": ident, "ts": us(start), "args": {"track": name}}
            )
            self._emit(
                {
                    "name": "stall",
                    "ph": "E",
                    "tid": ident,
                    "ts": us(end),
                    "args": {"track": name, "duration_s": round(end - start, 4), **common},
                }
            )
        for start, end in stall.starved:
            self._emit(
                {
                    "name": "watchdog_starved",
                    "ph": "X",
                    "tid": threading.get_ident(),
                    "ts": us(start),
                    "dur": us(end - start),
                    "args": common,
                }
            )
        if stall.dump is not None:
            self._emit(
                {
                    "name": "gil_held_dump",
                    "ph": "i",
                    "s": "p",
                    "tid": self._main_ident or 0,
                    "ts": us(stall.dump_ts),
                    "args": {
                        "holder": stall.holder,
                        "stacks": {
                            hex(ident): [frame_json(f) for f in stack]
                            for ident, stack in stall.dump.items()
                        },
                    },
                }
            )
        self._logs.append(stall_message(stall, self.root))

    # -- backstop --------------------------------------------------------------------------------

    def _setup_backstop(self) -> None:
        if self.options.backstop <= 0:
            self.backstop_note = "backstop off (backstop=0)"
            return
        if "_pytest.faulthandler" in sys.modules and os.environ.get("PYTEST_CURRENT_TEST"):
            # pytest arms dump_traceback_later per test when faulthandler_timeout is set, before
            # this ran; one re-arm here would cancel it.
            self.step_aside("started inside a pytest test (faulthandler_timeout may own it)")
            return
        # Kept open for the process's life: faulthandler writes to its descriptor from C.
        self._dump_file = tempfile.TemporaryFile(prefix="tinker_lint_backstop_")  # noqa: SIM115
        self._dump_fd = self._dump_file.fileno()
        self.backstop_owner = True
        self.backstop_note = "on"

    def step_aside(self, why: str) -> None:
        """Leave faulthandler's one ``dump_traceback_later`` to its other user."""
        with self._arm_lock:
            self.backstop_owner = False
        self.backstop_note = (
            f"tinker-lint: watchdog backstop disabled: faulthandler.dump_traceback_later is used "
            f"elsewhere ({why}); stalls are still measured, but a C call holding the GIL is not "
            f"pinned to its line"
        )
        self._logs.append(self.backstop_note)
        self._flush()

    # -- summary ---------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        lines: Counter[stacks.Frame] = Counter()
        for stall in self.stalls:
            for samples in stall.samples.values():
                lines.update(
                    {f: n for f, n in samples.lines.items() if stacks.under(f[0], self.root)}
                )
        return {
            "loops": {
                w.name: {
                    "ticks": w.ticks,
                    "p50_ms": round(w.percentile_ms(0.5), 3),
                    "p99_ms": round(w.percentile_ms(0.99), 3),
                    "max_ms": round(w.max_lag * 1e3, 3),
                }
                for w in (*self._ended, *self._loops)
            },
            "stalls": len(self.stalls),
            "by_label": dict(Counter(s.label for s in self.stalls)),
            "gil_hold_s": round(self.gil_hold_s, 3),
            "top_lines": [
                {"line": stacks.where(f, self.root), "samples": n} for f, n in lines.most_common(5)
            ],
            "stall_lines": [stacks.where(s.line, self.root) for s in self.stalls if s.line],
            "backstop": self.backstop_note,
        }


def classify(stall: Stall, dog: Watchdog) -> None:
    """The spec's table (docs/watchdog.md): which thread held what, and what that points to."""
    root = dog.root
    sdk = next((w for w in dog._loops if w.name == "sdk"), None)
    sdk_ident = sdk.ident if sdk else dog._sdk_thread_ident
    main = dog._main_ident
    gil_ident = pyspy_holder(stall.pyspy_text)  # exact, when py-spy ran
    gil = dog.gil_enabled
    if stall.dump is not None and gil:
        ident = gil_ident
        if ident not in stall.dump:
            ident = stacks.holder(stall.dump, main, frozenset({threading.get_ident()}), root)
        stack = stall.dump.get(ident or -1, ())
        name = thread_name(ident, main, sdk_ident)
        stall.holder = name
        stall.line = stacks.site(stack, root)
        if ident is not None and ident == sdk_ident and stacks.serializing(stack):
            stall.label = "sdk_serialization"
        else:
            stall.label = "gil_starved" if sdk_ident else "gil_held"
        return
    sdk_samples = stall.samples.get(sdk_ident or -1)
    if "sdk" in stall.loops and sdk_samples and sdk_samples.serializing * 2 >= sdk_samples.count:
        stall.label, stall.holder = "sdk_serialization", "the SDK thread"
        stall.line = first(sdk_samples.sites)
        return
    user = [n for n in stall.loops if n != "sdk"]
    main_samples = stall.samples.get(main or -1)
    # Only the SDK loop stalled: starved if the main thread was computing meanwhile (a thread
    # waiting for the GIL looks parked, so the SDK thread's own samples cannot tell); else the SDK
    # loop itself was blocked.
    sdk_only = not user and "sdk" in stall.loops
    starving = stall.starved or (sdk_only and main_samples and not mostly_blocking(main_samples))
    if gil and starving:
        stall.label = "gil_starved" if sdk_ident else "gil_held"
        stall.holder = thread_name(gil_ident, main, sdk_ident) if gil_ident else "MainThread"
        stall.line = first(main_samples.sites) if main_samples else None
        if stall.starved:
            stall.note = "no dump: the hold was shorter than the backstop; line seen after it"
        return
    if not stall.loops:  # free-threaded, only the watchdog late: nobody held anything
        stall.label, stall.holder, stall.line = "cpu_oversubscribed", "no thread", None
        return
    loop_idents = {w.name: w.ident for w in dog._loops}
    ident = loop_idents.get(user[0], main) if user else sdk_ident
    samples = stall.samples.get(ident or -1)
    stall.holder = thread_name(ident, main, sdk_ident)
    stall.line = first(samples.sites) if samples else None
    blocked = samples is not None and mostly_blocking(samples)
    stall.label = "loop_blocked_sync" if blocked else "loop_blocked_cpu"


def mostly_blocking(samples: stacks.ThreadSamples) -> bool:
    return samples.count > 0 and samples.blocking * 2 >= samples.count


def first(counter: Counter[stacks.Frame]) -> stacks.Frame | None:
    top = counter.most_common(1)
    return top[0][0] if top else None


def thread_name(ident: int | None, main: int | None, sdk: int | None) -> str:
    if ident is None:
        return "an unknown thread"
    if ident == main:
        return "MainThread"
    if ident == sdk:
        return "the SDK thread"
    for thread in threading.enumerate():
        if thread.ident == ident:
            return thread.name
    return hex(ident)


def frame_json(frame: stacks.Frame | None) -> dict[str, Any] | None:
    if frame is None:
        return None
    return {"file": frame[0], "line": frame[1], "function": frame[2]}


def top_lines(stall: Stall, root: str, n: int = 5) -> list[dict[str, Any]]:
    """Inclusive sample counts of the project's lines (a call site counts with its callees)."""
    lines: Counter[stacks.Frame] = Counter()
    for samples in stall.samples.values():
        lines.update({f: k for f, k in samples.lines.items() if stacks.under(f[0], root)})
    return [{**(frame_json(f) or {}), "samples": k} for f, k in lines.most_common(n)]


def stall_message(stall: Stall, root: str) -> str:
    """The one WARNING line per stall, e.g. ``tinker-lint: main event loop stalled 1.02 s: event
    loop blocked by a sync call (TNK104) at train.py:42 in step [31 samples]``."""
    duration = stall.end - stall.start
    what = (
        ", ".join(f"{'Tinker SDK' if name == 'sdk' else name} event loop" for name in stall.loops)
        or "every Python thread (the watchdog woke up late)"
    )
    samples = sum(s.count for s in stall.samples.values())
    if stall.label in ("gil_starved", "gil_held", "sdk_serialization"):
        detail = f"GIL held by {stall.holder} at {stacks.where(stall.line, root)}"
    elif stall.label == "cpu_oversubscribed":
        detail = "more runnable threads than CPUs; raise the threshold on a shared machine"
    else:
        detail = f"{stall.holder} at {stacks.where(stall.line, root)}"
    evidence = []
    if stall.dump is not None:
        evidence.append("faulthandler dump")
    if stall.pyspy_text:
        evidence.append("py-spy dump")
    if samples:
        evidence.append(f"{samples} samples")
    if stall.note:
        evidence.append(stall.note)
    heartbeat = ""
    if ("sdk" in stall.loops or stall.label == "gil_starved") and duration >= HEARTBEAT_PERIOD_S:
        heartbeat = f"; SDK heartbeats were at least {duration:.0f} s late"
    return (
        f"tinker-lint: {what} stalled {duration:.2f} s: {LABELS[stall.label]} "
        f"({RULES[stall.label]}); {detail}{heartbeat} [{', '.join(evidence) or 'no samples'}]"
    )


def anchor() -> dict[str, float]:
    """The clock anchor other files are aligned with: the trace clock and the wall clock, now."""
    return {"perf_counter_us": us(perf_counter()), "time_time_s": time.time()}


def gil_enabled() -> bool:
    check: Callable[[], bool] | None = getattr(sys, "_is_gil_enabled", None)
    return True if check is None else bool(check())


# -- py-spy ----------------------------------------------------------------------------------------


def start_pyspy(pid: int) -> subprocess.Popen[str] | None:
    exe = shutil.which("py-spy")
    if exe is None:
        return None
    try:
        return subprocess.Popen(
            [exe, "dump", "--pid", str(pid)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    except OSError:
        return None


def finish_pyspy(process: subprocess.Popen[str]) -> str:
    try:
        out, _ = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out or ""


def pyspy_holder(text: str) -> int | None:
    """The Python thread ident of the thread py-spy marks ``(active+gil)``. py-spy 0.4 names a
    thread by its OS thread id, in decimal (``Thread 8069 (active+gil): "MainThread"``), mapped
    here through ``Thread.native_id``; older releases by its pthread id in hex (``Thread
    0x7F5C8DDF6740``), which is the ident."""
    for line in text.splitlines():
        if "+gil" not in line or not line.startswith("Thread "):
            continue
        token = line.split()[1]
        try:
            if token.lower().startswith("0x"):
                return int(token, 16)
            native = int(token)
        except ValueError:
            return None
        for thread in threading.enumerate():
            if thread.native_id == native:
                return thread.ident
        return None
    return None


# -- faulthandler: one dump_traceback_later per process, so notice its other users ---------------

_original_arm = faulthandler.dump_traceback_later
_original_cancel = faulthandler.cancel_dump_traceback_later


def _foreign_arm(*args: Any, **kwargs: Any) -> None:
    dog = _current
    if dog is not None and dog.backstop_owner:
        caller = sys._getframe(1)
        dog.step_aside(f"called from {caller.f_code.co_filename}:{caller.f_lineno}")
    _original_arm(*args, **kwargs)


def _foreign_cancel() -> None:
    dog = _current
    if dog is not None and dog.backstop_owner:
        return  # someone cancelling an arm of theirs we already replaced: keep ours
    _original_cancel()


# -- the process's watchdog ------------------------------------------------------------------------

_current: Watchdog | None = None
_start_lock = threading.Lock()
_hooked = False


def _hook_run_forever() -> None:
    """Every loop that runs registers itself: the main ``asyncio.run`` loop, the SDK loop, user
    loops (not uvloop's: its run_forever is C; the SDK singleton fallback covers the SDK loop)."""
    original = asyncio.BaseEventLoop.run_forever
    if getattr(original, "__tinker_lint__", False):
        return

    @functools.wraps(original)
    def run_forever(self: asyncio.BaseEventLoop) -> None:
        dog = _current
        if dog is not None:
            dog.register(self, threading.current_thread())
        try:
            original(self)
        finally:
            dog = _current
            if dog is not None:
                dog.unregister(self)

    run_forever.__tinker_lint__ = True  # type: ignore[attr-defined]
    asyncio.BaseEventLoop.run_forever = run_forever  # type: ignore[method-assign]


def watch(
    *,
    interval: float | None = None,
    threshold: float | None = None,
    backstop: float | None = None,
    pyspy: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    summary: bool | None = None,
) -> Watchdog:
    """Start the process's watchdog (once: a second call returns the running one). Arguments left
    out come from ``TINKER_LINT_WATCHDOG_*``, then the defaults. Call it before the first Tinker
    client is made, so the SDK loop registers when it starts."""
    global _current, _hooked
    from tinker_lint.runtime.options import options_from

    with _start_lock:
        if _current is not None:
            return _current
        options = options_from(
            interval=interval,
            threshold=threshold,
            backstop=backstop,
            pyspy=pyspy,
            out=os.fspath(out) if out is not None else None,
            root=os.fspath(root) if root is not None else None,
            summary=summary,
        )
        dog = Watchdog(options)
        _current = dog
        if not _hooked:
            _hook_run_forever()
            faulthandler.dump_traceback_later = _foreign_arm
            faulthandler.cancel_dump_traceback_later = _foreign_cancel
            atexit.register(_at_exit)
            os.register_at_fork(
                before=_before_fork,
                after_in_parent=_after_fork_in_parent,
                after_in_child=_after_fork_in_child,
            )
            _hooked = True
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        dog.start()
        if running is not None:  # watch() called from inside a running loop
            dog.register(running, threading.current_thread())
        dog._find_sdk_loop()
        return dog


def current() -> Watchdog | None:
    return _current


def stop() -> dict[str, Any] | None:
    """Stop the watchdog; its summary (also written to the events file)."""
    global _current
    dog = _current
    if dog is None:
        return None
    _current = None
    dog.stop()
    result = dog.summary()
    dog._emit({"name": "watchdog_summary", "ph": "M", "tid": 0, "args": result})
    dog._flush()
    if dog.options.summary:
        print(summary_text(result), file=sys.stderr)
    return result


def summary_text(result: dict[str, Any]) -> str:
    lines = [
        f"tinker-lint watchdog: {result['stalls']} stall(s), GIL held {result['gil_hold_s']} s"
    ]
    if result["backstop"] != "on":
        lines.append(f"  {result['backstop']}")
    for label, n in sorted(result["by_label"].items()):
        lines.append(f"  {n} x {LABELS[label]} ({RULES[label]})")
    for name, loop in result["loops"].items():
        lines.append(
            f"  {name} loop: {loop['ticks']} ticks, lag p50 {loop['p50_ms']} ms, "
            f"p99 {loop['p99_ms']} ms, max {loop['max_ms']} ms"
        )
    for line in result["top_lines"]:
        lines.append(f"  {line['samples']:>5} samples  {line['line']}")
    return "\n".join(lines)


def _at_exit() -> None:
    # At exit, say nothing rather than print a traceback over the user's output.
    with contextlib.suppress(Exception):
        stop()


def _before_fork() -> None:
    """Disarm the backstop over a fork: a child forked while faulthandler's timer is armed hangs
    in its first dump_traceback_later or cancel (CPython waits on the parent's timer thread)."""
    dog = _current
    if dog is None:
        return
    dog._arm_lock.acquire()
    if dog.backstop_owner:
        _original_cancel()


def _after_fork_in_parent() -> None:
    dog = _current
    if dog is not None and dog._arm_lock.locked():
        dog._arm_lock.release()  # the watchdog re-arms on its next cycle


def _after_fork_in_child() -> None:
    """A forked child has only the forking thread: restart the watchdog there, keeping only the
    loop that thread runs (if any), with its own pid, anchor and backstop file."""
    global _current
    parent = _current
    if parent is None:
        return
    if parent._arm_lock.locked():
        parent._arm_lock.release()
    _current = None
    child = Watchdog(parent.options)
    _current = child
    me = threading.get_ident()
    for watch in parent._loops:
        if watch.ident == me:
            child.register(watch.loop, threading.current_thread())
    os.close(parent._out_fd)
    child.start()
