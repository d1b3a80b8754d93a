"""``# noqa`` and ``# noqa: TNK101`` on the reported line, with flake8's syntax and meaning; and the
file-level exemptions, as ruff reads them, in both front ends (docs/configuration.md):

- ``# ruff: noqa`` or ``# flake8: noqa`` on a line of its own: no tinker-lint finding in the file;
- ``# ruff: noqa: TNK105`` (or ``# flake8: noqa: TNK105``): none of those codes (or prefixes)
  in the file.

flake8 itself skips a whole file at ``# flake8: noqa``, with or without codes (its other plugins
too); ``# ruff: noqa: ...`` is the per-code form both front ends read alike.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# The same pattern flake8 uses (flake8/defaults.py NOQA_INLINE_REGEX).
# (``[A-Z]+``: one letter only would not match ``TNK101``, and the directive would silence all codes.)
NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
# Python's line ends only: str.splitlines() also splits at form feeds and other separators that
# Python's tokenizer takes for whitespace, which would shift every later line number.
_LINES = re.compile(r"\r\n|\r|\n")
# flake8's NOQA_FILE (a comment that starts its line), for ruff's spelling too, with ruff's codes.
FILE_NOQA = re.compile(
    r"[ \t\f]*#[ \t]*(?:flake8|ruff)[:=][ \t]*noqa"
    r"(?:[ \t]*:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)


def noqa_lines(text: str) -> dict[int, frozenset[str] | None]:
    """Line number -> the codes its ``# noqa`` names (None: all codes)."""
    return dict(_scan(text).lines)  # the kept answer stays as it is


def _noqa_lines(candidates: list[tuple[int, str]]) -> dict[int, frozenset[str] | None]:
    found: dict[int, frozenset[str] | None] = {}
    for number, line in candidates:
        if "#" not in line:
            continue
        match = NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        found[number] = frozenset(c.upper() for c in _CODE.findall(codes)) if codes else None
    return found


class _Scan(NamedTuple):
    text: str
    lines: dict[int, frozenset[str] | None]
    exemptions: frozenset[str]


# Both directives contain "noqa" in some case: only the lines that do are read (found by one
# search of the text, at C speed), not every line of it. The last text's answer is kept: the
# engine asks about the same text twice per lint (the typos, then the findings to drop).
# (Spelt out: as fast again as ``re.IGNORECASE``, which matches no other character for these four
# letters: every code point was tried.)
_NOQA_WORD = re.compile("[nN][oO][qQ][aA]")
_last = _Scan("", {}, frozenset())


def _scan(text: str) -> _Scan:
    global _last
    last = _last
    if text is last.text or text == last.text:
        return last
    candidates = _lines_with_noqa(text)
    scanned = _Scan(text, _noqa_lines(candidates), _file_exemptions(candidates))
    _last = scanned
    return scanned


def _lines_with_noqa(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of each line that contains "noqa" (any case), numbered as
    ``_LINES`` splits the text."""
    found: list[tuple[int, str]] = []
    number, counted_to, line_end = 1, 0, -1
    for match in _NOQA_WORD.finditer(text):
        at = match.start()
        if at < line_end:
            continue  # a second "noqa" on a line already taken
        # Line breaks since the last one counted ("\r\n" is one; ``at`` is never inside one).
        number += (
            text.count("\n", counted_to, at)
            + text.count("\r", counted_to, at)
            - text.count("\r\n", counted_to, at)
        )
        counted_to = at
        start = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
        following = _LINES.search(text, at)
        line_end = len(text) if following is None else following.start()
        found.append((number, text[start:line_end]))
    return found


def is_suppressed(code: str, line: int, lines: dict[int, frozenset[str] | None]) -> bool:
    if line not in lines:
        return False
    codes = lines[line]
    return codes is None or any(code.startswith(c) for c in codes)


def unknown_codes(text: str, known: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(line, code)`` for each TNK code in a ``# noqa`` that names no known code (nor a prefix of
    one): a typo that silences nothing. Other tools' codes (``E501``) are not ours to judge."""
    unknown = []
    for line, codes in noqa_lines(text).items():
        for code in sorted(codes or ()):
            if code.startswith("TNK") and not any(k.startswith(code) for k in known):
                unknown.append((line, code))
    return unknown


def file_exemptions(text: str) -> frozenset[str]:
    """The codes (or prefixes) the file's ``# ruff: noqa`` / ``# flake8: noqa`` comments exempt it
    from: ``""`` (a prefix of every code) for a blanket one; empty for none."""
    return _scan(text).exemptions


def _file_exemptions(candidates: list[tuple[int, str]]) -> frozenset[str]:
    exempt: set[str] = set()
    for _, line in candidates:
        match = FILE_NOQA.match(line)
        if match is None:
            continue
        codes = match.group("codes")
        if codes:
            exempt.update(c.upper() for c in _CODE.findall(codes))
        else:
            exempt.add("")
    return frozenset(exempt)


def is_exempt(code: str, exemptions: frozenset[str]) -> bool:
    return any(code.startswith(prefix) for prefix in exemptions)
