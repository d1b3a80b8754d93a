"""Deterministic hogs for the watchdog's subprocess tests (tests/test_watchdog.py):
``python -m tests.watchdog_scenarios NAME``, options from ``TINKER_LINT_WATCHDOG_*``.

A thread running ``_background_thread_func`` stands in for the Tinker SDK's loop thread (the SDK's
thread is unnamed, so Python names it ``Thread-N (_background_thread_func)``). The lines the tests
pin stalls to carry a ``# <NAME>`` marker; the tests find them by it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tinker_lint.runtime


class FakeSdkHolder:
    """The shape of tinker's InternalClientHolderThreadSingleton: a loop on a daemon thread."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._background_thread_func, daemon=True)
        self._thread.start()

    def _background_thread_func(self) -> None:
        self._loop.run_forever()


def busy_c_call(numbers: list[int]) -> list[int]:
    return sorted(numbers)  # C_CALL: one C call holding the GIL


def finish_batch(numbers: list[int]) -> None:
    busy_c_call(numbers)  # C_CALLER: its call site


def _scrambled(n: int) -> list[int]:
    return [(i * 2654435761) % 1_000_003 for i in range(n)]


def _sort_size_for(seconds: float) -> int:
    """How many scrambled ints one ``sorted`` call takes ``seconds`` to sort here (measured on a
    sample, scaled linearly: n log n grows a little faster, which only lengthens the hold)."""
    sample = _scrambled(200_000)
    start = time.perf_counter()
    sorted(sample)
    per_item = (time.perf_counter() - start) / len(sample)
    return max(200_000, min(8_000_000, int(seconds / max(per_item, 1e-9))))


def c_call() -> None:
    FakeSdkHolder()
    # Scrambled (a multiplicative hash builds faster than random.randrange), and as many as
    # sorting takes about a second on this machine, fast or loaded: the hold must outlast the
    # tests' 0.5 s backstop by a margin, whatever the machine.
    numbers = _scrambled(_sort_size_for(1.0))
    time.sleep(0.3)
    finish_batch(numbers)
    time.sleep(0.3)


async def compute_metrics(seconds: float) -> int:
    n = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:  # PY_LOOP: pure-Python CPU work on the main loop
        n += 1
    return n


async def py_loop_main() -> None:
    await asyncio.sleep(0.3)
    await compute_metrics(1.0)
    await asyncio.sleep(0.3)


def py_loop() -> None:
    FakeSdkHolder()
    asyncio.run(py_loop_main())


async def sync_main() -> None:
    await asyncio.sleep(0.3)
    time.sleep(0.8)  # SLEEP: a sync sleep inside async def
    await asyncio.sleep(0.3)
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(time.sleep, 0.8)
        future.result()  # RESULT: a future's .result() inside async def
    await asyncio.sleep(0.3)


def sync_call() -> None:
    FakeSdkHolder()
    asyncio.run(sync_main())


async def quiet_main(seconds: float) -> None:
    sdk = FakeSdkHolder()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        # Work handed to the SDK loop and awaited, as a client's requests are.
        future = asyncio.run_coroutine_threadsafe(asyncio.sleep(0.02), sdk._loop)
        await asyncio.wrap_future(future)
        sum(range(2000))  # a little CPU between requests, far below the threshold


def quiet() -> None:
    asyncio.run(quiet_main(float(sys.argv[2]) if len(sys.argv) > 2 else 4.0))


def serialize_for(request: Any, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        request.model_dump(mode="json")  # SERIALIZE: pydantic serialization on the SDK loop


def serialization() -> None:
    import pydantic  # tinker's dependency; a model of the shape of a training request

    class Datum(pydantic.BaseModel):
        tokens: list[int]
        weights: list[float]

    class Request(pydantic.BaseModel):
        data: list[Datum]

    request = Request(
        data=[Datum(tokens=list(range(1000)), weights=[1.0] * 1000) for _ in range(16)]
    )
    sdk = FakeSdkHolder()
    time.sleep(0.3)
    sdk._loop.call_soon_threadsafe(serialize_for, request, 0.8)
    time.sleep(1.2)


SCENARIOS = {
    "c_call": c_call,
    "py_loop": py_loop,
    "sync_call": sync_call,
    "quiet": quiet,
    "serialization": serialization,
}

if __name__ == "__main__":
    tinker_lint.runtime.watch()
    SCENARIOS[sys.argv[1]]()
