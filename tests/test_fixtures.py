"""Every fixture yields exactly the findings its ``# expect:`` comments name, for every family:
a missing finding and an extra one both fail (the comment syntax: tests/fixture_expectations.py).

Each unit (a file of ``fixtures/tnk1xx`` or ``fixtures/tnk2xx``, a project of ``fixtures/deps``)
is linted with every code selected, through the same entry point as the CLI's file loop. The
opt-in rules (TNK403) are selected by their codes: a prefix does not turn them on.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fixture_expectations import (
    CONFIG_PROJECTS,
    FAMILIES,
    FIXTURES_ROOT,
    RULE_CODES,
    Located,
    Unit,
    expectation_comments,
    expectations,
    family,
    family_codes,
    fixture_dir,
    is_python,
    relative,
    strip_expectations,
    units,
)
from tinker_lint.codes import opt_in_codes
from tinker_lint.io.settings import Settings
from tinker_lint.run.runner import lint_paths

UNITS = units()
OPT_IN = opt_in_codes()


def lint_unit(unit: Unit, root: Path = FIXTURES_ROOT, select: tuple[str, ...] = ("TNK",)):
    """(file, code, line, column) -> message of every finding in the unit, as found under
    ``root`` (the fixtures, or a copy of them)."""
    settings = replace(
        Settings(),
        select=select,
        # An opt-in rule is on in its own fixture file only: elsewhere the default selection, as a
        # user who did not ask for it sees.
        extend_select=tuple(
            c
            for c in OPT_IN
            if any(c.startswith(s) for s in select)
            and Path(unit.name).name.startswith(c.lower() + "_")
        ),
        tinker_version=unit.tinker_version(),
    )
    path = root / unit.name
    diagnostics, _, warnings = lint_paths([str(path)], settings)
    assert warnings == []
    return {
        (relative(d.path, root), d.code, d.line, d.col): d.message.replace(str(root), "<root>")
        for d in diagnostics
    }


def found(unit: Unit, select: tuple[str, ...] = ("TNK",)) -> set[Located]:
    return set(lint_unit(unit, select=select))


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_fixture(unit: Unit) -> None:
    got, want = found(unit), unit.expected()
    assert sorted(got - want) == [], "unexpected findings"
    assert sorted(want - got) == [], "missing findings"


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_selecting_the_family_leaves_its_findings(unit: Unit) -> None:
    """With only the unit's own family selected, the same findings of that family, no other."""
    want = {f for f in unit.expected() if family(f[1]) == unit.family}
    assert found(unit, select=(unit.family,)) == want


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_expect_comments_do_not_change_the_analysis(unit: Unit, tmp_path: Path) -> None:
    """The expectations are comments; without them the findings and messages are the same."""
    for path in unit.files():
        copy = tmp_path / path.relative_to(FIXTURES_ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        stripped = strip_expectations(text, is_python(path))
        assert expectation_comments(stripped, is_python(path)) == []
        assert stripped.count("\n") == text.count("\n")
        copy.write_text(stripped, encoding="utf-8")
        shutil.copymode(path, copy)
    assert lint_unit(unit, root=tmp_path) == lint_unit(unit)


def test_every_fixture_directory_belongs_to_a_family(fixtures_root: Path) -> None:
    directories = {p for p in fixtures_root.iterdir() if p.is_dir()}
    assert directories == {fixture_dir(name) for name in FAMILIES} | {CONFIG_PROJECTS}


def test_every_rule_has_an_expected_finding_in_its_family() -> None:
    expected = {(unit.family, f[1]) for unit in UNITS for f in unit.expected()}
    assert {(family(code), code) for code in RULE_CODES} <= expected


@pytest.mark.parametrize("name", FAMILIES)
def test_bad_and_good_fixture_for_every_rule(name: str) -> None:
    """A family whose fixtures follow the ``tnkNNN_bad.py`` / ``tnkNNN_good.py`` convention has
    both for every one of its codes."""
    names = {path.name for path in fixture_dir(name).iterdir()}
    if not any(n.endswith("_bad.py") for n in names):
        pytest.skip(f"{fixture_dir(name).name} names its fixtures otherwise")
    for code in family_codes(name):
        assert f"{code.lower()}_bad.py" in names
        assert f"{code.lower()}_good.py" in names


# --- the parser itself ---------------------------------------------------------------------------
def test_python_expectations_are_comments_not_strings() -> None:
    text = 'x = "# expect: TNK101@1"\ny = f(x)  # why  # expect: TNK101@5, TNK104@9\n'
    assert expectations(text) == {("TNK101", 2, 5), ("TNK104", 2, 9)}
    assert strip_expectations(text) == 'x = "# expect: TNK101@1"\ny = f(x)  # why\n'


def test_text_expectations_and_expect_line() -> None:
    text = (
        "transformers==5.3.0  # expect: TNK302@1\n"
        "numpy>=1 \\\n"
        "  --hash=sha256:00\n"
        "url#expect: not-an-expectation\n"
        "# expect-line: 2 TNK301@1, TNK303@3\n"
    )
    assert expectations(text, python=False) == {
        ("TNK302", 1, 1),
        ("TNK301", 2, 1),
        ("TNK303", 2, 3),
    }
    assert strip_expectations(text, python=False) == (
        "transformers==5.3.0\nnumpy>=1 \\\n  --hash=sha256:00\nurl#expect: not-an-expectation\n\n"
    )


@pytest.mark.parametrize(
    "comment",
    ["# expect TNK101@1", "# expect: TNK101", "# expect: TNK101@x", "# expect-line: TNK101@1"],
)
def test_malformed_expectations_are_errors(comment: str) -> None:
    with pytest.raises(ValueError, match=r"line 1: (malformed|bad) expectation"):
        expectations(f"x = 1  {comment}\n")
    with pytest.raises(ValueError, match=r"line 1: (malformed|bad) expectation"):
        expectations(f"x==1  {comment}\n", python=False)


def test_unknown_codes_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown code 'TNK999'"):
        expectations("x = 1  # expect: TNK999@1\n")
