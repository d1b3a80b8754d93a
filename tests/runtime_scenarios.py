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
``# wait:`` comments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

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


SCENARIOS = {
    "blocking_in_async": blocking_in_async,
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

        # A stall opens after 0.1 s (the requests take longer); no faulthandler backstop: the
        # waits release the GIL, and pytest's own faulthandler must keep it.
        watch(out=args.log_dir / record.OUTPUT_NAME, threshold=0.1, backstop=0, summary=False)
    if args.cookbook:
        from tinker_cookbook.utils import trace

        trace.trace_init(output_file=str(args.log_dir / "trace_events.jsonl"))
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
