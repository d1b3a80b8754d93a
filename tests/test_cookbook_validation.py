"""The ecosystem check: tinker-cookbook 0.6.1, whose every finding was read and judged real
(docs/validation.md). A new finding or a lost one fails here until the
doc and the list agree."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tinker_lint.io.settings import Settings
from tinker_lint.run.runner import lint_paths

EXPECTED = Path(__file__).parent / "data" / "cookbook-0.6.1-findings.txt"
CACHE = Path(__file__).parent.parent / ".tinker_lint_cache" / "corpora"


@pytest.fixture(scope="session")
def cookbook() -> Path:
    target = CACHE / "tinker_cookbook-0.6.1"
    if not (target / "tinker_cookbook").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "tinker-cookbook==0.6.1",
                "-d",
                str(CACHE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wheels = list(CACHE.glob("tinker_cookbook-0.6.1-*.whl"))
        if not wheels:
            # A failure, not a skip: CI installs the test dependencies from the same registry, and
            # a skipped validation would look like a passed one.
            pytest.fail(f"cannot download tinker-cookbook 0.6.1: {result.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(target)
    return target / "tinker_cookbook"


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
