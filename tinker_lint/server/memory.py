"""When the server's cyclic garbage collector runs: between lints, never during one.

A lint of a big file allocates a few hundred thousand objects (libcst's nodes of the changed
statements, the semantic model, CPython's tree). With the collector on, those allocations trigger
its collections in the middle of the lint, and each older-generation collection walks the whole
heap again: the project index, the kept parse, the open files' findings (about 30 ms of a 350 ms
edit of the cookbook's ``rl/train.py``, measured with ``gc.callbacks``). So a lint runs with the
collector paused (the engine pauses it for its analysis anyway), and afterwards, once the findings
are sent, one collection of what is new since the last one frees the lint's cycles, and what
survives it is frozen (``gc.freeze``): later collections no longer walk it. Frozen objects are
still freed by reference counting; only a cycle among them would wait, for the full collection
made every ``FULL_EVERY`` lints.

The collector stays off from a lint's start until its findings are sent (``resume``): turned on
when a lint ends, it would first collect the youngest generation, which then holds every object
the lint made (about 5 ms after each edit of rl/train.py, between the findings and their sending,
measured with ``gc.callbacks``). Kept off until the pause's collection instead, it leaves four
lints' garbage to that one (40-180 ms, against 12-15).

That collection is most of the cost of freeing the last lint's model (about 17,000 objects in
cycles on rl/train.py, 12-15 ms), so it waits for a pause: the server runs it once no edit came for
``QUIET_SECONDS`` after the findings were sent (an editor's user pauses between keystrokes far
longer), and an edit that comes sooner is linted first. While edits keep coming, at most
``MAX_DEFERRED`` lints go by without one (``overdue``): the garbage waiting is bounded.

A closed document's kept parse and model (``incremental/buffers.py``) were frozen with the rest: once
dropped, their cycles would wait for the next full collection (up to ``FULL_EVERY`` lints). So a
close makes the next collection a full one (``release``), and hands the freed memory back to the
system (glibc's ``malloc_trim``: without it the process kept its peak, 8 closed 170 KB files
holding 392 MB against 63 at the start).
"""

from __future__ import annotations

import ctypes
import functools
import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FULL_EVERY = 100
QUIET_SECONDS = 0.05  # no edit for this long after the findings were sent: collect
MAX_DEFERRED = 4  # lints at most between two collections


class Collector:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paused = 0  # lints under way
        self._since_full = 0
        self._lints = 0  # lints ended since the last collection
        self._released = False  # a document was closed since the last collection

    @contextmanager
    def paused(self) -> Iterator[None]:
        """A lint: the collector is off from here to the next ``resume`` or ``idle``."""
        with self._lock:
            self._paused += 1
            gc.disable()
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self._lints += 1

    def resume(self) -> None:
        """The collector back on (once the findings of the lints that paused it are sent),
        unless a lint is under way."""
        with self._lock:
            if self._paused == 0:
                gc.enable()

    def owed(self) -> bool:
        """Whether a lint ended, or a document was closed, since the last collection (the
        collector is off until it, after a lint)."""
        return self._lints > 0 or self._released

    def release(self) -> None:
        """A document was closed (what was kept for it dropped): the next collection is a full
        one, and gives the freed memory back to the system."""
        with self._lock:
            self._released = True

    def overdue(self) -> bool:
        """Whether ``MAX_DEFERRED`` lints went by since the last collection: collect now, not
        after the next pause."""
        return self._lints >= MAX_DEFERRED

    def idle(self) -> None:
        """Collect what the last lints left, and freeze the rest (to be called when the lint's
        results are sent, when no other lint is waiting: ``QUIET_SECONDS``)."""
        with self._lock:
            if self._paused:
                return
            self._lints = 0
            self._since_full += 1
            released, self._released = self._released, False
            if released or self._since_full >= FULL_EVERY:
                self._since_full = 0
                gc.unfreeze()
            gc.collect()
            gc.freeze()
            gc.enable()
        if released:
            trim_heap()


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the C library's among them
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # glibc's (musl has none)


def trim_heap() -> None:
    """Give the heap's free pages back to the system, where the C library can (glibc)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
