"""The results cache: a file is linted again exactly when its bytes, the settings or the linter
change; a damaged entry is ignored; ``--no-cache`` writes nothing. Counted by the runner (how many
files the engine ran on), on real files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.cli import main
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.io.settings import Settings
from tinker_lint.run import cache as cache_module
from tinker_lint.run.cache import CACHE_DIR_NAME, Cache, _diagnostic, _to_json, tool_fingerprint
from tinker_lint.run.runner import run_paths

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tnk1xx"
FILES = ("tnk101_bad.py", "tnk102_bad.py", "tnk105_bad.py", "tnk107_good.py")
SETTINGS = Settings(tinker_version=Version("0.38.0"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name in FILES:
        shutil.copy(FIXTURES / name, root / name)
    (root / "broken.py").write_text("def f(:\n    pass\n")
    return root


def _run(project: Path, cache: Cache | None, settings: Settings = SETTINGS):
    return run_paths([str(project)], settings, cache=cache, jobs=1)


def test_a_second_run_is_answered_from_the_cache(project, tmp_path):
    cache = Cache(tmp_path / "cache", SETTINGS)
    first = _run(project, cache)
    assert (first.linted, first.cached) == (5, 0)
    uncached = _run(project, None)
    assert first.diagnostics == uncached.diagnostics
    assert {d.code for d in first.diagnostics} >= {"TNK001", "TNK101", "TNK102", "TNK105"}

    second = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (second.linted, second.cached) == (0, 5)
    assert second.diagnostics == first.diagnostics  # paths, positions, messages, order
    # The help is not compared with the rest (``Diagnostic.help``): compared here.
    assert [d.help for d in second.diagnostics] == [d.help for d in first.diagnostics]
    assert all(d.help for d in first.diagnostics if d.code.startswith("TNK1"))


def test_changed_bytes_are_linted_again(project, tmp_path):
    _run(project, Cache(tmp_path / "cache", SETTINGS))
    target = project / "tnk102_bad.py"
    target.write_text(target.read_text() + "\n# one more line\n")
    again = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (again.linted, again.cached) == (1, 4)

    # A change that removes findings is seen: the entry is not keyed by the path alone.
    target.write_text("x = 1\n")
    fixed = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (fixed.linted, fixed.cached) == (1, 4)
    assert not [d for d in fixed.diagnostics if d.path == str(target)]
    assert fixed.diagnostics == _run(project, None).diagnostics


def test_warnings_come_back_from_the_cache(project, tmp_path):
    (project / "typo.py").write_text("x = 1  # noqa: TNK999\n")
    first = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert [w for w in first.warnings if "TNK999" in w] == [
        f"{project / 'typo.py'}:1: unknown rule code `TNK999` in `# noqa` (it silences nothing)"
    ]
    second = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert second.linted == 0
    assert second.warnings == first.warnings


@pytest.mark.parametrize(
    "change",
    [
        {"ignore": ("TNK102",)},
        {"select": ("TNK101",)},
        {"per_file_ignores": (("tnk101_*.py", ("TNK101",)),)},
        {"tinker_version": Version("0.36.0")},
        {"cadence_names": ("should_step",)},
        {"preview": True},
    ],
)
@pytest.mark.slow
def test_changed_settings_lint_everything_again(project, tmp_path, change):
    _run(project, Cache(tmp_path / "cache", SETTINGS))
    changed = replace(SETTINGS, **change)
    again = _run(project, Cache(tmp_path / "cache", changed), changed)
    assert (again.linted, again.cached) == (5, 0)
    assert again.diagnostics == _run(project, None, changed).diagnostics
    # And back: the first settings' entries are still there.
    back = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (back.linted, back.cached) == (0, 5)


def test_another_linter_version_lints_everything_again(project, tmp_path, monkeypatch):
    _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (_run(project, Cache(tmp_path / "cache", SETTINGS)).linted) == 0

    monkeypatch.setattr(cache_module, "__version__", "99.0.0")
    again = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (again.linted, again.cached) == (5, 0)


def test_the_fingerprint_follows_version_and_sources(monkeypatch):
    before = tool_fingerprint()
    assert tool_fingerprint() == before
    monkeypatch.setattr(cache_module, "__version__", "99.0.0")
    assert tool_fingerprint() != before


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"diagnostics": [{"line": "x"}], "warnings": []}',
        b'{"diagnostics": [], "warnings": [1]}',
        b'{"other": 1}',
    ],
)
def test_a_damaged_entry_is_ignored_and_rewritten(project, tmp_path, damage):
    cache = Cache(tmp_path / "cache", SETTINGS)
    good = _run(project, cache)
    entries = sorted(cache.directory.glob("*.json"))
    assert len(entries) == 5
    entries[0].write_bytes(damage)
    again = _run(project, Cache(tmp_path / "cache", SETTINGS))
    assert (again.linted, again.cached) == (1, 4)
    assert again.diagnostics == good.diagnostics
    assert _run(project, Cache(tmp_path / "cache", SETTINGS)).linted == 0  # rewritten whole
    assert not list(cache.directory.glob("*.tmp"))


def test_an_unwritable_cache_warns_once_and_lints(project, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    run = _run(project, Cache(blocker, SETTINGS))
    assert run.linted == 5
    assert run.diagnostics == _run(project, None).diagnostics
    assert len([w for w in run.warnings if "cannot write the cache" in w]) == 1


def test_fixes_survive_the_round_trip():
    diagnostic = Diagnostic(
        "a.py",
        3,
        5,
        "TNK105",
        "use `sample()`",
        3,
        20,
        Fix("Call `sample()`", (Edit("sample", (3, 8), (3, 20)),), "unsafe"),
    )
    back = _diagnostic("a.py", _to_json(diagnostic))
    assert back == diagnostic and back.fix == diagnostic.fix


def test_the_help_survives_the_round_trip():
    diagnostic = Diagnostic("a.py", 3, 5, "TNK105", "use `sample()`", 3, 20, help="Why, and how")
    back = _diagnostic("a.py", _to_json(diagnostic))
    assert (back, back.help) == (diagnostic, "Why, and how")


def test_entries_of_the_format_before_help_are_not_read_and_go(project, tmp_path):
    """A ``diagnostics-v2`` entry (messages of their time, no help) under the same fingerprint and
    key is not what a run reads; the run that writes removes that format's directory."""
    cache = Cache(tmp_path / "cache", SETTINGS)
    key_dir = cache.directory.relative_to(tmp_path / "cache" / cache_module.FORMAT)
    old = tmp_path / "cache" / "diagnostics-v2" / key_dir
    target = project / "tnk105_bad.py"
    old.mkdir(parents=True)
    stale = '{"diagnostics": [], "warnings": []}'
    (old / f"{cache.key(str(target), target.read_bytes())}.json").write_text(stale)
    run = _run(project, cache)
    assert run.cached == 0
    assert [d for d in run.diagnostics if d.path == str(target)]
    cache.prune()
    assert not (tmp_path / "cache" / "diagnostics-v2").exists()


