"""The fixtures and the expectations written into them, for every family of codes.

Layout: ``fixtures/<family dir>/<unit>``, where a family's directory is ``tnk1xx``, ``tnk2xx``...
(``deps`` for the dependency-file family) and each entry of it is one *unit*: a file linted alone,
or a project directory linted as a whole (its dependency files together with its code).

Expectations are comments in the fixture files themselves:

- ``# expect: TNK101@14, TNK104@9`` at the end of a line: the findings (code, 1-based column)
  expected on that line. In Python files the comments are read with ``tokenize``, so an
  ``# expect:`` inside a string is not one; in every other file (requirements files, TOML files
  including ``uv.lock``, ``poetry.lock`` and ``pylock.toml``, ``setup.cfg``) an expectation is a
  ``#`` at the start of a line or after whitespace. Each format's own reader drops such a trailing
  comment (pip after whitespace, TOML anywhere outside a string, setuptools after `` #``).
- ``# expect-line: 15 TNK303@6``: the findings expected on line 15, written elsewhere, for a line
  that cannot hold the comment (a requirements line continued with ``\\``, a line inside a
  multi-line string) or where the comment would become part of the value (a ``setup.cfg``
  one-line value split at ``;``: configparser keeps an inline comment in the value, and only
  setuptools cuts it off). Put it where it moves no other line: on a line of its own at the end of
  the file.
- ``# tinker-version: 0.36.0`` among the first five lines of a Python unit: the tinker version to
  lint it for (0.38.0 without one).

A comment that starts like an expectation (``# expect``) but does not parse, or names a code the
registry does not know, is an error, not a silently empty expectation.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

# The one place the tests learn the codes: the registry.
from tinker_lint import codes

ROOT = Path(__file__).resolve().parent.parent
FIXTURES_ROOT = ROOT / "fixtures"
FIXTURES = FIXTURES_ROOT / "tnk1xx"  # the Python pipelining fixtures, as older tests name them
DEFAULT_TINKER_VERSION = Version("0.38.0")
# Whole projects with configuration of their own (monorepos, pins), for the configuration tests
# (tests/test_config_per_file.py), not a family's fixtures.
CONFIG_PROJECTS = FIXTURES_ROOT / "projects"

# --- codes and families -----------------------------------------------------------------------
RULE_CODES: tuple[str, ...] = tuple(sorted(codes.RULE_CODES))
_DEPENDENCY_CODES = frozenset(codes.DEPENDENCY_CODES)


def family(code: str) -> str:
    """``TNK101`` -> ``TNK1``: the selector that names a code's family."""
    return code[:4]


FAMILIES: tuple[str, ...] = tuple(sorted({family(code) for code in RULE_CODES}))


def family_codes(name: str) -> tuple[str, ...]:
    return tuple(code for code in RULE_CODES if family(code) == name)


def fixture_dir(name: str) -> Path:
    """Where a family's fixtures live: ``fixtures/tnk1xx`` for TNK1; dependency-file rules are
    tried on whole projects, in ``fixtures/deps``."""
    if set(family_codes(name)) <= _DEPENDENCY_CODES:
        return FIXTURES_ROOT / "deps"
    return FIXTURES_ROOT / f"{name.lower()}xx"


# --- expectation comments ---------------------------------------------------------------------
Finding = tuple[str, int, int]  # (code, line, column) in one file
Located = tuple[str, str, int, int]  # (file relative to fixtures/, code, line, column)

_START = re.compile(r"#\s*expect", re.IGNORECASE)  # anything that looks meant as an expectation
_EXPECT = re.compile(r"#\s*expect:\s*(?P<items>.*?)\s*$")
_EXPECT_LINE = re.compile(r"#\s*expect-line:\s*(?P<line>\d+)\s+(?P<items>.*?)\s*$")
_ITEM = re.compile(r"^(?P<code>[A-Z]+\d+)@(?P<col>\d+)$")
_TEXT_START = re.compile(r"(?:^|(?<=\s))#\s*expect", re.IGNORECASE)  # `#` first or after space
_VERSION = re.compile(r"^#\s*tinker-version:\s*(?P<version>\S+)\s*$")
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")


@dataclass(frozen=True)
class Expectation:
    """One expectation comment: where it is written, and the findings it names on which line."""

    line: int  # where the comment is
    col: int  # 0-based column of its ``#``
    target: int  # the line whose findings it names
    findings: tuple[tuple[str, int], ...]  # (code, column)


