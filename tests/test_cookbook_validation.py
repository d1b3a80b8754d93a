"""The ecosystem check: tinker-cookbook 0.6.1, whose every finding was read and judged real
(docs/validation.md). A new finding or a lost one fails here until the
doc and the list agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinker_lint.io.settings import Settings
from tinker_lint.run.runner import lint_paths

EXPECTED = Path(__file__).parent / "data" / "cookbook-0.6.1-findings.txt"
pytestmark = [pytest.mark.slow, pytest.mark.network]  # the `cookbook` fixture: tests/conftest.py


def _expected(prefix: str) -> set[str]:
    lines = EXPECTED.read_text(encoding="utf-8").splitlines()
    return {line for line in lines if line.startswith(prefix)}


@pytest.mark.parametrize("prefix", ["TNK1", "TNK2"])
def test_cookbook_findings_are_the_judged_ones(cookbook: Path, prefix: str) -> None:
    settings = Settings(select=(prefix,))
    diagnostics, files, _ = lint_paths([str(cookbook)], settings)
    assert files == 303
    found = {
        f"{d.code} {Path(d.path).relative_to(cookbook).as_posix()}:{d.line}:{d.col}"
        for d in diagnostics
    }
    assert found == _expected(prefix)
