"""The recorder: training requests timed from submit to completion, and the call site of every
wait on a Tinker future, written to tinker-lint's own file on the cookbook's clock.

The cookbook's tracing (`tinker_cookbook.utils.trace`, 0.6.1 on tinker 0.38) times
`forward_backward`/`optim_step` only while the call that returns the future runs (0.002 s against
0.533 s in flight, docs/runtime-triage in the spec): nothing it writes says how many training
requests were queued at a time, so not when the server had nothing to do. `record()` wraps those
methods on `tinker.TrainingClient` (the class, so every client, whatever made it) and the waits of
the SDK's futures (`result()`, `result_async()`, `await`):

- ``{"name": "inflight:forward_backward", "ph": "B"/"E", ...}`` on a track of its own per request
  (ids from 2,000,000: the cookbook's future tracks start at 1,000,000), "E" written by the
  future's done callback, on the SDK's thread. Named ``inflight:*`` so that the cookbook's own
  ``forward_backward`` spans and ``time/forward_backward`` keep their meaning.
- ``{"name": "wait", "ph": "X", "ts": ..., "dur": ..., "args": {"file", "line", "function",
  "op", "in_flight"}}`` for each wait made by code outside the SDK: where it waits, on what, and
  how many training requests were in flight when it began (0 with a submit after it: a bubble).
- one ``tinker_lint_clock`` metadata record first (``perf_counter_us`` beside ``time_time_s``), to
  align this file with files on other clocks.

Timestamps are ``time.perf_counter() * 1e6`` µs, as in the cookbook's ``trace_events.jsonl``, so
`tinker-lint trace` lays both on one timeline. Wrapping happens before or after the cookbook's
``trace_init``: each wraps what it finds, and neither changes what the other measures.

Only the standard library and the already imported `tinker` are touched: this module is imported
in the user's training process.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import IO, Any

# The SDK methods that submit a training request and return its future (tinker 0.38: the `*_async`
# forms call these, so they are covered too).
TRAINING_OPS = ("forward_backward", "forward_backward_custom", "forward", "optim_step")
# The methods that wait on an SDK future.
WAITS = ("result", "result_async", "__await__")
OUTPUT_NAME = "tinker_lint_runtime.jsonl"
_FIRST_TRACK = 2_000_000
_MARK = "_tinker_lint_recorded"


def _micros() -> float:
    return time.perf_counter() * 1e6


class Recorder:
    """The open output file, the requests in flight, and what was wrapped (to undo it)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: IO[str] | None = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
        self._lock = threading.Lock()
        self._tracks = itertools.count(_FIRST_TRACK)
        self._pid = os.getpid()
        self.in_flight = 0
        self._undo: list[tuple[type, str, Any]] = []
        self._sdk_root = ""
        self.write(
            {
                "name": "tinker_lint_clock",
                "ph": "M",
                "pid": self._pid,
                "tid": 0,
                "ts": _micros(),
                "args": {
                    "perf_counter_us": _micros(),
                    "time_time_s": time.time(),
                    "source": "record",
                },
            }
        )

    def write(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, separators=(",", ":")) + "\n"
        with self._lock:
            if self._file is not None:
                self._file.write(line)

    def close(self) -> None:
        for cls, name, original in reversed(self._undo):
            setattr(cls, name, original)
        self._undo.clear()
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    # --- wrapping ------------------------------------------------------------------------------

    def install(self, tinker: Any) -> None:
        self._sdk_root = os.path.dirname(os.path.abspath(tinker.__file__)) + os.sep
        for name in TRAINING_OPS:
            original = tinker.TrainingClient.__dict__.get(name)
            if original is not None and not getattr(original, _MARK, False):
                self._replace(tinker.TrainingClient, name, self._timed_op(original, name))
        for cls in _future_classes(tinker.APIFuture):
            for name in WAITS:
                original = cls.__dict__.get(name)
                if original is None or getattr(original, _MARK, False):
                    continue
                if getattr(original, "__isabstractmethod__", False):
                    continue
                if name == "__await__":
                    wrapped = self._timed_await(original)
                elif name == "result_async":
                    wrapped = self._timed_async_wait(original)
                else:
                    wrapped = self._timed_wait(original)
                self._replace(cls, name, wrapped)

    def _replace(self, cls: type, name: str, wrapped: Any) -> None:
        setattr(wrapped, _MARK, True)
        self._undo.append((cls, name, cls.__dict__[name]))
        setattr(cls, name, wrapped)

    def _timed_op(self, original: Callable[..., Any], op: str) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def submit(*args: Any, **kwargs: Any) -> Any:
            track = next(recorder._tracks)
            site = recorder.call_site(sys._getframe(1))
            begin = {"name": f"inflight:{op}", "ph": "B", "pid": recorder._pid, "tid": track}
            with recorder._lock:
                recorder.in_flight += 1
            recorder.write({**begin, "ts": _micros(), "args": {"op": op, **site}})
            try:
                future = original(*args, **kwargs)
            except BaseException:
                recorder._done(begin, "error")
                raise
            if hasattr(future, "__dict__"):
                future.__dict__[_MARK] = op  # what its waits are waiting for
            try:
                done_future = future.future()
            except Exception:  # not a future this version's SDK makes: the request is not timed
                recorder._done(begin, "unknown")
            else:
                done_future.add_done_callback(lambda done: recorder._done(begin, _status(done)))
            return future

        return submit

    def _done(self, begin: dict[str, Any], status: str) -> None:
        with self._lock:
            self.in_flight -= 1
        self.write({**begin, "ph": "E", "ts": _micros(), "args": {"status": status}})

    def _timed_wait(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def result(future: Any, *args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1)
            if recorder.in_sdk(caller):
                return original(future, *args, **kwargs)
            start, in_flight = _micros(), recorder.in_flight
            try:
                return original(future, *args, **kwargs)
            finally:
                recorder.wait_done(future, caller, start, in_flight)

        return result

    def _timed_async_wait(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        async def result_async(future: Any, *args: Any, **kwargs: Any) -> Any:
            # A coroutine's frame runs when it is awaited: the awaiting frame is the caller.
            caller = sys._getframe(1)
            if recorder.in_sdk(caller):
                return await original(future, *args, **kwargs)
            start, in_flight = _micros(), recorder.in_flight
            try:
                return await original(future, *args, **kwargs)
            finally:
                recorder.wait_done(future, caller, start, in_flight)

        return result_async

    def _timed_await(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def await_(future: Any) -> Generator[Any, None, Any]:
            # Driven by the ``await`` itself: the frame that drives it is the awaiting one.
            caller = sys._getframe(1)
            if recorder.in_sdk(caller):
                return (yield from original(future))
            start, in_flight = _micros(), recorder.in_flight
            try:
                return (yield from original(future))
            finally:
                recorder.wait_done(future, caller, start, in_flight)

        return await_

    def wait_done(self, future: Any, caller: Any, start: float, in_flight: int) -> None:
        end = _micros()
        op = future.__dict__.get(_MARK) if hasattr(future, "__dict__") else None
        self.write(
            {
                "name": "wait",
                "ph": "X",
                "pid": self._pid,
                "tid": threading.get_ident() % 1_000_000,
                "ts": start,
                "dur": end - start,
                "args": {**self.call_site(caller), "op": op, "in_flight": in_flight},
            }
        )

    # --- frames --------------------------------------------------------------------------------

    def in_sdk(self, frame: Any) -> bool:
        """A wait the SDK makes on its own futures (``__await__`` calling ``result_async``, a
        combined future waiting for its parts), or one of this module's wrappers on the way to
        the SDK's: not the user's."""
        filename = frame.f_code.co_filename
        return filename == __file__ or (
            bool(self._sdk_root) and filename.startswith(self._sdk_root)
        )

    def call_site(self, frame: Any) -> dict[str, Any]:
        """The first frame outside the SDK and this module, as file, line and function."""
        while frame is not None and self.in_sdk(frame):
            frame = frame.f_back
        if frame is None:
            return {"file": None, "line": None, "function": None}
        code = frame.f_code
        return {"file": code.co_filename, "line": frame.f_lineno, "function": code.co_name}


def _status(done: Any) -> str:
    if done.cancelled():
        return "cancelled"
    return "error" if done.exception() is not None else "ok"


def _future_classes(base: type) -> list[type]:
    """``base`` and every subclass of it the SDK has defined, in a fixed order."""
    seen: dict[type, None] = {base: None}
    todo = [base]
    while todo:
        sub: type
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen[sub] = None
                todo.append(sub)
    return sorted(seen, key=lambda cls: (cls.__module__, cls.__qualname__))


_active: Recorder | None = None


def record(path: str | os.PathLike[str] | None = None) -> Recorder:
    """Start recording (once per process; a second call returns the running recorder) into
    ``path``, by default ``$TINKER_LINT_RECORD_OUT`` or ``./tinker_lint_runtime.jsonl``.

    Call it before the training loop; `tinker` is imported here if it is not yet.
    """
    global _active
    if _active is not None:
        return _active
    import tinker

    target = os.fspath(path) if path is not None else None
    target = target or os.environ.get("TINKER_LINT_RECORD_OUT") or OUTPUT_NAME
    recorder = Recorder(target)
    recorder.install(tinker)
    _active = recorder
    return recorder


def stop() -> None:
    """Undo the wrapping and close the file (at exit, or for a test)."""
    global _active
    if _active is not None:
        _active.close()
        _active = None
