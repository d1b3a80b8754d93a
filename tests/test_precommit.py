"""The pre-commit hook, run by the real pre-commit against this checkout (`pre-commit try-repo`):
both hooks fail on a bad training loop and on a known-bad dependency pin with the findings, skip the
excluded files, and fix only what the project's tinker version runs.

`try-repo` installs the hook from this repository into a fresh virtualenv (pip install of the
package, libcst and friends from the package index), about 15-20 s each time on a warm pip cache.
It uses HEAD plus uncommitted changes to tracked files; untracked files are not part of the hook.
Both hooks are run by one `try-repo` (one install), on one project (an excluded file, a known-bad
pin, a tinker 0.36 pin with no tinker in the hook's environment).
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

# A known-bad pin (TNK302) on line 3.
BAD_REQUIREMENTS = "# training\nnumpy>=1.26\ntransformers==5.3.0\n"

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


@pytest.mark.slow
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


@pytest.mark.slow
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
    for path in ["train.py", "src/pkg/stubs.pyi", "a.b/c.py", "notebooks/train.ipynb"]:
        assert pattern.search(path), path
    for path in ["train.pyc", "train.py.txt", "script", "README.md", "train.ipynb.json"]:
        assert not pattern.search(path), path


# The project of the try-repo test: it pins tinker 0.36 (on which the TNK105/TNK106 rewrites for
# 0.38 break: `.result()` on a TrainingClient raises AttributeError, `await sc.sample(...)` awaits a
# concurrent.futures.Future), excludes legacy/, and pins a known-bad transformers on line 3.
PROJECT_PYPROJECT = """\
[project]
name = "demo"
version = "0"
dependencies = ["tinker==0.36.0"]

[tool.tinker-lint]
exclude = ["legacy/*"]
"""

# Code written for tinker 0.36: the client factory returns the client, and `sample_async` is the
# awaitable call. Plus a serialized step (TNK101, fixable; TNK102, not).
LOOP_FOR_0_36 = """\
import tinker

service = tinker.ServiceClient()
tc = service.create_lora_training_client(base_model="m")


async def sample(sc, prompt, params):
    return await sc.sample_async(prompt=prompt, num_samples=1, sampling_params=params)


for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""

# What the fix hook makes of it: only TNK101's wait moves after the next submit.
LOOP_FOR_0_36_FIXED = LOOP_FOR_0_36.replace(
    """\
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
""",
    """\
    result_future = tc.forward_backward(batch, loss_fn="cross_entropy")
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
    result = result_future.result()
""",
)

FINDING = re.compile(r"^(\S+):(\d+):(\d+): (TNK\d{3}) ", re.M)


def _findings(output: str) -> list[tuple[str, int, int, str]]:
    """(file, line, column, code) of each finding in the hook's output, sorted: which file the
    runner reports first is not the hook's business."""
    return sorted((f, int(line), int(col), code) for f, line, col, code in FINDING.findall(output))


def _hook_outputs(output: str, *hook_ids: str) -> list[str]:
    """What each hook printed, in the order run: pre-commit heads each hook's output with a
    ``- hook id: <id>`` line."""
    sections = output.split("- hook id: ")[1:]
    assert [section.split("\n", 1)[0] for section in sections] == list(hook_ids), output
    return sections


# A sub-project that pins no tinker: in the hook's environment, which has no tinker, its target is
# unknown (one warning), and the 0.38 rewrite of its `sample_async` is unsafe, so not applied. Had
# pre-commit installed a tinker there, the target would be that tinker, silently, and the fix hook
# would rewrite the file: this is what shows that the hook runs without one.
TOOLS_PYPROJECT = '[project]\nname = "tools"\nversion = "0"\n'
TOOLS_SAMPLE = """\
async def sample(sc, prompt, params):
    return await sc.sample_async(prompt=prompt, num_samples=1, sampling_params=params)
"""
UNKNOWN_TARGET = "tinker version unknown; assuming 0.38"


@pytest.mark.slow
@pytest.mark.network
def test_both_hooks_on_a_project_pinning_tinker_0_36_with_an_excluded_file_and_a_bad_pin(tmp_path):
    """Both hooks, as pre-commit installs and runs them (one ``try-repo`` of the repository runs
    each hook in the manifest's order, the check before the fix, in one environment): the excluded
    file is neither reported nor rewritten (``--force-exclude``), the dependency file's known-bad
    pin is reported at its line, and, with no tinker in the hook's environment, the project's
    ``tinker==0.36.0`` pin is the target: no 0.38 rewrite is applied to 0.36 code (and a
    sub-project that pins nothing gets an unknown target, not a tinker from the hook's
    environment)."""
    if not (ROOT / ".git").exists():
        pytest.fail("pre-commit try-repo needs this checkout to be a git repository")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT)
    (project / "requirements.txt").write_text(BAD_REQUIREMENTS)
    (project / "train.py").write_text(LOOP_FOR_0_36)
    # Excluded in pyproject.toml: the hooks skip it although pre-commit names it.
    (project / "legacy").mkdir()
    (project / "legacy" / "old_train.py").write_text(BAD_LOOP)
    (project / "notes.txt").write_text("not python\n")
    (project / "tools").mkdir()
    (project / "tools" / "pyproject.toml").write_text(TOOLS_PYPROJECT)
    (project / "tools" / "sample.py").write_text(TOOLS_SAMPLE)
    _git(project, "add", "-A")
    home = tmp_path / "pre-commit-home"

    run = _pre_commit(project, home, "try-repo", str(ROOT))
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    checked, fixed = _hook_outputs(output, "tinker-lint", "tinker-lint-fix")
    assert "Failed" in output and "files were modified" not in checked, output
    # train.py: the pin says 0.36, so TNK105/TNK106 do not apply there. tools/: no pin and no
    # tinker in the hook's environment, so the target is unknown, said once.
    assert checked.count(UNKNOWN_TARGET) == 1, output
    assert _findings(checked) == [
        ("requirements.txt", 3, 1, "TNK302"),
        ("tools/sample.py", 2, 18, "TNK105"),
        ("train.py", 12, 66, "TNK101"),
        ("train.py", 13, 58, "TNK102"),
    ], output

    assert "files were modified by this hook" in fixed, output
    assert fixed.count(UNKNOWN_TARGET) == 1, output
    # What is left once TNK101 is fixed; TNK105's fix is unsafe with the target unknown.
    assert _findings(fixed) == [
        ("requirements.txt", 3, 1, "TNK302"),
        ("tools/sample.py", 2, 18, "TNK105"),
        ("train.py", 13, 58, "TNK102"),
    ], output
    # `create_lora_training_client(...)` and `await sc.sample_async(...)` are kept as 0.36 needs.
    assert (project / "train.py").read_text() == LOOP_FOR_0_36_FIXED
    assert (project / "legacy" / "old_train.py").read_text() == BAD_LOOP
    assert (project / "requirements.txt").read_text() == BAD_REQUIREMENTS
    assert (project / "pyproject.toml").read_text() == PROJECT_PYPROJECT
    assert (project / "tools" / "sample.py").read_text() == TOOLS_SAMPLE
