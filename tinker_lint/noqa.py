"""``# noqa`` and ``# noqa: TNK101`` on the reported line, with flake8's syntax and meaning; and the
file-level exemptions, as ruff reads them, in both front ends (docs/configuration.md).

A line's directive is read once (``parse_directive``) into the codes it names and the items that
are not codes; what it silences (``Suppression``) and the warnings about it
(``directive_problems``) both read that. As ruff, an item that is not a code (``TNK1O1``) or a
``# noqa:`` with no code silences nothing and is warned about; flake8's pattern took ``TNK1O1``
for the prefix ``TNK1`` and ``# noqa: TNKX`` for a blanket noqa.


- ``# ruff: noqa`` or ``# flake8: noqa`` on a line of its own: no tinker-lint finding in the file;
- ``# ruff: noqa: TNK105`` (or ``# flake8: noqa: TNK105``): none of those codes (or prefixes)
  in the file.

flake8 itself skips a whole file at ``# flake8: noqa``, with or without codes (its other plugins
too); ``# ruff: noqa: ...`` is the per-code form both front ends read alike.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import NamedTuple

# Where a directive starts, as flake8 finds it (flake8/defaults.py NOQA_INLINE_REGEXP): the word in
# any case after "# "; a ``:`` right after it opens a list of codes, read by ``parse_directive``.
NOQA = re.compile(r"# noqa", re.IGNORECASE)
# A whole code: letters, then digits (flake8 reads them in any case; they are compared upper-cased).
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
# What reads as an attempt at a code though it is not one (``TNK1O1``, ``TNK101x``): letters, then a
# digit. Text after the codes that does not ("TNK101 because ...") is an explanation.
_CODE_LIKE = re.compile(r"[A-Z]+[0-9]", re.IGNORECASE)
# The items of a list: separated by commas and white space, up to the next ``#``.
_SEPARATOR = re.compile(r"[\s,]*")
_ITEM = re.compile(r"[^\s,#]+")
# Python's line ends only: str.splitlines() also splits at form feeds and other separators that
# Python's tokenizer takes for whitespace, which would shift every later line number.
_LINES = re.compile(r"\r\n|\r|\n")
# flake8's NOQA_FILE (a comment that starts its line), for ruff's spelling too, with ruff's codes.
FILE_NOQA = re.compile(
    r"[ \t\f]*#[ \t]*(?:flake8|ruff)[:=][ \t]*noqa"
    r"(?:[ \t]*:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)


class Directive(NamedTuple):
    """A ``# noqa`` comment as read once, for both what it silences and what is wrong with it."""

    codes: frozenset[str] | None  # upper-cased; None: a blanket directive (every code)
    # Items of the list that are not codes (``TNK1O1``, ``TNKX``): each silences nothing.
    invalid: tuple[str, ...]
    text: str  # the directive as written, from ``#`` to its last item
    start: int  # its column (0-based) in the line
    end: int  # just past its last code (past ``noqa`` for a blanket one): where a code is added

    @property
    def empty(self) -> bool:
        """``# noqa:`` followed by no code at all (``# noqa: ,``, ``# noqa: TNKX``): it silences
        nothing, as ruff reads it (flake8 reads it as a blanket ``# noqa``)."""
        return self.codes is not None and not self.codes


def parse_directive(line: str) -> Directive | None:
    """The line's ``# noqa`` directive, if it has one.

    After ``# noqa:``, the items up to the end of the line (or a ``#``) are read as the codes:
    separated by commas or white space; an item that is not a whole code (letters then digits) is
    invalid where a code is expected (first, or after a comma) or where it reads as an attempt at
    one (``TNK1O1``); after white space, any other word ends the list (an explanation). flake8's
    pattern would take ``TNK1O1`` for ``TNK1`` + ``O1`` and ``# noqa: TNKX`` for a blanket noqa.
    """
    match = NOQA.search(line) if "#" in line else None
    if match is None:
        return None
    start, pos = match.start(), match.end()
    if not line.startswith(":", pos):
        return Directive(None, (), line[start:pos], start, pos)
    pos += 1
    codes: list[str] = []
    invalid: list[str] = []
    end = pos
    expected = True  # a code must come first, and after each comma
    while True:
        gap = _SEPARATOR.match(line, pos)
        assert gap is not None  # it matches the empty string
        expected = expected or "," in gap.group()
        item = _ITEM.match(line, gap.end())
        if item is None:
            break
        word = item.group()
        if _CODE.fullmatch(word):
            codes.append(word.upper())
        elif expected or _CODE_LIKE.match(word):
            invalid.append(word)
        else:
            break  # prose after the codes
        pos = end = item.end()
        expected = False
    text = line[start:end]
    if not codes and not invalid:  # a comma alone: the whole comment, as written
        text = line[start : _next_hash(line, pos)]
    return Directive(frozenset(codes), tuple(invalid), text.rstrip(), start, end)


def _next_hash(line: str, start: int) -> int:
    at = line.find("#", start)
    return len(line) if at < 0 else at


