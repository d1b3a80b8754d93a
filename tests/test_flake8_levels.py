"""Levels under flake8 (docs/configuration.md, "Levels under flake8"): the plugin's messages carry
no level and are the command's concise messages (editors take the severity from the code, never
the message); the VS Code settings the docs give map each code to its level."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tinker_lint.codes import ALL_CODES, level_of

ROOT = Path(__file__).resolve().parents[1]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")

# One finding of each level: TNK101 (error), TNK201 (warning), TNK204 (note).
LOOP = """\
import json

import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    tokens = tokenizer.encode(batch["text"])
    result = tc.forward_backward(tokens, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
    lines = [json.dumps(datum) for datum in batch]
"""

# VS Code's severities for SARIF's levels.
SEVERITY = {"error": "Error", "warning": "Warning", "note": "Information"}


def vscode_flake8_severity(code: str, severity: dict[str, str]) -> str:
    """The severity microsoft/vscode-flake8 gives a code (bundled/tool/lsp_server.py,
    `_get_severity`): the longest listed prefix of the code, else its first letter, else Error."""
    prefix = code
    while prefix:
        if prefix in severity:
            return severity[prefix]
        prefix = prefix[:-1]
    return severity.get(code[0], "Error")


def documented_vscode_settings() -> dict[str, str]:
    section = CONFIGURATION.split("### Levels under flake8", 1)[1]
    (block,) = re.findall(r"^```json\n(.*?)^```$", section, re.S | re.M)
    settings: dict[str, str] = json.loads(block)["flake8.severity"]
    return settings


def test_documented_vscode_settings_give_each_code_its_level():
    severity = documented_vscode_settings()
    got = {code: vscode_flake8_severity(code, severity) for code in ALL_CODES}
    assert got == {code: SEVERITY[level_of(code)] for code in ALL_CODES}
    # flake8's own letters keep the extension's defaults.
    for letter, default in {"E": "Error", "F": "Error", "I": "Information", "W": "Warning"}.items():
        assert severity[letter] == default


def _run(args: list[str], cwd: Path) -> list[str]:
    env = checkout_env()
    run = subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 1, run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if re.match(r"train\.py:\d+:\d+: TNK", line)]


@pytest.mark.slow
def test_flake8_messages_carry_no_level_and_are_the_concise_ones(tmp_path):
    (tmp_path / "train.py").write_text(LOOP)
    flake8 = _run(["flake8", "--isolated", "--select", "TNK", "train.py"], tmp_path)
    concise = _run(
        ["tinker_lint", "--isolated", "--output-format", "concise", "train.py"], tmp_path
    )
    assert [line.split(" ", 2)[1] for line in flake8] == ["TNK201", "TNK101", "TNK102", "TNK204"]
    # The command marks a fixable finding with `[*]`; flake8's line has no such field.
    assert flake8 == [line.replace(" [*] ", " ", 1) for line in concise]
