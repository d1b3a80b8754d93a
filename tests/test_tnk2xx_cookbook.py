"""TNK2xx on tinker-cookbook 0.6.1: the findings are exactly the judged ones
(docs/validation-tnk2xx.md). Skipped when no unpacked cookbook 0.6.1 is at hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinker_lint.engine import lint_text
from tinker_lint.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = Path(__file__).parent / "data" / "cookbook-0.6.1-tnk2xx-findings.txt"
CANDIDATES = (
    ROOT / ".tinker_lint_cache" / "corpora" / "tinker_cookbook-0.6.1" / "tinker_cookbook",
    Path("/tmp/sdk/tinker_cookbook/tinker_cookbook"),
)


def test_cookbook_tnk2xx_findings_are_the_judged_ones() -> None:
    cookbook = next((path for path in CANDIDATES if (path / "rl" / "train.py").is_file()), None)
    if cookbook is None:
        pytest.skip("no unpacked tinker-cookbook 0.6.1")
    settings = Settings(select=("TNK2",))
    files = sorted(cookbook.rglob("*.py"))
    assert len(files) == 303
    found = set()
    for path in files:
        relative = path.relative_to(cookbook).as_posix()
        for d in lint_text(path.read_text(encoding="utf-8"), str(path), settings).diagnostics:
            found.add(f"{d.code} {relative}:{d.line}:{d.col}")
    assert found == set(EXPECTED.read_text(encoding="utf-8").splitlines())