def test_the_command_keeps_its_cache_in_the_project_root(project, tmp_path, monkeypatch, capsys):
    (project / "pyproject.toml").write_text('[tool.tinker-lint]\ntinker-version = "0.38"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main([str(project)]) == 1
    first = capsys.readouterr().out
    assert (project / CACHE_DIR_NAME / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list((project / CACHE_DIR_NAME).glob("*/*/*.json"))
    assert not (elsewhere / CACHE_DIR_NAME).exists()
    assert main([str(project)]) == 1
    assert capsys.readouterr().out == first


def test_no_cache_and_cache_dir(project, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", str(project)]) == 1
    assert not list(tmp_path.rglob(CACHE_DIR_NAME))
    assert main(["--cache-dir", str(tmp_path / "here"), str(project)]) == 1
    assert list((tmp_path / "here").glob("*/*/*.json"))
    assert not (tmp_path / CACHE_DIR_NAME).exists()
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("output_format", ["text", "concise", "json", "github"])
def test_a_run_answered_from_the_cache_does_not_import_libcst(project, tmp_path, output_format):
    """What makes a warm run cheap: start-up, reading, hashing; not libcst and the rules."""
    root = Path(__file__).parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    argv = ["--cache-dir", str(tmp_path / "cache"), "--output-format", output_format, str(project)]
    script = (
        "import sys\nfrom tinker_lint.cli import main\n"
        f"code = main({argv!r})\n"
        "print('libcst' in sys.modules, 'tinker_lint.rules' in sys.modules, code, file=sys.stderr)\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
        )
        return done.stderr.strip().splitlines()[-1]

    assert run() == "True True 1"  # filling the cache
    assert run() == "False False 1"


def test_the_fingerprint_follows_the_installed_libcst(tmp_path, monkeypatch):
    """Another libcst (its version file, its native parser) is another linter."""
    fake = tmp_path / "site" / "libcst"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "_version.py").write_text("__version__ = '1.9.0'\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "libcst", raising=False)
    before = tool_fingerprint()
    (fake / "_version.py").write_text("__version__ = '1.10.0'\n")
    assert tool_fingerprint() != before


def _entries(cache: Cache) -> set[str]:
    return {p.name for p in cache.directory.iterdir()}


def test_a_run_that_writes_prunes_other_linters_and_settings(project, tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setattr(cache_module, "KEEP_FINGERPRINTS", 2)
    (root / "diagnostics-v1" / "old").mkdir(parents=True)  # another format's directory
    caches = []
    for i, tinker_version in enumerate(("0.36.0", "0.37.0", "0.38.0")):
        cache = Cache(root, replace(SETTINGS, tinker_version=Version(tinker_version)))
        _run(project, cache)
        os.utime(cache.directory, (1_000_000 + i, 1_000_000 + i))  # oldest first
        caches.append(cache)
    assert not (root / "diagnostics-v1").exists()
    kept = {d.name for d in (root / cache_module.FORMAT).iterdir()}
    assert kept == {caches[1].directory.name, caches[2].directory.name}
    # A warm run writes nothing and prunes nothing.
    _run(project, Cache(root, replace(SETTINGS, tinker_version=Version("0.38.0"))))
    assert {d.name for d in (root / cache_module.FORMAT).iterdir()} == kept


def test_pruning_leaves_directories_that_are_not_a_cache_format(project, tmp_path):
    # ``.tinker_lint_cache/corpora`` (tests/conftest.py's downloads) survived no cached run.
    root = tmp_path / "cache"
    (root / "corpora" / "tinker_cookbook-0.6.1").mkdir(parents=True)
    _run(project, Cache(root, SETTINGS))
    assert (root / "corpora" / "tinker_cookbook-0.6.1").is_dir()


def test_past_the_limit_the_oldest_unused_entries_go(project, tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "MAX_ENTRIES", 8)  # the limit: max(8, 4 x 5 files used)
    cache = Cache(tmp_path / "cache", SETTINGS)
    _run(project, cache)
    stale = []
    for i in range(30):  # entries of earlier versions of files, never read again
        key = f"{i:064x}"
        cache.put(key, ())
        os.utime(cache.entry(key), (1_000 + i, 1_000 + i))
        stale.append(f"{key}.json")
    (cache.directory / "x.json.123.tmp").write_text("{")  # left by a killed run
    os.utime(cache.directory / "x.json.123.tmp", (1_000, 1_000))

    again = Cache(tmp_path / "cache", SETTINGS)
    (project / "tnk101_bad.py").write_text("x = 1\n")  # one file changed: the run writes
    run = _run(project, again)
    assert (run.linted, run.cached) == (1, 4)
    left = _entries(again)
    assert len(left) == 20 // 2  # pruned down to half the limit
    assert {f"{key}.json" for key in again._used} <= left  # what the run used is kept
    # The newest unused entries stay: the changed file's previous entry, and the last stale ones.
    assert set(stale[-4:]) <= left and not set(stale[:-4]) & left
    assert "x.json.123.tmp" not in left


def test_clean_removes_only_a_tinker_lint_cache(project, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["--isolated", "."]) == 1
    assert (project / CACHE_DIR_NAME).is_dir()
    assert main(["clean"]) == 0
    assert not (project / CACHE_DIR_NAME).exists()
    assert capsys.readouterr().out.endswith(f"Removed {project / CACHE_DIR_NAME}\n")
    assert main(["clean"]) == 0
    assert "No cache at" in capsys.readouterr().out
    other = tmp_path / "not-a-cache"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    assert main(["clean", "--cache-dir", str(other)]) == 0
    assert (other / "keep.txt").exists()
