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
    found: dict[int, frozenset[str] | None] = {}
    if "noqa" not in text.lower():
        return found
    for number, line in enumerate(_LINES.split(text), start=1):
        if "#" not in line:
            continue
        match = NOQA.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        found[number] = frozenset(c.upper() for c in _CODE.findall(codes)) if codes else None
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
    if "noqa" not in text.lower():
        return frozenset()
    exempt: set[str] = set()
    for line in _LINES.split(text):
        match = FILE_NOQA.match(line) if "noqa" in line.lower() else None
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
