"""Configuration per file, as ruff (issue 13 item 6): each file is judged by the nearest
``pyproject.toml`` with ``[tool.tinker-lint]`` above it, and by its own project's tinker pin, so the
order of the paths never changes a file's findings and a monorepo's sub-projects each get their
own configuration. On main, the first path's configuration was used for every file.

``fixtures/projects/monorepo``: ``svc_a`` selects TNK105, ``svc_b`` selects TNK106, ``legacy`` has
no configuration and pins tinker 0.36.0 (the 0.38 rules do not apply to it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.fixture_expectations import CONFIG_PROJECTS
from tinker_lint import cli
from tinker_lint.io.config import ConfigError
from tinker_lint.io.settings import Settings
from tinker_lint.run import runner
from tinker_lint.run.resolve import Overrides, SettingsResolver
from tinker_lint.run.runner import FixMode, run_paths

MONOREPO = CONFIG_PROJECTS / "monorepo"
TNK105_AT = "train.py:9:18: TNK105"
TNK106_AT = "train.py:4:19: TNK106"
OWN_CONFIG = {f"svc_a/{TNK105_AT}", f"svc_b/{TNK106_AT}"}


def _findings(argv: list[str], capsys) -> tuple[int, set[str], str]:
    """Exit code, the findings as ``path:line:col: CODE`` (in no order), and stderr."""
    code = cli.main(["--no-cache", "--output-format", "concise", *argv])
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if ": TNK" in line]
    found = {line.split(" [*]")[0].split(" `")[0] for line in lines}
    assert len(found) == len(lines)
    return code, found, captured.err


@pytest.fixture
def monorepo(monkeypatch) -> Path:
    monkeypatch.chdir(MONOREPO)
    return MONOREPO


@pytest.mark.parametrize(
    "order", [["svc_a", "svc_b", "legacy"], ["legacy", "svc_b", "svc_a"], ["svc_b", "svc_a"]]
)
def test_each_file_is_judged_by_its_own_configuration_in_any_order(monorepo, capsys, order):
    code, found, err = _findings(order, capsys)
    assert (code, found, err) == (1, OWN_CONFIG, "")


def test_files_named_one_by_one_in_both_orders(monorepo, capsys):
    # As pre-commit names them.
    files = ["svc_a/train.py", "svc_b/train.py", "legacy/train.py"]
    forward = _findings(files, capsys)
    backward = _findings(files[::-1], capsys)
    assert forward == backward == (1, OWN_CONFIG, "")


def test_the_command_line_overrides_every_files_configuration(monorepo, capsys):
    code, found, _ = _findings(["--select", "TNK1", "svc_b", "svc_a", "legacy"], capsys)
    both = {f"{d}/{at}" for d in ("svc_a", "svc_b") for at in (TNK105_AT, TNK106_AT)}
    assert (code, found) == (1, both)  # legacy still targets its pinned 0.36
    code, found, _ = _findings(["--tinker-version", "0.38", "svc_b", "legacy", "svc_a"], capsys)
    assert found == OWN_CONFIG | {f"legacy/{TNK105_AT}", f"legacy/{TNK106_AT}"}


def test_config_names_the_one_configuration_for_every_file(monorepo, capsys):
    code, found, _ = _findings(["--config", "svc_a/pyproject.toml", "svc_b", "legacy"], capsys)
    assert (code, found) == (1, {f"svc_b/{TNK105_AT}"})


def test_a_cached_run_answers_each_file_with_its_own_settings(tmp_path, monkeypatch, capsys):
    project = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, project)
    monkeypatch.chdir(project)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for order in (["svc_a", "svc_b"], ["svc_b", "svc_a"], ["svc_a", "svc_b"]):
        code = cli.main([*cache, "--output-format", "concise", *order])
        lines = {line.split(" [*]")[0] for line in capsys.readouterr().out.splitlines()}
        assert code == 1
        assert {line for line in lines if ": TNK" in line} == OWN_CONFIG


@pytest.mark.slow
def test_the_settings_travel_with_each_file_to_the_processes(tmp_path, monkeypatch):
    project = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, project)
    for sub in ("svc_a", "svc_b", "legacy"):  # enough files for the process pool
        for number in range(8):
            shutil.copy(project / sub / "train.py", project / sub / f"train_{number}.py")
    monkeypatch.setattr(runner, "MIN_FILES_FOR_PROCESSES", 2)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_PROCESSES", 1)
    resolver = SettingsResolver()
    paths = [str(project / "legacy"), str(project / "svc_b"), str(project / "svc_a")]
    parallel = run_paths(paths, Settings(), jobs=2, settings_for=resolver.for_path)
    serial = run_paths(paths, Settings(), jobs=1, settings_for=resolver.for_path)
    assert parallel.processes == 2
    assert parallel.diagnostics == serial.diagnostics
    found = {(Path(d.path).parent.name, d.code, d.line, d.col) for d in parallel.diagnostics}
    assert found == {("svc_a", "TNK105", 9, 18), ("svc_b", "TNK106", 4, 19)}
    assert len(parallel.diagnostics) == 2 * 9
    # --fix too: each file fixed by its own rules, legacy (tinker 0.36) left alone.
    fixed = run_paths(paths, Settings(), jobs=2, fix=FixMode(), settings_for=resolver.for_path)
    assert fixed.processes == 2
    assert sorted({d.code for d in fixed.fixed}) == ["TNK105", "TNK106"]
    assert (project / "legacy" / "train_0.py").read_text() == (
        MONOREPO / "legacy" / "train.py"
    ).read_text()
    assert "sample_async" not in (project / "svc_a" / "train_0.py").read_text()
    assert ".result()" in (project / "svc_b" / "train_0.py").read_text()
    assert "sample_async" in (project / "svc_b" / "train_0.py").read_text()


def test_a_broken_sub_project_configuration_is_an_error_whatever_the_order(
    tmp_path, monkeypatch, capsys
):
    project = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, project)
    (project / "svc_b" / "pyproject.toml").write_text('[tool.tinker-lint]\nselect = ["TNK9"]\n')
    monkeypatch.chdir(project)
    for order in (["svc_a", "svc_b"], ["svc_b", "svc_a"]):
        assert cli.main(["--no-cache", *order]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            "tinker-lint: error: svc_b/pyproject.toml [tool.tinker-lint]: unknown rule code or "
            "prefix 'TNK9' in `select`\n"
        )


def test_the_resolver_reads_each_configuration_once_per_directory(monorepo, monkeypatch):
    from tinker_lint.run import resolve

    loaded: list[object] = []
    real = resolve.load_settings

    def counting(path, base=None):
        loaded.append(path)
        return real(path, base=base)

    monkeypatch.setattr(resolve, "load_settings", counting)
    resolver = SettingsResolver(overrides=Overrides(ignore=("TNK101",)))
    first = resolver.for_path("svc_a/train.py")
    assert resolver.for_path("svc_a/other.py") is first
    assert resolver.for_path("svc_a") is first
    assert first.select == ("TNK105",) and first.ignore == ("TNK101",)
    assert resolver.for_path("svc_b/train.py").select == ("TNK106",)
    assert len(loaded) == 2
    with pytest.raises(ConfigError):
        SettingsResolver(config=MONOREPO / "missing.toml").for_path("svc_a/train.py")


def test_a_sub_projects_exclude_applies_when_its_parent_is_walked(tmp_path, monkeypatch, capsys):
    project = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, project)
    generated = project / "svc_a" / "generated"
    generated.mkdir()
    shutil.copy(project / "svc_a" / "train.py", generated / "train.py")
    with (project / "svc_a" / "pyproject.toml").open("a") as handle:
        handle.write('exclude = ["generated"]\n')
    monkeypatch.chdir(project)
    # Walked from the monorepo (no configuration there) and from svc_a itself: excluded both ways.
    for paths in (["."], ["svc_a", "svc_b"], ["svc_b", "legacy", "svc_a"]):
        code, found, _ = _findings(paths, capsys)
        assert (code, found) == (1, OWN_CONFIG), paths
    # Named on the command line, it is linted unless --force-exclude (as ruff).
    _, found, _ = _findings(["svc_a/generated/train.py"], capsys)
    assert found == {f"svc_a/generated/{TNK105_AT}"}
    _, found, _ = _findings(["--force-exclude", "svc_a/generated/train.py", "svc_b"], capsys)
    assert found == {f"svc_b/{TNK106_AT}"}


def test_per_file_ignores_are_matched_once_per_path_and_mean_what_they_did(monkeypatch):
    """Issue 29, item 8: 1,000 patterns on 20 files took 5.8 s (each rule of each file matched
    every pattern again), now 1.2 s. The codes of all matching patterns, matched once a path."""
    from tinker_lint.io import settings as settings_module

    settings = Settings(
        per_file_ignores=(
            ("tests/*", ("TNK1",)),
            ("*_test.py", ("TNK201",)),
            ("other/*", ("TNK4",)),
        )
    )
    calls: list[str] = []
    real = settings_module._path_matches
    monkeypatch.setattr(
        settings_module,
        "_path_matches",
        lambda path, pattern, root=None: calls.append(pattern) or real(path, pattern, root),
    )
    path = "tests/a_test.py"
    enabled = {code: settings.is_enabled(code, path) for code in ("TNK101", "TNK201", "TNK202")}
    assert enabled == {"TNK101": False, "TNK201": False, "TNK202": True}
    assert settings.is_enabled("TNK101", "src/train.py")
    assert settings.ignored_in(path) == ("TNK1", "TNK201")
    assert calls == ["tests/*", "*_test.py", "other/*"] * 2  # once for each path
