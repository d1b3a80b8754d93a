"""The pre-commit hook, run by the real pre-commit against this checkout (`pre-commit try-repo`):
it fails on a bad training loop and on a known-bad dependency pin with the findings, and passes once
the files are fixed.

`try-repo` installs the hook from this repository into a fresh virtualenv (pip install of the
package, libcst and friends from the package index), about 15-20 s each time on a warm pip cache.
It uses HEAD plus uncommitted changes to tracked files; untracked files are not part of the hook.
Only the `tinker-lint` hook is run here: `tinker-lint-fix` needs `--fix`, which is not part of the
command yet.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tinker_lint.deps.kinds import dependency_kind

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

# A known-bad pin (TNK302) on line 3, and its fix.
BAD_REQUIREMENTS = "# training\nnumpy>=1.26\ntransformers==5.3.0\n"
FIXED_REQUIREMENTS = "# training\nnumpy>=1.26\ntransformers>=5.3.1\n"

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
    assert {h["id"] for h in repo["hooks"]} <= set(hooks)


def test_documented_rev_is_a_tag_of_this_repository_or_no_tag():
    """The README's snippet must not name a release tag that was never made (it named v0.1.0)."""
    example = ROOT / "docs" / "examples" / "pre-commit-config.yaml"
    (repo,) = yaml.safe_load(example.read_text())["repos"]
    rev = str(repo["rev"])
    if re.fullmatch(r"v?\d+(\.\d+)*\S*", rev):
        tag = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/tags/{rev}"],
            cwd=ROOT,
            capture_output=True,
        )
        assert tag.returncode == 0, (
            f"rev {rev!r} looks like a tag, and this repository has no such tag"
        )
    else:
        assert "a commit sha of tinker-lint" in example.read_text()


def test_autoupdate_fills_in_the_documented_rev(tmp_path):
    """The README says `pre-commit autoupdate` writes a rev in place of the placeholder."""
    if not (ROOT / ".git").exists():
        pytest.fail("pre-commit autoupdate needs this checkout to be a git repository")
    example = (ROOT / "docs" / "examples" / "pre-commit-config.yaml").read_text()
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    config = project / ".pre-commit-config.yaml"
    config.write_text(example.replace("https://github.com/tinker-lint/tinker-lint", str(ROOT)))
    done = _pre_commit(project, tmp_path / "home", "autoupdate")
    assert done.returncode == 0, done.stdout + done.stderr
    (repo,) = yaml.safe_load(config.read_text())["repos"]
    rev = str(repo["rev"])
    tag = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"refs/tags/{rev}"], cwd=ROOT, check=False
    )
    assert re.fullmatch(r"[0-9a-f]{40}", rev) or tag.returncode == 0, rev


# Paths pre-commit may name, and whether tinker-lint reads them as dependency files.
HOOK_PATHS = [
    "pyproject.toml",
    "sub/project/pyproject.toml",
    "setup.cfg",
    "requirements.txt",
    "requirements-dev.txt",
    "dev-requirements.txt",
    "test_requirements.txt",
    "requirements/base.txt",
    "deps/requirements/gpu.txt",
    "uv.lock",
    "poetry.lock",
    "pylock.toml",
    "pylock.dev.toml",
    "notes.txt",
    "requirements.in",
    "requirements.txt.bak",
    "ruff.toml",
    "pyproject.toml.orig",
    "my_pyproject.toml",
    "Cargo.lock",
    "pylock.a.b.toml",
    "setup.cfg/README.md",
    "docs/requirements.md",
]


@pytest.mark.parametrize("hook_id", ["tinker-lint", "tinker-lint-fix"])
def test_hook_takes_python_and_exactly_the_dependency_files(hook_id):
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks[hook_id]
    # pre-commit ANDs `types` with `files`: a type filter would drop the dependency files again.
    assert "types" not in hook and "types_or" not in hook
    pattern = re.compile(hook["files"])
    for path in HOOK_PATHS:
        expected = dependency_kind(path) is not None
        assert bool(pattern.search(path)) == expected, path
    for path in ["train.py", "src/pkg/stubs.pyi", "a.b/c.py"]:
        assert pattern.search(path), path
    for path in ["train.pyc", "train.py.txt", "script", "README.md"]:
        assert not pattern.search(path), path


@pytest.mark.slow
@pytest.mark.network
def test_try_repo_fails_on_a_bad_loop_and_a_bad_pin_then_passes_when_fixed(tmp_path):
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
    (project / "requirements.txt").write_text(BAD_REQUIREMENTS)
    _git(project, "add", "-A")
    home = tmp_path / "pre-commit-home"

    failed = _pre_commit(project, home, "try-repo", str(ROOT), "tinker-lint")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "tinker-lint" in output and "Failed" in output
    findings = [line for line in output.splitlines() if ": TNK" in line]
    # Sorted: which family the runner reports first is not the hook's business.
    assert sorted(line.split(" ", 2)[:2] for line in findings) == [
        ["requirements.txt:3:1:", "TNK302"],
        ["train.py:5:14:", "TNK101"],
        ["train.py:6:5:", "TNK102"],
    ], output

    (project / "train.py").write_text(FIXED_LOOP)
    (project / "requirements.txt").write_text(FIXED_REQUIREMENTS)
    _git(project, "add", "-A")
    passed = _pre_commit(project, home, "try-repo", str(ROOT), "tinker-lint")
    output = passed.stdout + passed.stderr
    assert passed.returncode == 0, output
    assert "Passed" in output and ": TNK" not in output
