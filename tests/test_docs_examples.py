"""The README's snippets are the tested files in docs/examples/, verbatim; the sample workflow is a
valid GitHub Actions workflow whose tinker-lint steps run; the sample configuration works."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement

from tinker_lint.io.config import KNOWN_KEYS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
README = (ROOT / "README.md").read_text(encoding="utf-8")

BAD_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""


def readme_blocks() -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```\w*\n(.*?)^```$", README, re.S | re.M)]


def test_ci_installs_the_test_extra_and_runs_the_readme_test_command_last():
    """CI (``.ci/run``) installs what README's second command installs, and its last line is
    exactly README's test command."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    install, test = readme_blocks()[0].splitlines()[1].split(" && ")
    assert any('-e ".[test]"' in line and "pip install" in line for line in ci)
    assert install == 'pip install -e ".[test]"'
    assert ci[-1] == test


def test_readme_keeps_its_first_two_commands():
    assert readme_blocks()[0] == (
        "pip install -e . && tinker-lint fixtures/\n"
        'pip install -e ".[test]" && python3 -m pytest -q -p no:cacheprovider -n auto\n'
    )


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.iterdir()))
def test_readme_shows_each_example_verbatim(name):
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    assert text in readme_blocks(), f"README.md must show docs/examples/{name} verbatim"


def test_every_example_is_used_by_a_test():
    tests = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    for example in EXAMPLES.iterdir():
        assert f'"{example.name}"' in tests, example.name


def installs_from_the_repository(command: str) -> bool:
    """`pip install "tinker-lint @ git+<this repository>@<ref>"`: tinker-lint is not on PyPI, so
    `pip install tinker-lint` fails; the repository is the one pyproject.toml names."""
    words = shlex.split(command)
    if words[:2] != ["pip", "install"] or len(words) != 3:
        return False
    requirement = Requirement(words[2])
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    home = repository["Documentation"].split("/tree/")[0]
    return (
        requirement.name == "tinker-lint"
        and requirement.url is not None
        and re.fullmatch(rf"git\+{re.escape(home)}@[\w./-]+", requirement.url) is not None
    )


def test_install_lines_name_the_repository_not_the_package_index():
    assert installs_from_the_repository(
        'pip install "tinker-lint @ git+https://github.com/tinker-lint/tinker-lint@0f3a9c1"'
    )
    assert not installs_from_the_repository("pip install tinker-lint")
    assert not installs_from_the_repository(
        'pip install "tinker-lint @ git+https://github.com/someone/else@main"'
    )


@pytest.mark.slow
def test_workflow_is_a_valid_github_actions_workflow():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(EXAMPLES / "github-workflow.yml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_workflow_steps_run(tmp_path):
    """Each tinker-lint step of the workflow, run as Actions runs it (bash -eo pipefail), on a
    checkout with a serialized loop."""
    workflow = yaml.safe_load((EXAMPLES / "github-workflow.yml").read_text())
    (job,) = workflow["jobs"].values()
    runs = [s["run"] for s in job["steps"] if "run" in s]
    # Installing is left out (the package under test is this checkout); the rest is run.
    assert installs_from_the_repository(runs[0])
    steps = runs[1:]
    assert [run.split()[0] for run in steps] == ["tinker-lint"] * 3
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tinker-lint"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tinker_lint "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    checkout = tmp_path / "checkout"
    (checkout / "src").mkdir(parents=True)
    (checkout / "src" / "train.py").write_text(BAD_LOOP)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    results = []
    for step in steps:
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        results.append((proc.returncode, proc.stdout))

    (sarif_rc, _), (github_rc, github_out), (stats_rc, stats) = results
    assert sarif_rc == 0
    document = json.loads((checkout / "tinker-lint.sarif").read_text())
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(document)
    assert [r["ruleId"] for r in document["runs"][0]["results"]] == ["TNK101", "TNK102"]
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("github/codeql-action"))
    assert upload["with"]["sarif_file"] == "tinker-lint.sarif"
    assert job["permissions"]["security-events"] == "write"

    assert github_rc == 1
    assert [line.split("::")[1] for line in github_out.splitlines()] == [
        "error title=tinker-lint (TNK101),file=src/train.py,line=5,col=66,endLine=5,endColumn=72",
        "error title=tinker-lint (TNK102),file=src/train.py,line=6,col=58,endLine=6,endColumn=64",
    ]
    assert (stats_rc, stats) == (
        0,
        "1\tTNK101\t[*] wait-before-submit\n1\tTNK102\t[ ] step-not-overlapped\n",
    )


def test_sample_configuration_sets_every_key_and_works(tmp_path, monkeypatch, capsys):
    from tinker_lint.cli import main

    text = (EXAMPLES / "tinker-lint-pyproject.toml").read_text()
    for key in KNOWN_KEYS:
        assert re.search(rf"^\[?(tool\.tinker-lint\.)?{key}\b", text, re.M), key
    (tmp_path / "pyproject.toml").write_text(text)
    for name in ("train.py", "tests/test_train.py", "generated/step.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BAD_LOOP)
    monkeypatch.chdir(tmp_path)
    assert main(["--output-format", "json", "."]) == 1
    found = [(d["filename"], d["code"]) for d in json.loads(capsys.readouterr().out)]
    assert found == [("train.py", "TNK101"), ("train.py", "TNK102")]
