"""Text from outside (a file's name, a cache entry, a configuration value) made safe to print on
a terminal: ``printable``.

A file name may hold an escape sequence (``a\x1b[2J.py``), a carriage return or a right-to-left
override, and so may anything read back from the results cache. Printed as is, it could clear the
screen, rewrite a line already shown, set the window's title or make one path look like another.
``printable`` writes each such character as its Python escape (``\\x1b``, ``\\r``, ``\\u202e``), so
what is printed is what is there; every other character (a path's backslashes, non-ASCII
letters) is kept.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls (``\x9b`` is a one-byte CSI), lone surrogates (a name that is
# not UTF-8, as Python decodes it), and the bidirectional controls (Trojan Source).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character that could drive a terminal written as its escape."""
    return _UNPRINTABLE.sub(_escape, text)