def code_addition(line: str, codes: list[str]) -> tuple[int, int, str] | None:
    """``(start, end, text)``: what to put between columns ``start`` and ``end`` (0-based) of
    ``line`` for its ``# noqa`` to name ``codes`` too: appended to its list, or a new
    ``  # noqa: CODES`` at the end of the line. None when it silences them already (a blanket
    ``# noqa``, or codes it names). The caller checks that the result is a comment there."""
    directive = parse_directive(line)
    if directive is None:
        start = len(line.rstrip(" \t"))
        return start, len(line), f"  # noqa: {', '.join(codes)}"
    if directive.codes is None:
        return None
    missing = [code for code in codes if code not in directive.codes]
    if not missing:
        return None
    if directive.empty and not directive.invalid:  # no code at all: written anew
        start = directive.start
        return start, start + len(directive.text), f"# noqa: {', '.join(missing)}"
    return directive.end, directive.end, "".join(f", {code}" for code in missing)


def noqa_lines(text: str) -> dict[int, frozenset[str] | None]:
    """Line number -> the codes its ``# noqa`` names (None: all codes; empty: none, a directive
    with no valid code)."""
    return {line: d.codes for line, d in _scan(text).lines.items()}


def noqa_directives(text: str) -> dict[int, Directive]:
    """Line number -> its ``# noqa`` directive, as read."""
    return dict(_scan(text).lines)  # the kept answer stays as it is


def _noqa_lines(candidates: list[tuple[int, str]]) -> dict[int, Directive]:
    found: dict[int, Directive] = {}
    for number, line in candidates:
        directive = parse_directive(line)
        if directive is not None:
            found[number] = directive
    return found


class _Scan(NamedTuple):
    text: str
    lines: dict[int, Directive]
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


def continued_lines(text: str) -> dict[int, int]:
    """Each line that a multi-line string or a backslash continuation carries on past, -> the line
    where that ends: where a comment can follow, and where ruff reads (and ``--add-noqa`` writes)
    the directive for a finding on any of those lines (flake8 reads the lines joined). Lines
    that end where a comment may follow are not in it; nor is any line of a text that does not
    tokenize."""
    found: dict[int, int] = {}
    first = 0
    try:
        # ``newline=""``: lines end where ``_LINES`` ends them (a lone "\r" too), unchanged.
        tokens = tokenize.generate_tokens(io.StringIO(text, newline="").readline)
        for token in tokens:
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            if not first:
                first = token.start[0]
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                last = token.end[0]
                for line in range(first, last):
                    found[line] = last
                first = 0
    except (tokenize.TokenError, SyntaxError):
        return {}
    return found


class Suppression:
    """What a text's line directives silence: a finding's own line's, else (for a finding inside
    a multi-line string or a backslash continuation) the directive where that ends, as ruff."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = noqa_lines(text)
        self._last = max(self.lines, default=0)
        self._continued: dict[int, int] | None = None

    def silences(self, code: str, line: int) -> bool:
        if is_suppressed(code, line, self.lines):
            return True
        if line >= self._last:
            return False  # no directive below it: nothing to tokenize for
        end = self.continued.get(line, line)
        return end != line and is_suppressed(code, end, self.lines)

    @property
    def continued(self) -> dict[int, int]:
        if self._continued is None:  # tokenized only when a finding asks (a file with noqa)
            self._continued = continued_lines(self.text)
        return self._continued


def unknown_codes(text: str, known: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(line, code)`` for each TNK code in a ``# noqa`` that names no known code (nor a prefix of
    one): a typo that silences nothing. Other tools' codes (``E501``) are not ours to judge."""
    return [
        (line, code) for line, codes in noqa_lines(text).items() for code in _unknown(codes, known)
    ]


def _unknown(codes: frozenset[str] | None, known: tuple[str, ...]) -> list[str]:
    return [
        code
        for code in sorted(codes or ())
        if code.startswith("TNK") and not any(k.startswith(code) for k in known)
    ]


# As ruff's warning for a directive it ignores, with our codes for the example.
_EXPECTED_LIST = "expected a comma-separated list of codes (e.g., `# noqa: TNK101, TNK102`)"


def directive_problems(text: str, known: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(line, what is wrong)`` for each ``# noqa`` that does not silence what it seems to: an
    item that is not a code, a list with no code, an unknown TNK code. Each silences nothing."""
    problems = []
    for line, directive in noqa_directives(text).items():
        for item in directive.invalid:
            problems.append(
                (
                    line,
                    f"invalid code `{item}` in `{directive.text}`: a code is letters followed by "
                    "digits (e.g., `TNK101`); it silences nothing",
                )
            )
        if directive.empty and not directive.invalid:
            message = f"invalid `# noqa` directive `{directive.text}`: {_EXPECTED_LIST}"
            problems.append((line, f"{message}; it silences nothing"))
        for code in _unknown(directive.codes, known):
            problems.append((line, f"unknown rule code `{code}` in `# noqa` (it silences nothing)"))
    return problems


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
