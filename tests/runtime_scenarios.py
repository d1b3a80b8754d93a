"""Training loops against a fake in-process Tinker server, on the real SDK's loop thread.

    python -m tests.runtime_scenarios SCENARIO LOG_DIR [--cookbook]

The real `tinker.TrainingClient` class, with `forward_backward` and `optim_step` replaced by fakes
that hand a request to a server coroutine on the SDK's own event loop thread (the singleton every
client uses) and return the SDK's `AwaitableConcurrentFuture`: the user's waits, the done
callbacks and the threads are the SDK's, only the network is missing. The server runs one request
at a time for ``BUSY`` seconds each and writes what it did to LOG_DIR/server_truth.jsonl
(perf_counter µs, the cookbook's clock). `tinker_lint.runtime.record()` writes
LOG_DIR/tinker_lint_runtime.jsonl; with ``--cookbook`` the real cookbook tracing
(`tinker_cookbook.utils.trace.trace_init`, on the path) writes LOG_DIR/trace_events.jsonl too.

Each scenario's loop is a function below; the tests find the lines of its waits by their
``# wait:`` comments, and of its GIL hogs by their ``# hog:`` comments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np
import tinker
from tinker.lib.internal_client_holder import _internal_client_holder_thread_singleton
from tinker.lib.public_interfaces.api_future import AwaitableConcurrentFuture

# Seconds of server work per request (``SCENARIO_BUSY``: longer, so that a blocked event loop
# outlasts the watchdog's threshold).
BUSY = float(os.environ.get("SCENARIO_BUSY", "0.03"))
STEPS = 4


class FakeServer:
    """One request at a time, in the order submitted, each ``BUSY`` seconds."""

    def __init__(self) -> None:
        self.truth: list[dict[str, Any]] = []
        self._lock: asyncio.Lock | None = None

    async def serve(self, op: str) -> str:
        if self._lock is None:
            self._lock = asyncio.Lock()  # made on the SDK's loop, which runs every request
        async with self._lock:
            start = time.perf_counter()
            await asyncio.sleep(BUSY)
            self.truth.append({"op": op, "start": start * 1e6, "end": time.perf_counter() * 1e6})
        return op


SERVER = FakeServer()


def _submit(op: str) -> AwaitableConcurrentFuture[str]:
    loop = _internal_client_holder_thread_singleton.get_loop()
    future: Future[str] = asyncio.run_coroutine_threadsafe(SERVER.serve(op), loop)
    return AwaitableConcurrentFuture(future)


def forward_backward(self: Any, data: Any, loss_fn: Any, loss_fn_config: Any = None) -> Any:
    return _submit("forward_backward")


def optim_step(self: Any, optim_params: Any = None, **kwargs: Any) -> Any:
    return _submit("optim_step")


def install_fake_server() -> tinker.TrainingClient:
    """The fakes on the real class (before any tracing wraps it), and a client that needs no
    server to be made."""
    tinker.TrainingClient.forward_backward = forward_backward  # type: ignore[method-assign]
    tinker.TrainingClient.optim_step = optim_step  # type: ignore[method-assign]
    return object.__new__(tinker.TrainingClient)


# --- the loops -----------------------------------------------------------------------------------


def serialized(tc: Any) -> None:
    """Each request waited for before the next is submitted: never two in flight."""
    for _ in range(STEPS):
        tc.forward_backward([], "cross_entropy").result()  # wait: serialized-fwd
        tc.optim_step(None).result()  # wait: serialized-optim


def pipelined(tc: Any) -> None:
    """Both requests of a step submitted before either is waited for."""
    for _ in range(STEPS):
        fwd = tc.forward_backward([], "cross_entropy")
        optim = tc.optim_step(None)
        fwd.result()  # wait: pipelined-fwd
        optim.result()  # wait: pipelined-optim


async def serialized_async(tc: Any) -> None:
    """The serialized loop in ``async def``: ``await`` of each future before the next submit."""
    for _ in range(STEPS):
        await tc.forward_backward([], "cross_entropy")  # wait: async-fwd
        await tc.optim_step(None).result_async()  # wait: async-optim


async def blocking_in_async(tc: Any) -> None:
    """The serialized loop in ``async def`` with ``.result()``: each wait blocks the event loop."""
    for _ in range(STEPS):
        tc.forward_backward([], "cross_entropy").result()  # wait: blocking-fwd
        tc.optim_step(None).result()  # wait: blocking-optim


# --- GIL hogs and a quiet run (with ``--watch``) ----------------------------------------------

HOG_SECONDS = 1.0  # each hog, against the watchdog's 0.25 s threshold and 0.5 s backstop
HOG_STEPS = 1  # a training loop of one step: each hog once
QUIET_STEPS = 50  # about 3 s of pipelined steps
WEIGHTS_PER_DATUM = 1000
_cookbook_trace: Any = None  # tinker_cookbook.utils.trace, with --cookbook


def span(name: str) -> contextlib.AbstractAsyncContextManager[Any]:
    """The cookbook's ``scope_span`` under its tracing; else nothing."""
    if _cookbook_trace is None:
        return contextlib.nullcontext()
    span_of: contextlib.AbstractAsyncContextManager[Any] = _cookbook_trace.scope_span(name)
    return span_of


