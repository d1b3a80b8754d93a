"""TNK303's evidence is the project's code, not the whole run's: the Python files of the run under
the dependency file's project root (the nearest directory holding ``pyproject.toml``,
``setup.cfg``, ``setup.py`` or a ``requirements*.txt``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tinker_lint.deps.lint import project_root
from tinker_lint.io.settings import Settings
from tinker_lint.run.runner import FixMode, lint_paths, run_paths

DEPS = Path(__file__).resolve().parent.parent / "fixtures" / "deps"
SETTINGS = Settings()
PIN = "transformers>=4.40,<5\n"  # admits 4.57.6: TNK303 with Qwen VL evidence, nothing else


def _found(root: Path, paths: list[Path] | None = None) -> set[tuple[str, str, int, int]]:
    diagnostics, _, _ = lint_paths([str(p) for p in paths or [root]], SETTINGS)
    return {(os.path.relpath(d.path, root), d.code, d.line, d.col) for d in diagnostics}


@pytest.fixture
def siblings(tmp_path: Path) -> Path:
    """Two projects side by side, both pinning transformers<5; only ``vl`` names Qwen2-VL."""
    for name, code in (
        ("vl", 'MODEL = "Qwen/Qwen2-VL-7B-Instruct"\n'),
        ("text", 'MODEL = "Qwen/Qwen3-8B"\n'),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "requirements.txt").write_text(PIN)
        (tmp_path / name / "train.py").write_text(code)
    return tmp_path


def test_only_the_project_that_names_a_qwen_vl_model_is_flagged(siblings):
    assert _found(siblings) == {("vl/requirements.txt", "TNK303", 1, 1)}
    # The discovery order does not matter: the other project first.
    paths = [siblings / "text", siblings / "vl"]
    assert _found(siblings, paths) == {("vl/requirements.txt", "TNK303", 1, 1)}


def test_the_message_quotes_the_project_own_evidence(siblings):
    (siblings / "text" / "train.py").write_text('MODEL = "Qwen/Qwen2.5-VL-3B"\n')
    diagnostics, _, _ = lint_paths([str(siblings)], SETTINGS)
    # The evidence is in the help (the message says what is declared).
    messages = {os.path.relpath(d.path, siblings): d.help for d in diagnostics}
    text_train = os.path.join(str(siblings), "text", "train.py")
    vl_train = os.path.join(str(siblings), "vl", "train.py")
    assert (
        f"(the project names `Qwen/Qwen2.5-VL-3B` in {text_train}:1)"
        in messages["text/requirements.txt"]
    )
    assert (
        f"(the project names `Qwen/Qwen2-VL-7B-Instruct` in {vl_train}:1)"
        in messages["vl/requirements.txt"]
    )


def test_fix_mode_judges_per_project_too(siblings):
    run = run_paths([str(siblings)], SETTINGS, fix=FixMode(write=False))
    assert [(os.path.relpath(d.path, siblings), d.code) for d in run.diagnostics] == [
        ("vl/requirements.txt", "TNK303")
    ]


def test_a_lock_file_belongs_to_the_project_above_it(tmp_path):
    # uv.lock in a folder of its own: its project is the directory above, with pyproject.toml,
    # whose code (in a subpackage) names the model.
    project = tmp_path / "project"
    (project / "locks").mkdir(parents=True)
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = []\n')
    (project / "src" / "pkg" / "vision.py").write_text(
        "from transformers import Qwen2VLImageProcessor\n"
    )
    (project / "locks" / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "transformers"\nversion = "4.57.6"\n'
    )
    other = tmp_path / "other"
    other.mkdir()
    (other / "requirements.txt").write_text(PIN)
    assert project_root(str(project / "locks" / "uv.lock")) == str(project)
    assert project_root(str(other / "requirements.txt")) == str(other)
    assert _found(tmp_path) == {("project/locks/uv.lock", "TNK303", 5, 12)}


def test_no_marker_above_means_the_file_directory(tmp_path):
    # A lone lock file with no project file above it: its own folder is the project.
    markers = ("pyproject.toml", "setup.cfg", "setup.py")
    if any((p / name).exists() for p in tmp_path.parents for name in markers):
        pytest.skip("the temporary directory lies inside a project")
    (tmp_path / "lone").mkdir()
    assert project_root(str(tmp_path / "lone" / "uv.lock")) == str(tmp_path / "lone")


def test_a_run_over_many_projects_finds_what_each_project_alone_finds(tmp_path):
    # In `tinker-lint fixtures/deps` a requirements file was judged by a Qwen VL name found in
    # another fixture project (no_qwen_vl pins transformers<5 and names no such model).
    shutil.copytree(DEPS, tmp_path / "deps")
    together = _found(tmp_path / "deps")
    alone = {
        (os.path.join(project.name, path), *rest)
        for project in (tmp_path / "deps").iterdir()
        for (path, *rest) in _found(project)
    }
    assert together == alone
    assert not any(path.startswith("no_qwen_vl") for path, *_ in together)
