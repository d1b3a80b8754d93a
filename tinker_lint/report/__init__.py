"""Reporters: one module per output format, each a ``write_*(diagnostics, out, files=N)``.

Each is imported when used: the SARIF one needs every rule's documentation (and so libcst), which a
run answered from the cache otherwise never imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_WHERE = {
    "write_text": "text",
    "write_json": "json",
    "write_sarif": "sarif",
    "write_github": "github",
}


def _lazy(name: str) -> Callable[..., None]:
    def write(*args: object, **kwargs: object) -> None:
        return __getattr__(name)(*args, **kwargs)

    write.__name__ = write.__qualname__ = name
    return write


REPORTERS = {
    "text": _lazy("write_text"),
    "full": _lazy("write_text"),  # ruff's name for ``text``
    "concise": _lazy("write_text"),
    "json": _lazy("write_json"),
    "sarif": _lazy("write_sarif"),
    "github": _lazy("write_github"),
}
__all__ = ["REPORTERS", *_WHERE]


def __getattr__(name: str) -> Callable[..., None]:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
