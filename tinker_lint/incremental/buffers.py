"""What one lint of a file keeps for its next lint: an editor's buffers, by path.

The language server lints a buffer on every edit, and gives the engine the path as ``parse_key``.
Each stage then keeps, per path, what lets the next lint redo only what the edit changed: libcst's
parse (``parse.py``), CPython's verdict and tree (``cpython.py``), the tree pre-filter's facts per
statement (``prefilter/sketch.py``), the text pre-filter's facts (``run/engine.py``) and the
function summaries (``model/reuse.py``). Each keeps them in a ``BufferStore``; every store keeps
the same last ``kept_files()`` paths, and none in a batch run (``parses_kept(0)``), where each
file is linted once and what is kept would only hold memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

DEFAULT_FILES = 4  # an editor's open buffers; the least recently linted is forgotten first
_files = DEFAULT_FILES
_stores: list[BufferStore[object]] = []


def kept_files() -> int:
    return _files


def keeps(key: str | None) -> bool:
    """Whether a lint under ``key`` keeps anything for the next one."""
    return key is not None and _files > 0


@contextmanager
def parses_kept(count: int) -> Iterator[None]:
    """Keep what ``count`` files' lints make meanwhile (0: nothing; a batch run)."""
    global _files
    before = _files
    _files = count
    try:
        yield
    finally:
        _files = before
        for store in _stores:
            store.trim()


def halfway(old: str, new: str, prefix: int, suffix: int, start: int, end: int) -> str | None:
    """The text with the first of two changes made and the second not: ``old[start:end]`` is the
    text between them (whole statements after the one the first change is in, before the one
    the last is in), found again in ``new`` within the changed part (after the common ``prefix``,
    before the common ``suffix``); None when it is not there. Only a guess at where the changes
    part (an editor's two edits far apart: the last one undone, the next one made); the callers
    check each half on its own."""
    if end <= start:
        return None
    at = new.find(old[start:end], prefix, len(new) - suffix)
    return None if at < 0 else new[:at] + old[start:]


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two texts of a buffer (halving: slices compare at C
    speed): where an edit begins."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of their longest common suffix, at most ``limit`` (the text after the prefix)."""
    low, high = 0, min(len(a), len(b), limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def forget(key: str) -> None:
    """Forget what every stage keeps for the buffer ``key`` (the server: its document closed).
    Left to the least-recently-linted order, a closed file's parse and model stayed until
    ``kept_files()`` other files were linted (about 100 MB of a 170 KB file's)."""
    for store in _stores:
        store.pop(key)


def forget_all() -> None:
    """Forget what every stage keeps (a test starts from nothing kept)."""
    for store in _stores:
        store.clear()


class BufferStore(Generic[T]):
    """One stage's kept state, by path; safe to use from several threads (the server lints on a
    worker, tests on their own)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()
        _stores.append(self)  # type: ignore[arg-type]

    def get(self, key: str) -> T | None:
        with self._lock:
            return self._items.get(key)

    def pop(self, key: str) -> T | None:
        with self._lock:
            return self._items.pop(key, None)

    def put(self, key: str, value: T) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            self._trim()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def trim(self) -> None:
        with self._lock:
            self._trim()

    def _trim(self) -> None:
        while len(self._items) > _files:
            self._items.popitem(last=False)
