"""Reading the expectations written into fixture files.

``# expect: TNK101@14, TNK104@9`` at the end of a line: the findings (code, 1-based column) expected
on that line. ``# tinker-version: 0.36.0`` among the first lines: the tinker version to lint for.
Comments are read with ``tokenize``, so an ``# expect:`` inside a string is not an expectation.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "tnk1xx"
DEFAULT_TINKER_VERSION = Version("0.38.0")

_EXPECT = re.compile(r"#\s*expect:\s*(?P<items>.*)$")
_ITEM = re.compile(r"^(?P<code>TNK\d{3})@(?P<col>\d+)$")
_VERSION = re.compile(r"^#\s*tinker-version:\s*(?P<version>\S+)\s*$")

Finding = tuple[str, int, int]  # (code, line, column)


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.py"))


def expectations(text: str) -> set[Finding]:
    found: set[Finding] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _EXPECT.search(token.string)
        if match is None:
            if "expect" in token.string.lower():
                raise ValueError(f"line {token.start[0]}: malformed expectation {token.string!r}")
            continue
        for item in match.group("items").split(","):
            parsed = _ITEM.match(item.strip())
            if parsed is None:
                raise ValueError(f"line {token.start[0]}: bad expectation {item.strip()!r}")
            found.add((parsed.group("code"), token.start[0], int(parsed.group("col"))))
    return found


def tinker_version(text: str) -> Version:
    """The ``# tinker-version:`` header of a fixture (in its first five lines), else 0.38.0."""
    for line in text.splitlines()[:5]:
        match = _VERSION.match(line)
        if match is not None:
            return Version(match.group("version"))
    return DEFAULT_TINKER_VERSION
