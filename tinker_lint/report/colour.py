"""Colour in the text reports, on a terminal only, decided as ruff decides it (its ``FORCE_COLOR``
override on top of the ``colored`` crate's ``CLICOLOR_FORCE``, ``NO_COLOR`` and ``CLICOLOR``):

1. ``FORCE_COLOR`` set and not empty: colour (CI logs that render ANSI, such as GitHub's);
2. ``CLICOLOR_FORCE`` set and not ``0``: colour;
3. ``NO_COLOR`` set and not empty: none (https://no-color.org);
4. ``CLICOLOR=0``: none;
5. otherwise colour when the report goes to a terminal, none into a pipe or a file.

The styles are ruff's: the code red and bold, the ``[*]`` and the help cyan, the path bold, the
caret and its label in the level's colour.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from tinker_lint.codes import Level

_RESET = "\x1b[0m"
BOLD, RED, YELLOW, BLUE, CYAN = "1", "31", "33", "34", "36"
LEVEL_COLOURS: dict[Level, str] = {"error": RED, "warning": YELLOW, "note": CYAN}


def wants_colour(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("FORCE_COLOR"):
        return True
    if env.get("CLICOLOR_FORCE", "0") != "0":
        return True
    if env.get("NO_COLOR") or env.get("CLICOLOR") == "0":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Style:
    """Paints text with ANSI SGR codes when enabled; returns it as it is when not."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not codes or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{_RESET}"

    def level(self, text: str, level: Level) -> str:
        return self(text, BOLD, LEVEL_COLOURS[level])


PLAIN = Style(False)
