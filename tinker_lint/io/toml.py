"""Reading TOML: ``tomllib`` (``tomli`` before Python 3.11), with one more kind of invalid file.

``tomllib`` parses arrays and inline tables recursively: a value nested some thousands deep (a
crafted ``pyproject.toml``) raises ``RecursionError``, not ``TOMLDecodeError``, and would end the
run as an internal error. Here it is invalid TOML like any other, reported as the caller reports
those.
"""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError


def loads(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TOMLDecodeError("values nested too deeply") from None
