"""The pre-commit hook, run by the real pre-commit against this checkout (`pre-commit try-repo`):
it fails on a bad training loop with the finding, and passes once the file is fixed.

`try-repo` installs the hook from this repository into a fresh virtualenv (pip install of the
package, libcst and friends from the package index), about 15-20 s each time on a warm pip cache.
It uses HEAD plus uncommitted changes to tracked files; untracked files are not part of the hook.
Only the `tinker-lint` hook is run here: `tinker-lint-fix` needs `--fix`, which is not part of the
command yet.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tinker_lint import __version__

ROOT = Path(__file__).resolve().parents[1]

BAD_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""

# Fixed: submit step i+1 before waiting for step i.
FIXED_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
pending = []
for batch in batches:
    pending.append(tc.forward_backward(batch, loss_fn="cross_entropy"))
    pending.append(tc.optim_step(tinker.AdamParams(learning_rate=1e-4)))
    if len(pending) > 2:
        pending.pop(0).result()
        pending.pop(0).result()
for future in pending:
    future.result()
"""

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    # The hook must run from its own install, not from this checkout on PYTHONPATH.
    env.pop("PYTHONPATH", None)
    env["PRE_COMMIT_HOME"] = str(home)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_hook_manifest_and_documented_config_are_valid(tmp_path):
    manifest = _pre_commit(ROOT, tmp_path, "validate-manifest", ".pre-commit-hooks.yaml")
    assert manifest.returncode == 0, manifest.stdout + manifest.stderr
    example = ROOT / "docs" / "examples" / "pre-commit-config.yaml"
    config = _pre_commit(ROOT, tmp_path, "validate-config", str(example))
    assert config.returncode == 0, config.stdout + config.stderr
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"tinker-lint", "tinker-lint-fix"}
    assert hooks["tinker-lint"]["entry"].split()[0] == "tinker-lint"
    (repo,) = yaml.safe_load(example.read_text())["repos"]
    assert repo["rev"] == f"v{__version__}"
    assert {h["id"] for h in repo["hooks"]} <= set(hooks)


@pytest.mark.slow
@pytest.mark.network
def test_try_repo_fails_on_a_bad_loop_then_passes_when_fixed(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.fail("pre-commit try-repo needs this checkout to be a git repository")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "pyproject.toml").write_text('[tool.tinker-lint]\nexclude = ["legacy/*"]\n')
    (project / "train.py").write_text(BAD_LOOP)
    # Excluded in pyproject.toml: the hook must skip it although pre-commit names it (--force-exclude).
    (project / "legacy").mkdir()
    (project / "legacy" / "old_train.py").write_text(BAD_LOOP)
    (project / "notes.txt").write_text("not python\n")
    _git(project, "add", "-A")
    home = tmp_path / "pre-commit-home"

    failed = _pre_commit(project, home, "try-repo", str(ROOT), "tinker-lint")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "tinker-lint" in output and "Failed" in output
    findings = [line for line in output.splitlines() if ": TNK" in line]
    assert [line.split(" ", 2)[:2] for line in findings] == [
        ["train.py:5:14:", "TNK101"],
        ["train.py:6:5:", "TNK102"],
    ], output

    (project / "train.py").write_text(FIXED_LOOP)
    _git(project, "add", "-A")
    passed = _pre_commit(project, home, "try-repo", str(ROOT), "tinker-lint")
    output = passed.stdout + passed.stderr
    assert passed.returncode == 0, output
    assert "Passed" in output and ": TNK" not in output
