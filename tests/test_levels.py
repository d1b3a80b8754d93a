"""Each rule's level (issue 13, item 9): declared once on the rule class, read by the code
registry without importing it, and carried into every output that has levels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinker_lint import codes
from tinker_lint.cli import main
from tinker_lint.codes import ENGINE_CODES, LEVELS, RULE_CODES, level_of
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.docs import index_page, rule_page
from tinker_lint.report.github import annotation
from tinker_lint.report.json import to_json
from tinker_lint.report.sarif import to_sarif
from tinker_lint.rules import DOCUMENTED_RULES

ROOT = Path(__file__).resolve().parents[1]


# The decisions are the rule classes' (and ``codes.ENGINE_LEVELS``); docs/rules/README.md, generated
# and checked against the rules (tests/test_docs.py), shows them all: a change is a diff to read
# there. Error where the program is wrong or the server idles on every step, warning where it is
# likely slow or deprecated, note where the cost depends on the size of what is written or read.


def committed_levels() -> dict[str, str]:
    """Each code's level as docs/rules/README.md, committed, says (its "Level" column): the
    record of the decisions, which a change of a rule's level changes in a diff to read."""
    found = {}
    for line in (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| [TNK"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            found[cells[0].split("]", 1)[0][1:]] = cells[2]
    return found


def test_every_code_has_the_level_the_committed_index_records():
    assert {level_of(code) for code in codes.ALL_CODES} <= set(LEVELS)
    assert {code: level_of(code) for code in codes.ALL_CODES} == committed_levels()


@pytest.mark.parametrize("code", RULE_CODES)
def test_the_registry_reads_the_rule_classes_own_level(code):
    rule = DOCUMENTED_RULES[code]
    assert rule.level in LEVELS
    assert level_of(code) == rule.level


def test_engine_codes_have_levels():
    assert set(codes.ENGINE_LEVELS) == set(ENGINE_CODES)


def test_a_rule_file_without_one_level_line_is_refused():
    with pytest.raises(RuntimeError, match="TNK999: its rule class must declare its level once"):
        codes._level_in("TNK999", 'class R:\n    name = "r"\n')
    with pytest.raises(RuntimeError, match="found \\['error', 'note'\\]"):
        codes._level_in("TNK999", '    level = "error"\n    level = "note"\n')
    with pytest.raises(RuntimeError, match="found \\['fatal'\\]"):
        codes._level_in("TNK999", '    level = "fatal"\n')


def test_levels_are_known_without_importing_a_rule():
    program = (
        "import sys\n"
        "from tinker_lint.codes import ALL_CODES, level_of\n"
        "print(sorted({level_of(c) for c in ALL_CODES}))\n"
        "assert 'libcst' not in sys.modules and 'tinker_lint.rules' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "['error', 'note', 'warning']\n"


FINDINGS = [
    Diagnostic("a.py", 1, 1, "TNK101", "m", 1, 2),
    Diagnostic("a.py", 2, 1, "TNK105", "m", 2, 2),
    Diagnostic("a.py", 3, 1, "TNK204", "m", 3, 2),
]


def test_sarif_levels():
    document = to_sarif(FINDINGS)
    (run,) = document["runs"]
    assert [r["level"] for r in run["results"]] == ["error", "warning", "note"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {
        code: rules[code]["defaultConfiguration"]["level"] for code in rules
    } == committed_levels()
    # The rule's help travels with it.
    assert rules["TNK204"]["help"]["markdown"] == rule_page("TNK204", quote_findings=False)


def test_github_annotation_kinds():
    assert [annotation(d).split(" ", 1)[0] for d in FINDINGS] == [
        "::error",
        "::warning",
        "::notice",
    ]


def test_json_level():
    assert [to_json(d)["level"] for d in FINDINGS] == ["error", "warning", "note"]


def test_the_level_is_on_each_docs_page_and_the_index():
    assert "Level: **note**" in rule_page("TNK204")
    assert "Level: **warning**" in rule_page("TNK003")
    assert "| [TNK105](TNK105.md) | deprecated-async-method | warning |" in index_page()


def test_levels_through_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(
        "import tinker\n"
        "async def f(tc, batch):\n"
        "    return await tc.forward_backward_async(batch, 'cross_entropy')\n"
    )
    args = ["--isolated", "--no-cache", "--tinker-version", "0.38.0", "m.py"]
    assert main([*args, "--output-format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["level"]) for d in found] == [("TNK105", "warning")]
    assert main([*args, "--output-format", "github"]) == 1
    assert capsys.readouterr().out.startswith("::warning title=tinker-lint (TNK105),file=m.py,")
    assert main(args) == 1
    assert "^ TNK105 deprecated-async-method (warning)\n" in capsys.readouterr().out
