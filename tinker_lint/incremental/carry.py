"""The model's carry-over between lints of one buffer, as ``model/facts/carry.py``'s ``Carry``.

Each stage of the model (the one pass's per-statement records, the function summaries, the kept
subtree walks) keeps its state under the buffer's key in a ``BufferStore`` of its own, so every
stage keeps the same last ``buffers.kept_files()`` buffers and forgets a closed one together.
"""

from __future__ import annotations

import threading

from tinker_lint.incremental.buffers import BufferStore, keeps

_stores: dict[str, BufferStore[object]] = {}
_lock = threading.Lock()


def _store(stage: str) -> BufferStore[object]:
    with _lock:
        store = _stores.get(stage)
        if store is None:
            store = _stores[stage] = BufferStore()
        return store


class BufferCarry:
    """One buffer's carry-over: what each stage kept from the last lint of ``key``."""

    def __init__(self, key: str) -> None:
        self.key = key

    def get(self, stage: str) -> object | None:
        return _store(stage).get(self.key)

    def pop(self, stage: str) -> object | None:
        return _store(stage).pop(self.key)

    def put(self, stage: str, value: object) -> None:
        _store(stage).put(self.key, value)


def for_buffer(key: str | None) -> BufferCarry | None:
    """The carry-over of the buffer ``key`` (the engine's ``parse_key``), or None when nothing is
    kept (no key, or a batch run: ``buffers.parses_kept(0)``)."""
    return BufferCarry(key) if key is not None and keeps(key) else None
