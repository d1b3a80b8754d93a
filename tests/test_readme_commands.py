"""The README's commands work as written: the `tinker-lint rule` block and the stdin form run and
say what the README says; the pre-commit section's `additional_dependencies` advice is a valid hook
configuration."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.checkout import checkout_env

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "docs" / "examples"

SERIALIZED_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""


def section(title: str) -> str:
    """The README's text from ``## title`` to the next ``## ``."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, title
    return match.group(1)


def tinker_lint(
    args: list[str], cwd: Path, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = checkout_env()
    return subprocess.run(
        [sys.executable, "-m", "tinker_lint", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_rule_commands_run_as_written(tmp_path):
    (block,) = re.findall(r"^```bash\n(tinker-lint rule.*?)^```$", section("Rules"), re.S | re.M)
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    assert [c[:2] for c in commands] == [["tinker-lint", "rule"]] * 2
    explained = tinker_lint(commands[0][1:], tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("# TNK101: wait-before-submit\n")
    listed = tinker_lint(commands[1][1:], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "TNK101  wait-before-submit" in listed.stdout
    assert "TNK303" in listed.stdout


@pytest.mark.slow
def test_stdin_form_runs_as_written(tmp_path):
    """`tinker-lint - --stdin-filename train.py` (README, CI): the buffer is linted under that name,
    and `--fix -` writes the fixed text to stdout."""
    (form,) = re.findall(r"`(tinker-lint - --stdin-filename train\.py)`", section("CI"))
    args = shlex.split(form)[1:]
    found = tinker_lint([*args, "--output-format", "concise"], tmp_path, stdin=SERIALIZED_LOOP)
    assert found.returncode == 1, found.stderr
    assert re.findall(r"^(train\.py:\d+:\d+: TNK\d+)", found.stdout, re.M) == [
        "train.py:5:66: TNK101",
        "train.py:6:58: TNK102",
    ]
    fixed = tinker_lint(["--fix", *args], tmp_path, stdin=SERIALIZED_LOOP)
    assert "result_future = tc.forward_backward(" in fixed.stdout, fixed.stderr
    assert not (tmp_path / "train.py").exists()  # stdin in, stdout out: nothing written


def test_readme_gives_the_hook_additional_dependencies_advice():
    """The hook's environment has no tinker: the README says how to give it one."""
    advice = re.search(r"`(additional_dependencies: \[tinker==X\])`", section("pre-commit"))
    assert advice, "README's pre-commit section must give the additional_dependencies advice"


@pytest.mark.slow
def test_additional_dependencies_advice_is_a_valid_hook_configuration(tmp_path):
    config = yaml.safe_load((EXAMPLES / "pre-commit-config.yaml").read_text())
    (hook,) = config["repos"][0]["hooks"]
    hook.update(yaml.safe_load("additional_dependencies: [tinker==0.36.0]"))
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRE_COMMIT")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(path)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# Names to try against both the README's list and the hook's pattern: each kind it names, near
# misses of each, and the same in a folder.
HOOK_NAMES = [
    *("train.py", "stubs.pyi", "nb.ipynb", "train.pyc", "train.py.bak", "notes.txt"),
    *("pyproject.toml", "setup.cfg", "uv.lock", "poetry.lock", "pylock.toml", "pylock.dev.toml"),
    *("pyproject.toml.bak", "setup.py.cfg", "Pipfile.lock", "pylock-dev.toml", "other.toml"),
    *("requirements.txt", "requirements-dev.txt", "dev-requirements.txt", "dev_requirements.txt"),
    *("requirements/base.txt", "requirements/sub/base.txt", "requirement.txt", "constraints.txt"),
]


def test_the_pre_commit_section_lists_exactly_the_files_the_hooks_pass():
    """Issue 28, item 10: the README's list (its backquoted globs) and the hooks' ``files:``
    pattern take the same names, at the top and in a folder."""
    import fnmatch

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    patterns = {re.compile(hook["files"]) for hook in hooks}
    assert len(patterns) == 1  # both hooks take the same files
    (pattern,) = patterns
    listed = section("pre-commit").split("in any folder:", 1)[1].split("\n\n", 2)[1]
    globs = re.findall(r"`([^`]+)`", listed)
    assert "*.ipynb" in globs

    def in_readme(path: str) -> bool:
        # A glob names a file in any folder: it is matched part by part against the path's last
        # parts, so that its `*` never crosses a `/`.
        parts = path.split("/")
        for glob in globs:
            pieces = glob.split("/")
            last = parts[-len(pieces) :]
            if len(last) == len(pieces) and all(
                fnmatch.fnmatchcase(part, piece) for part, piece in zip(last, pieces, strict=True)
            ):
                return True
        return False

    for name in HOOK_NAMES:
        for path in (name, f"project/{name}"):
            assert in_readme(path) is bool(pattern.search(path)), path


def test_the_quick_start_output_is_what_the_command_prints():
    """The README's first screen shows a real run (issue 28, item 10): the command as written, in
    the checkout (``--no-cache`` only keeps the test from writing a cache there)."""
    match = re.search(
        r"```bash\npip install -e \. && (tinker-lint [^\n]+)\n```\n.*?```text\n(.*?)```",
        README.split("\n## ", 1)[0],
        re.S,
    )
    assert match, "the quick start's command and output"
    command, shown = match.groups()
    args = shlex.split(command)[1:]
    assert args == [str((EXAMPLES / "train.py").relative_to(ROOT))]
    done = tinker_lint(["--no-cache", *args], ROOT)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout == shown
