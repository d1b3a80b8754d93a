"""``tinker-lint doctor`` against real virtual environments made here, holding distributions that
are only metadata (``<name>-<version>.dist-info/METADATA``): what ``importlib.metadata`` reads,
without downloading or installing anything."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tinker_lint.cli import main
from tinker_lint.model.facts.sdk import NEWEST_KNOWN_TINKER

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CLEAN = {
    "tinker": str(NEWEST_KNOWN_TINKER),
    "tinker_cookbook": "0.6.1",
    "pydantic": "2.13.4",
    "torch": "2.9.1",
    "numpy": "2.4.6",
    "transformers": "5.3.1",
}


def make_env(root: Path, versions: dict[str, str], system_site_packages: bool = False) -> Path:
    """A virtualenv whose site-packages holds ``versions`` as metadata-only distributions; returns
    its interpreter."""
    venv.EnvBuilder(
        with_pip=False, symlinks=True, system_site_packages=system_site_packages
    ).create(root)
    site = (
        root / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    )
    assert site.is_dir()
    for name, version in versions.items():
        info = site / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
        )
    return root / "bin" / "python"


def rows(out: str) -> dict[str, list[str]]:
    """component -> [version, verdict, fix] from the table."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("component"))
    table = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line)
        table[cells[0]] = [*cells[1:], ""][:3]
    return table


def doctor(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def test_clean_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    python = make_env(tmp_path / "env", CLEAN)
    code, out = doctor(["--python", str(python)], capsys)
    assert code == 0, out
    assert out.splitlines()[0] == f"environment: {python}"
    version = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    assert rows(out) == {
        "Python": [version, "ok", ""],
        "tinker": [str(NEWEST_KNOWN_TINKER), "ok", ""],
        "tinker-cookbook": ["0.6.1", "ok", ""],
        "pydantic": ["2.13.4", "ok", ""],
        "torch": ["2.9.1", "ok", ""],
        "numpy": ["2.4.6", "ok", ""],
        "transformers": ["5.3.1", "ok", ""],
    }
    assert out.endswith("\nNo known-bad versions.\n")


def test_bad_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    versions = {**CLEAN, "tinker": "0.37.0", "pydantic": "2.13.0b2", "transformers": "5.3.0"}
    del versions["torch"]
    python = make_env(tmp_path / "env", versions)
    code, out = doctor(["--python", str(python)], capsys)
    assert code == 1, out
    table = rows(out)
    assert table["tinker"] == ["0.37.0", "outdated", f'pip install "tinker>={NEWEST_KNOWN_TINKER}"']
    assert table["pydantic"] == ["2.13.0b2", "TNK301", 'pip install "pydantic>=2.13.0"']
    assert table["transformers"] == ["5.3.0", "TNK302", 'pip install "transformers>=5.3.1"']
    assert table["torch"] == ["-", "not installed", ""]
    assert table["numpy"] == ["2.4.6", "ok", ""]
    details = out.split("\n\n")[1].splitlines()
    assert details == [
        f"tinker: 0.37.0 is older than {NEWEST_KNOWN_TINKER}, the newest version tinker-lint "
        "knows; newer SDKs pipeline and block less",
        "TNK301: pydantic 2.13 pre-releases make `model_dump()` very slow on large payloads, "
        "which stalls `forward_backward` submission for minutes",
        "TNK302: transformers 5.3.0 loads the wrong tokenizer class for DeepSeek V2/V3 "
        "(fixed in 5.3.1)",
    ]
    assert out.endswith("\n2 problems found.\n")


def test_transformers_4_needs_qwen_vl_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    python = make_env(tmp_path / "env", {**CLEAN, "transformers": "4.57.6"})
    code, out = doctor(["--python", str(python)], capsys)
    assert (code, rows(out)["transformers"]) == (
        0,
        ["4.57.6", "warning", 'pip install "transformers>=5.3.1"'],
    )
    assert "TNK303 if the project uses a Qwen VL model: " in out

    text_only = tmp_path / "text_only"
    text_only.mkdir()
    (text_only / "train.py").write_text('MODEL = "Qwen/Qwen3-8B"\n')
    code, out = doctor(["--python", str(python), str(text_only)], capsys)
    assert (code, rows(out)["transformers"]) == (0, ["4.57.6", "ok", ""])

    vl = tmp_path / "vl"
    vl.mkdir()
    (vl / "train.py").write_text('import tinker\n\nMODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"\n')
    code, out = doctor(["--python", str(python), str(vl)], capsys)
    assert (code, rows(out)["transformers"]) == (
        1,
        ["4.57.6", "TNK303", 'pip install "transformers>=5.3.1"'],
    )
    assert f"(the project names `Qwen/Qwen3-VL-30B-A3B-Instruct` in {vl / 'train.py'}:3)" in out


def test_missing_tinker_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    python = make_env(tmp_path / "env", {})
    code, out = doctor(["--python", str(python)], capsys)
    assert code == 1
    assert rows(out)["tinker"] == ["-", "not installed", "pip install tinker"]
    assert rows(out)["pydantic"] == ["-", "not installed", ""]


def test_unusable_interpreter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--python", str(tmp_path / "no-python")]) == 2
    assert "tinker-lint doctor: error: cannot run" in capsys.readouterr().err


def test_runs_inside_the_environment(tmp_path: Path) -> None:
    """``python -m tinker_lint doctor`` with the environment's own interpreter reads that
    environment's metadata: its site-packages comes before the system's it inherits (for libcst
    and packaging, which tinker-lint itself needs)."""
    python = make_env(
        tmp_path / "env", {**CLEAN, "pydantic": "2.13.0b3"}, system_site_packages=True
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONNOUSERSITE": "1"}
    done = subprocess.run(
        [str(python), "-m", "tinker_lint", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    table = rows(done.stdout)
    assert table["pydantic"] == ["2.13.0b3", "TNK301", 'pip install "pydantic>=2.13.0"']
    assert table["transformers"] == ["5.3.1", "ok", ""]
    assert done.stdout.endswith("\n1 problem found.\n")
