"""ruff side by side: with `lint.external = ["TNK"]` (the documented setting) ruff's RUF100 keeps
`# noqa: TNK101`; without it, ruff's fixes drop the code, and tinker-lint then reports again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()  # noqa: TNK101
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()  # noqa: E501, TNK102
"""


def ruff(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def tinker_codes(text: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_text(text, "train.py", Settings()).diagnostics]


def test_the_noqa_directives_work_for_tinker_lint():
    assert tinker_codes(SOURCE) == []
    assert tinker_codes(SOURCE.replace("  # noqa: TNK101", "")) == [(5, "TNK101")]


def test_ruff_keeps_tnk_noqa_with_lint_external(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        (ROOT / "docs" / "examples" / "ruff-pyproject.toml").read_text()
    )
    (tmp_path / "train.py").write_text(SOURCE)
    report = ruff(tmp_path, "--select", "RUF100,RUF102,E501", "--output-format", "json", ".")
    found = [(d["code"], d["location"]["row"]) for d in json.loads(report.stdout)]
    # Only the unused E501 is reported: TNK101 and TNK102 are known external codes.
    assert found == [("RUF100", 6)], report.stdout
    fixed = ruff(tmp_path, "--select", "RUF100,RUF102,E501", "--fix", ".")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = (tmp_path / "train.py").read_text()
    assert text == SOURCE.replace("# noqa: E501, TNK102", "# noqa: TNK102")
    assert tinker_codes(text) == []


def test_without_lint_external_ruff_drops_the_directive(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    # RUF100 alone: removing the unused E501 takes TNK102 with it.
    fixed = ruff(tmp_path, "--isolated", "--select", "RUF100,E501", "--fix", ".")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = (tmp_path / "train.py").read_text()
    assert "# noqa: TNK101" in text and "TNK102" not in text
    assert tinker_codes(text) == [(6, "TNK102")]
    # With RUF102 (invalid-rule-code) too, the TNK101 suppression is flagged and removed as well.
    (tmp_path / "train.py").write_text(SOURCE)
    report = ruff(
        tmp_path, "--isolated", "--select", "RUF100,RUF102", "--output-format", "json", "."
    )
    assert ("RUF102", 5) in [(d["code"], d["location"]["row"]) for d in json.loads(report.stdout)]
    ruff(tmp_path, "--isolated", "--select", "RUF100,RUF102,E501", "--fix", ".")
    text = (tmp_path / "train.py").read_text()
    assert "TNK" not in text
    assert tinker_codes(text) == [(5, "TNK101"), (6, "TNK102")]


def test_noqa_names_codes_as_flake8_does():
    """`# noqa: TNK101` silences TNK101 only; a list mixing other tools' codes is read whole."""
    loop = SOURCE.replace("  # noqa: E501, TNK102", "")
    assert tinker_codes(loop) == [(6, "TNK102")]
    assert tinker_codes(loop.replace("# noqa: TNK101", "# noqa: TNK102")) == [
        (5, "TNK101"),
        (6, "TNK102"),
    ]
    assert tinker_codes(loop.replace("# noqa: TNK101", "# noqa")) == [(6, "TNK102")]
    assert tinker_codes(loop.replace("# noqa: TNK101", "# NOQA:E501,TNK101")) == [(6, "TNK102")]
