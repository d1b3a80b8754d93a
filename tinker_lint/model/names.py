"""Names the semantic model and the tree pre-filter (``sketch.py``) both go by. No libcst here: the
pre-filter runs before libcst is imported, and must agree with the model on these."""

from __future__ import annotations

import re

# Functions that block on futures (a Tinker future's ``.future()`` is a concurrent one).
BLOCKING_WAIT_FUNCTIONS = frozenset({"concurrent.futures.wait", "concurrent.futures.as_completed"})
# Container methods whose value is one of the container's elements (``pending.pop()``).
CONTAINER_GETS = frozenset({"pop", "popleft", "get_nowait"})
# Container methods whose value holds the container's elements (``futures.values()``).
CONTAINER_VIEWS = frozenset({"values", "copy", "items"})


def names_hot_call(name: str, pattern: re.Pattern[str]) -> bool:
    """``hot-loop-calls`` match the called name as written (``trainer.step``) or its last part
    (``step``)."""
    return bool(pattern.match(name) or pattern.match(name.rsplit(".", 1)[-1]))
