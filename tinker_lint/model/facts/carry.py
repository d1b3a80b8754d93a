"""What the model may take over from the last lint of the same editor buffer: a protocol.

The engine hands the model a ``Carry`` for a buffer it keeps state for (``incremental/carry.py``
implements it), and None in a batch run, where each file is linted once. The model asks it by
stage name (``collect``, ``summaries``, ``walks``) and casts what it gets back to its own record:
each stage reads only what it put. The model never imports ``tinker_lint.incremental``.
"""

from __future__ import annotations

from typing import Protocol


class Carry(Protocol):
    def get(self, stage: str) -> object | None: ...
    def pop(self, stage: str) -> object | None: ...
    def put(self, stage: str, value: object) -> None: ...
