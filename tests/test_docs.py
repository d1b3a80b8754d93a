"""The rule pages are generated from the rules: docs/rules/ must equal the generator's output, and
each page's examples must behave as the page says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint import docs
from tinker_lint.cli import main
from tinker_lint.io.settings import Settings
from tinker_lint.rules import DOCUMENTED_RULES, ENGINE_CODES, PYTHON_RULES, RULES_BY_CODE
from tinker_lint.run.engine import lint_text

ROOT = Path(__file__).resolve().parents[1]
RULE_DOCS = ROOT / "docs" / "rules"


def test_docs_rules_match_the_generator():
    differ = docs.write_pages(RULE_DOCS, check=True)
    assert differ == [], (
        f"docs/rules/ is out of date for {differ}: run `python -m tinker_lint.docs`"
    )


def test_generator_check_reports_an_edited_and_a_stale_page(tmp_path):
    assert docs.main(["--out", str(tmp_path)]) == 0
    assert docs.main(["--out", str(tmp_path), "--check"]) == 0
    page = tmp_path / "TNK101.md"
    page.write_text(page.read_text() + "hand edit\n")
    (tmp_path / "TNK999.md").write_text("# gone\n")
    assert docs.write_pages(tmp_path, check=True) == ["TNK101.md", "TNK999.md"]
    assert docs.main(["--out", str(tmp_path), "--check"]) == 1
    docs.main(["--out", str(tmp_path)])
    assert docs.write_pages(tmp_path, check=True) == []
    assert not (tmp_path / "TNK999.md").exists()


def sections(page: str) -> dict[str, str]:
    """``## Heading`` -> the text under it, up to the next heading (stripped)."""
    found: dict[str, str] = {}
    heading = None
    for line in page.splitlines():
        if line.startswith("## "):
            heading = line[3:]
            found[heading] = ""
        elif heading is not None:
            found[heading] += line + "\n"
    return {name: text.strip() for name, text in found.items()}


def test_sections_sees_an_empty_section():
    assert sections("# T\n\n## Why\n\nBecause.\n\n## Fix\n\n## Silence it\n\nnoqa\n") == {
        "Why": "Because.",
        "Fix": "",
        "Silence it": "noqa",
    }


def test_every_code_has_a_page_with_every_section_filled():
    assert set(docs.pages()) == {f"{c}.md" for c in (*ENGINE_CODES, *DOCUMENTED_RULES)} | {
        "README.md"
    }
    for rule in DOCUMENTED_RULES.values():
        page = docs.rule_page(rule.code)
        assert page.startswith(f"# {rule.code}: {rule.name}\n")
        found = sections(page)
        for section in ("Why", "Bad", "Good", "Fix", "Silence it"):
            assert section in found, f"{rule.code} page lacks {section}"
        for section, text in found.items():
            assert text, f"{rule.code} page: the {section} section is empty"
        assert ("Tinker versions" in found) == (rule.min_tinker_version is not None), rule.code
        for example in (*rule.INVALID, *rule.VALID):
            assert example.code.rstrip("\n") in page
            if example.fixed is not None:
                assert example.fixed.rstrip("\n") in found["Fix"]
        if rule.autofix is not None:
            assert rule.autofix.title in found["Fix"]
    for code in ENGINE_CODES:
        found = sections(docs.rule_page(code))
        assert set(found) == {"Why", "Fix"} and all(found.values()), code


@pytest.mark.parametrize("rule", PYTHON_RULES, ids=lambda r: r.code)
def test_page_examples_do_what_the_page_says(rule):
    """The bad example is reported exactly where the page says; the good one is not reported."""
    for example, expected in [(e, e.expect) for e in rule.INVALID] + [(e, ()) for e in rule.VALID]:
        settings = Settings(select=(rule.code,))
        if example.tinker_version:
            settings = Settings(select=(rule.code,), tinker_version=Version(example.tinker_version))
        found = lint_text(example.code, "example.py", settings).diagnostics
        assert [(d.line, d.col) for d in found] == list(expected), example.code


def test_rule_command_prints_the_page(capsys):
    assert main(["rule", "TNK101"]) == 0
    assert capsys.readouterr().out == (RULE_DOCS / "TNK101.md").read_text(encoding="utf-8")
    assert main(["rule", "wait-before-submit"]) == 0
    assert capsys.readouterr().out.startswith("# TNK101: wait-before-submit\n")


def test_rule_all_lists_every_rule(capsys):
    assert main(["rule", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [*ENGINE_CODES, *DOCUMENTED_RULES]
    assert lines[len(ENGINE_CODES)].split()[:2] == ["TNK101", "wait-before-submit"]
    assert main(["rule", "--all", "--output-format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[len(ENGINE_CODES)] == {
        "code": "TNK101",
        "name": "wait-before-submit",
        "summary": RULES_BY_CODE["TNK101"].summary,
        "opt_in": False,
    }


def test_rule_command_errors(capsys):
    assert main(["rule", "TNK999"]) == 2
    assert "unknown rule 'TNK999'" in capsys.readouterr().err
    assert main(["rule"]) == 2
    assert "give one rule code, or --all" in capsys.readouterr().err


def test_generated_blocks_match_the_generator():
    differ = docs.write_blocks(ROOT / "docs", check=True)
    assert differ == [], f"docs/{differ} is out of date: run `python -m tinker_lint.docs`"


def test_generator_writes_a_block_between_its_markers_only(tmp_path):
    start = "<!-- generated by `python -m tinker_lint.docs`: vscode-severity -->"
    end = "<!-- end of the generated vscode-severity -->"
    page = tmp_path / "configuration.md"
    page.write_text(f"# Before\n\n{start}\n```json\n{{}}\n```\n{end}\n\nAfter.\n")
    assert docs.write_blocks(tmp_path, check=True) == ["configuration.md"]
    assert docs.write_blocks(tmp_path, check=False) == ["configuration.md"]
    assert page.read_text() == (
        f"# Before\n\n{start}\n```json\n{docs.vscode_settings_block()}```\n{end}\n\nAfter.\n"
    )
    assert docs.write_blocks(tmp_path, check=True) == []
    page.write_text("# No markers\n")
    with pytest.raises(ValueError, match="vscode-severity"):
        docs.write_blocks(tmp_path, check=True)
    assert docs.main(["--out", str(tmp_path / "rules"), "--pages", str(tmp_path)]) == 2


@pytest.mark.parametrize(
    ("levels", "listed"),
    [
        # A new warning among errors: listed alone.
        ({"TNK101": "error", "TNK102": "warning"}, {"TNK102": "Warning"}),
        # A family of warnings with one note: its prefix, and the note.
        (
            {"TNK101": "error", "TNK201": "warning", "TNK202": "warning", "TNK203": "note"},
            {"TNK2": "Warning", "TNK203": "Information"},
        ),
        # Mostly warnings: the shared prefix, and the error back.
        (
            {"TNK101": "warning", "TNK201": "warning", "TNK301": "error"},
            {"TNK": "Warning", "TNK3": "Error"},
        ),
        ({"TNK101": "error"}, {}),  # an error needs nothing: the extension's default
    ],
)
def test_vscode_severity_lists_the_fewest_prefixes(levels, listed):
    assert docs.vscode_severity(levels) == {**docs.VSCODE_DEFAULTS, **listed}
