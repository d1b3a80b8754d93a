"""What a call passes: the value given for a keyword (or at a position), and whether a keyword is
given at all. Read from the call alone; ``bindings.argument`` is the same question asked with the
called function's own signature (and its defaults)."""

from __future__ import annotations

import libcst as cst


def passed(call: cst.Call, keyword: str, position: int | None = None) -> cst.BaseExpression | None:
    """The value ``call`` passes as ``keyword=``, or as its ``position``-th positional argument
    (counted from 0, ``*args`` not counted); None when neither is given."""
    positional = 0
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is None:
            if positional == position:
                return arg.value
            positional += 1
        elif arg.keyword.value == keyword:
            return arg.value
    return None


def has_keyword(call: cst.Call, keyword: str) -> bool:
    """Whether ``call`` passes ``keyword=`` (whatever its value)."""
    return any(arg.keyword is not None and arg.keyword.value == keyword for arg in call.args)
