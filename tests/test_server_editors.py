"""Real editors' own LSP clients attach `tinker-lint server` to a file and receive its diagnostics:
headless Neovim (Debian's `nvim`, 0.7 on bookworm) and Emacs in batch mode with eglot (Debian's
`emacs-nox` and `elpa-eglot`). `.ci/run` installs both; without them the tests are skipped with
the reason. The scripts are in tests/editors/; docs/server.md gives the same setups."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "tests" / "editors"
pytestmark = pytest.mark.slow  # an editor and a server process each

TRAIN = """\
import tinker


def train(tc: tinker.TrainingClient, batches: list) -> None:
    for batch in batches:
        tc.forward_backward(batch, "cross_entropy").result()
        tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "train.py").write_text(TRAIN)
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # eglot's project root
    return root


def _env(home: Path) -> dict[str, str]:
    # The server is this checkout's; HOME keeps the editors' state out of the user's.
    return {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home)}


@pytest.mark.skipif(
    shutil.which("nvim") is None, reason="needs Debian's neovim (.ci/run installs it)"
)
def test_headless_neovim_receives_the_server_s_diagnostics(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "diagnostics.json"
    values = {"PYTHON": sys.executable, "ROOT_DIR": str(project), "OUT": str(out)}
    values["FILE"] = str(project / "train.py")
    header = "".join(f"local {name} = {json.dumps(value)}\n" for name, value in values.items())
    script = tmp_path / "attach.lua"
    script.write_text(header + "local EXPECTED = 2\n" + (SCRIPTS / "attach.lua").read_text())
    done = subprocess.run(
        ["nvim", "--headless", "--clean", "-n", "-c", f"luafile {script}"],
        capture_output=True,
        text=True,
        cwd=project,
        env=_env(tmp_path),
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = sorted(json.loads(out.read_text()), key=lambda d: (d["lnum"], d["col"]))
    # Neovim's lines and columns are 0-based; severity 1 is Error (the rules' level `error`).
    source = "tinker-lint"
    assert found == [
        {"code": "TNK101", "lnum": 5, "col": 52, "end_col": 58, "severity": 1, "source": source},
        {"code": "TNK102", "lnum": 6, "col": 61, "end_col": 67, "severity": 1, "source": source},
    ]


@pytest.mark.skipif(
    shutil.which("emacs") is None, reason="needs Debian's emacs-nox and elpa-eglot (.ci/run)"
)
def test_emacs_eglot_in_batch_mode_receives_the_server_s_diagnostics(
    project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "diagnostics.txt"
    env = _env(tmp_path)
    env.update(
        TL_PYTHON=sys.executable,
        TL_FILE=str(project / "train.py"),
        TL_OUT=str(out),
        TL_EXPECTED="2",
    )
    done = subprocess.run(
        ["emacs", "--batch", "-l", str(SCRIPTS / "attach.el")],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    # Emacs's lines are 1-based, its columns 0-based; eglot puts the source and code first.
    assert [line.split(":")[0] for line in lines] == [
        "eglot-error 6 52 tinker-lint [TNK101]",
        "eglot-error 7 61 tinker-lint [TNK102]",
    ]
    assert lines[0].startswith(
        "eglot-error 6 52 tinker-lint [TNK101]: Waiting for `forward_backward` before submitting"
    )
