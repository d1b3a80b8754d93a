"""CI formats: SARIF validated against the official 2.1.0 schema, GitHub annotations, --statistics
and --exit-zero, through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tinker_lint.cli import main
from tinker_lint.codes import ALL_CODES
from tinker_lint.diagnostics import Diagnostic, Edit, Fix, docs_url
from tinker_lint.docs import rule_page
from tinker_lint.report.github import annotation
from tinker_lint.report.sarif import to_sarif

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())

BAD_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""
# (code, line, col, end line, end col) of what BAD_LOOP gets.
BAD_LOOP_FINDINGS = [("TNK101", 5, 66, 5, 72), ("TNK102", 6, 58, 6, 64)]


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train loop.py").write_text(BAD_LOOP)
    (tmp_path / "src" / "clean.py").write_text("print('no tinker here')\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    code = main(["--isolated", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def validate(document):
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(document)


def test_the_schema_rejects_what_is_not_sarif():
    """The validator is real: a result without a message, or an unknown property, is refused."""
    document = to_sarif([Diagnostic("a.py", 1, 1, "TNK101", "m", 1, 2)])
    del document["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validate(document)
    document = to_sarif([])
    document["runs"][0]["tool"]["driver"]["helpUrl"] = "x"
    with pytest.raises(jsonschema.ValidationError):
        validate(document)


def test_sarif_output_is_valid_sarif_2_1_0(project, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", "src")
    assert code == 1
    document = json.loads(out)
    validate(document)
    assert document["version"] == "2.1.0"
    (run_,) = document["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "tinker-lint"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == list(ALL_CODES)
    for rule in rules:
        assert rule["helpUri"] == docs_url(rule["id"])
        assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        # The rule's page, without the quotes of its examples' findings (a report runs no
        # engine on examples): the same text where the page has none.
        page = (ROOT / "docs" / "rules" / f"{rule['id']}.md").read_text()
        assert rule["help"]["markdown"] == rule_page(rule["id"], quote_findings=False)
        assert "\n> " not in rule["help"]["markdown"]
        if "\n> " not in page:
            assert rule["help"]["markdown"] == page
        assert rule["shortDescription"]["text"]
    results = run_["results"]
    got = []
    for result in results:
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": "src/train%20loop.py", "uriBaseId": "%SRCROOT%"}
        region = location["physicalLocation"]["region"]
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        got.append(
            (
                result["ruleId"],
                region["startLine"],
                region["startColumn"],
                region["endLine"],
                region["endColumn"],
            )
        )
    assert got == BAD_LOOP_FINDINGS
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"


def test_sarif_with_no_findings_and_with_a_fix_is_valid():
    validate(to_sarif([]))
    fixed = Diagnostic(
        "/abs/path/x.py",
        3,
        5,
        "TNK105",
        "use the plain method",
        3,
        20,
        Fix("Use `sample`", (Edit("sample", (3, 8), (3, 20)),)),
    )
    document = to_sarif([fixed])
    validate(document)
    (result,) = document["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///abs/path/x.py"
    }
    replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {
        "deletedRegion": {"startLine": 3, "startColumn": 8, "endLine": 3, "endColumn": 20},
        "insertedContent": {"text": "sample"},
    }


def test_github_annotations(project, capsys):
    code, out, _ = run(capsys, "--output-format", "github", "src")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        "::error title=tinker-lint (TNK101),file=src/train loop.py,line=5,col=66,endLine=5,"
        "endColumn=72::src/train loop.py:5:66: TNK101 Waiting for `forward_backward` before"
    )
    assert lines[1].startswith(
        "::error title=tinker-lint (TNK102),file=src/train loop.py,line=6,col=58,endLine=6,"
        "endColumn=64::src/train loop.py:6:58: TNK102 "
    )


def test_github_annotation_escapes_as_the_actions_toolkit():
    d = Diagnostic("dir,x/a:b.py", 2, 3, "TNK101", "100% sure\nnext line", 2, 9)
    assert annotation(d) == (
        "::error title=tinker-lint (TNK101),file=dir%2Cx/a%3Ab.py,line=2,col=3,endLine=2,"
        "endColumn=9::dir,x/a:b.py:2:3: TNK101 100%25 sure%0Anext line"
    )


def test_statistics_and_exit_zero(project, capsys):
    (project / "src" / "again.py").write_text(BAD_LOOP)
    code, out, _ = run(capsys, "--statistics", "src")
    assert code == 1
    assert out == "2\tTNK101\t[*] wait-before-submit\n2\tTNK102\t[ ] step-not-overlapped\n"
    code, out, _ = run(capsys, "--statistics", "--output-format", "json", "--exit-zero", "src")
    assert code == 0
    assert json.loads(out) == [
        {"code": "TNK101", "name": "wait-before-submit", "count": 2, "fixable": True},
        {"code": "TNK102", "name": "step-not-overlapped", "count": 2, "fixable": False},
    ]
    code, out, _ = run(capsys, "--exit-zero", "src")
    assert code == 0
    assert out.endswith(
        "Found 4 errors in 3 files checked.\n[*] 2 fixable with the `--fix` option.\n"
    )
    code, out, _ = run(capsys, "--statistics", "src/clean.py")
    assert (code, out) == (0, "")


@pytest.mark.slow
def test_the_installed_command_writes_sarif(project):
    """The same through a real process, as CI runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--isolated", "--output-format", "sarif", "src"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 1, proc.stderr
    validate(json.loads(proc.stdout))