def _candidates(text: str, python: bool) -> Iterator[tuple[int, int, str]]:
    """(line, 0-based column, comment text from the ``#`` on) of every comment that starts like an
    expectation."""
    if python:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                match = _START.search(token.string)
                if match is not None:
                    line, col = token.start
                    yield line, col + match.start(), token.string[match.start() :]
        return
    for number, line_text in enumerate(_physical_lines(text), start=1):
        match = _TEXT_START.search(line_text)
        if match is not None:
            yield number, match.start(), line_text[match.start() :]


def _physical_lines(text: str) -> list[str]:
    """The lines as Python, pip and TOML number them (``str.splitlines`` would also split at form
    feeds)."""
    return _LINE_BREAK.split(text)[::2]


def expectation_comments(text: str, python: bool = True) -> list[Expectation]:
    found = []
    for line, col, comment in _candidates(text, python):
        match = _EXPECT.match(comment)
        target = line
        if match is None:
            match = _EXPECT_LINE.match(comment)
            if match is None:
                raise ValueError(f"line {line}: malformed expectation {comment!r}")
            target = int(match.group("line"))
        items = []
        for item in match.group("items").split(","):
            parsed = _ITEM.match(item.strip())
            if parsed is None:
                raise ValueError(f"line {line}: bad expectation {item.strip()!r}")
            if parsed.group("code") not in RULE_CODES:
                raise ValueError(f"line {line}: unknown code {parsed.group('code')!r}")
            items.append((parsed.group("code"), int(parsed.group("col"))))
        found.append(Expectation(line, col, target, tuple(items)))
    return found


def expectations(text: str, python: bool = True) -> set[Finding]:
    """(code, line, column) of every finding the file's comments expect."""
    return {
        (code, comment.target, col)
        for comment in expectation_comments(text, python)
        for code, col in comment.findings
    }


def strip_expectations(text: str, python: bool = True) -> str:
    """The text without its expectation comments (and the spaces before them), every line kept in
    its place: a comment alone on its line leaves an empty line."""
    pieces = _LINE_BREAK.split(text)  # line, break, line, break, ..., last line
    for comment in expectation_comments(text, python):
        index = 2 * (comment.line - 1)
        pieces[index] = pieces[index][: comment.col].rstrip()
    return "".join(pieces)


def tinker_version(text: str) -> Version:
    """The ``# tinker-version:`` header of a fixture (in its first five lines), else 0.38.0."""
    for line in text.splitlines()[:5]:
        match = _VERSION.match(line)
        if match is not None:
            return Version(match.group("version"))
    return DEFAULT_TINKER_VERSION


# --- units --------------------------------------------------------------------------------------
def is_python(path: Path) -> bool:
    return path.suffix == ".py"


@dataclass(frozen=True)
class Unit:
    """A file linted alone, or a project directory linted as a whole."""

    family: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.relative_to(FIXTURES_ROOT).as_posix()

    def files(self) -> list[Path]:
        if self.path.is_file():
            return [self.path]
        return sorted(
            p for p in self.path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        )

    def expected(self) -> set[Located]:
        return {
            (path.relative_to(FIXTURES_ROOT).as_posix(), code, line, col)
            for path in self.files()
            for code, line, col in expectations(path.read_text(encoding="utf-8"), is_python(path))
        }

    def tinker_version(self) -> Version:
        if self.path.is_file() and is_python(self.path):
            return tinker_version(self.path.read_text(encoding="utf-8"))
        return DEFAULT_TINKER_VERSION


def units() -> list[Unit]:
    """Every entry of every family's fixture directory."""
    return [
        Unit(name, entry)
        for name in FAMILIES
        if fixture_dir(name).is_dir()
        for entry in sorted(fixture_dir(name).iterdir())
        if not entry.name.startswith((".", "__"))
    ]


def fixture_files() -> list[Path]:
    """The Python files of ``fixtures/tnk1xx`` (the flake8 parity and version-gating tests)."""
    return sorted(FIXTURES.glob("*.py"))


def relative(path: str, base: Path) -> str:
    """A reported path, relative to ``base`` with ``/`` separators."""
    return Path(os.path.relpath(path, base)).as_posix()
