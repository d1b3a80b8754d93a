"""Every fixture under ``fixtures/tnk1xx`` yields exactly the findings its ``# expect:`` comments
name: a missing finding and an extra one both fail."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.fixture_expectations import (
    FIXTURES,
    expectations,
    fixture_files,
    tinker_version,
)
from tinker_lint.codes import codes_of_family
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

FILES = fixture_files()


def _lint(text: str, path: str) -> set[tuple[str, int, int]]:
    settings = replace(Settings(), tinker_version=tinker_version(text))
    result = lint_text(text, path, settings)
    return {(d.code, d.line, d.col) for d in result.diagnostics}


def test_fixture_directory_is_populated():
    names = {path.name for path in FILES}
    for code in codes_of_family("pipelining"):
        assert f"{code.lower()}_bad.py" in names
        assert f"{code.lower()}_good.py" in names


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixture(path: Path):
    text = path.read_text(encoding="utf-8")
    found = _lint(text, str(path.relative_to(FIXTURES.parent.parent)))
    expected = expectations(text)
    assert sorted(found - expected) == [], "unexpected findings"
    assert sorted(expected - found) == [], "missing findings"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_expect_comments_do_not_change_the_analysis(path: Path):
    """The expectations are comments; without them the findings are the same."""
    text = path.read_text(encoding="utf-8")
    stripped = "\n".join(line.split("  # expect:")[0] for line in text.splitlines()) + "\n"
    assert "# expect:" not in stripped
    assert _lint(stripped, "stripped.py") == _lint(text, "fixture.py")