def _datums(rows: int) -> list[dict[str, list[float]]]:
    """``rows`` datums of scrambled float weights (each row a copy: built in C, in milliseconds,
    so that making the batch does not block the event loop itself)."""
    weights = [(i * 2654435761 % 1_000_003) / 7.0 for i in range(WEIGHTS_PER_DATUM)]
    return [{"weights": list(weights)} for _ in range(rows)]


def _rows_for(seconds: float, work: Any) -> int:
    """How many datums ``work`` takes ``seconds`` to get through here, fast machine or loaded
    (measured on a sample, scaled linearly: both hogs are linear in their input)."""
    sample = _datums(20)
    start = time.perf_counter()
    work(sample)
    per_row = (time.perf_counter() - start) / len(sample)
    return max(20, min(20_000, int(seconds / max(per_row, 1e-9))))


def _per_element_weights(datums: list[dict[str, list[float]]]) -> float:
    total = 0.0
    for datum in datums:
        weights = np.asarray(datum["weights"])
        for pos in range(len(weights)):
            total += weights[pos].item()
    return total


async def gil_hog(tc: Any) -> None:
    """One step whose client holds the GIL while both requests are in flight, so the SDK thread
    has work to do: first in one C call (``json.dumps`` of the batch: the SDK thread and the
    watchdog both starve, the faulthandler backstop sees the line), then in a pure-Python loop
    (the GIL changes hands every 5 ms: the SDK loop keeps ticking, the main loop is blocked). The
    pause between them lets every loop answer a tick, so they are two stalls, not one."""
    rows_c = _rows_for(HOG_SECONDS, json.dumps)
    rows_py = _rows_for(HOG_SECONDS, _per_element_weights)
    datums = _datums(max(rows_c, rows_py))
    for _ in range(HOG_STEPS):
        fwd = tc.forward_backward(datums, "cross_entropy")
        optim = tc.optim_step(None)
        async with span("serialize_batch"):
            json.dumps(datums[:rows_c])  # hog: c_call
        await asyncio.sleep(0.4)
        async with span("per_token_weights"):
            total = 0.0
            for datum in datums[:rows_py]:
                weights = np.asarray(datum["weights"])
                for pos in range(len(weights)):
                    total += weights[pos].item()  # hog: py_loop
        await asyncio.sleep(0.4)
        await fwd  # wait: hog-fwd
        await optim  # wait: hog-optim


async def quiet(tc: Any) -> None:
    """Pipelined steps, nothing else: the watchdog must see no stall over the whole run."""
    for _ in range(QUIET_STEPS):
        async with span("train_step"):
            fwd = tc.forward_backward([], "cross_entropy")
            optim = tc.optim_step(None)
            await fwd  # wait: quiet-fwd
            await optim  # wait: quiet-optim


# The watchdog's options for these scenarios (the others: main() below). The backstop (0.5 s) must
# fire inside the 1 s C call; the default threshold (0.25 s), not 0.1 s, keeps a loaded machine's
# scheduling gaps out of the quiet run's stalls.
WATCH_OPTIONS: dict[str, dict[str, float]] = {
    "gil_hog": {"threshold": 0.25, "backstop": 0.5},
    "quiet": {"threshold": 0.25, "backstop": 0.5},
}


SCENARIOS = {
    "blocking_in_async": blocking_in_async,
    "gil_hog": gil_hog,
    "quiet": quiet,
    "serialized": serialized,
    "pipelined": pipelined,
    "serialized_async": serialized_async,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("--cookbook", action="store_true")
    parser.add_argument("--watch", action="store_true", help="run the watchdog too")
    args = parser.parse_args()
    args.log_dir.mkdir(parents=True, exist_ok=True)
    tc = install_fake_server()
    from tinker_lint.runtime import record

    record.record(args.log_dir / record.OUTPUT_NAME)
    if args.watch:
        from tinker_lint.runtime import stop, watch

        # Unless WATCH_OPTIONS says otherwise, a stall opens after 0.1 s (the requests take
        # longer) and there is no faulthandler backstop: the waits release the GIL.
        options = WATCH_OPTIONS.get(args.scenario, {"threshold": 0.1, "backstop": 0})
        watch(out=args.log_dir / record.OUTPUT_NAME, summary=False, **options)
    if args.cookbook:
        global _cookbook_trace
        from tinker_cookbook.utils import trace

        trace.trace_init(output_file=str(args.log_dir / "trace_events.jsonl"))
        _cookbook_trace = trace
    loop = SCENARIOS[args.scenario]
    if asyncio.iscoroutinefunction(loop):
        asyncio.run(loop(tc))
    else:
        loop(tc)
    if args.cookbook:
        trace.trace_shutdown()
    if args.watch:
        stop()
    record.stop()
    with open(args.log_dir / "server_truth.jsonl", "w", encoding="utf-8") as f:
        for row in SERVER.truth:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
