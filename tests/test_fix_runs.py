"""``--fix`` and ``--diff`` run the same file loop as linting (``runner.run_paths`` with a
``FixMode``): dependency files, ``--force-exclude``, the warnings, the results cache and the process
pool are the same in every mode."""

from __future__ import annotations

import re
import shutil
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint import cli
from tinker_lint.io.settings import Settings
from tinker_lint.run import runner
from tinker_lint.run.cache import Cache
from tinker_lint.run.runner import FixMode, run_paths

DEPS = Path(__file__).resolve().parent.parent / "fixtures" / "deps"
SETTINGS = Settings(tinker_version=Version("0.38.0"))
FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TNK\d{3}) ", re.M)

# One safe TNK106 fix (`.result()` on the training client's future).
FIXABLE = textwrap.dedent(
    """\
    import tinker

    tc = tinker.ServiceClient().create_lora_training_client(base_model="m")
    tc.forward_backward(batch, loss_fn="cross_entropy")
    """
)
FIXED = FIXABLE.replace('base_model="m")', 'base_model="m").result()')
# A finding with no fix (TNK101 without a safe reordering: nothing is submitted after the wait).
UNFIXABLE = textwrap.dedent(
    """\
    def step(training_client, batch, adam):
        for b in batch:
            r = training_client.forward_backward(b, loss_fn="x").result()
            print(r)
            training_client.optim_step(adam)
    """
)
# Only an unsafe fix (TNK105: `sample_async()` inside `asyncio.gather`).
UNSAFE_ONLY = textwrap.dedent(
    """\
    import asyncio


    async def sample(sampling_client, prompts):
        return await asyncio.gather(*[sampling_client.sample_async(p) for p in prompts])
    """
)


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--isolated", "--tinker-version", "0.38", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _findings(text: str) -> list[tuple[str, str, int, int]]:
    return [(m["code"], m["path"], int(m["line"]), int(m["col"])) for m in FINDING.finditer(text)]


@pytest.fixture
def requirements_project(tmp_path: Path) -> Path:
    project = tmp_path / "P"
    shutil.copytree(DEPS / "requirements_flagged", project)
    return project


def test_fix_and_diff_report_the_dependency_findings_of_lint(requirements_project, capsys):
    before = {p.name: p.read_bytes() for p in requirements_project.iterdir()}
    code, out, _ = _main(capsys, str(requirements_project))
    assert code == 1
    linted = _findings(out)
    # The fixture's five findings (its own comments say where): two TNK301, two TNK302, a TNK303.
    assert Counter(c for c, *_ in linted) == {"TNK301": 2, "TNK302": 2, "TNK303": 1}

    code, out, _ = _main(capsys, "--fix", str(requirements_project))
    assert code == 1  # they have no fix: they remain
    assert _findings(out) == linted
    assert "Found 5 errors in 3 files checked." in out

    code, out, err = _main(capsys, "--diff", str(requirements_project))
    assert code == 1
    assert out == ""  # stdout is the patch, and there is nothing to patch
    assert _findings(err) == linted
    assert err.endswith("No errors would be fixed.\n")
    assert {p.name: p.read_bytes() for p in requirements_project.iterdir()} == before


def test_exit_zero_with_dependency_findings(requirements_project, capsys):
    assert _main(capsys, "--fix", "--exit-zero", str(requirements_project))[0] == 0
    assert _main(capsys, "--diff", "--exit-zero", str(requirements_project))[0] == 0


def test_fix_force_exclude_leaves_an_excluded_file_alone(tmp_path, capsys):
    # The pre-commit fix hook names every staged file and passes --force-exclude.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tinker-lint]\ntinker-version = "0.38"\nexclude = ["generated_*.py"]\n'
    )
    excluded, kept = tmp_path / "generated_loop.py", tmp_path / "loop.py"
    for path in (excluded, kept):
        path.write_text(FIXABLE)
    config = str(tmp_path / "pyproject.toml")
    argv = ["--config", config, "--no-cache", "--fix", "--force-exclude", str(excluded), str(kept)]
    assert cli.main(argv) == 0
    assert "Found 1 error (1 fixed, 0 remaining) in 1 file checked." in capsys.readouterr().out
    assert excluded.read_text() == FIXABLE
    assert kept.read_text() == FIXED
    # Without --force-exclude, a file named on the command line is fixed, as it is linted.
    assert cli.main(["--config", config, "--no-cache", "--fix", str(excluded)]) == 0
    assert excluded.read_text() == FIXED


def test_fix_warns_as_lint_does(tmp_path, capsys):
    path = tmp_path / "loop.py"
    path.write_text(FIXABLE.replace("import tinker\n", "import tinker  # noqa: TNK999\n"))
    warning = f"{path}:1: unknown rule code `TNK999` in `# noqa` (it silences nothing)"
    assert warning in _main(capsys, str(path))[2]
    assert warning in _main(capsys, "--diff", str(path))[2]
    assert warning in _main(capsys, "--fix", str(path))[2]
    assert path.read_text() == FIXED.replace("import tinker\n", "import tinker  # noqa: TNK999\n")


@pytest.mark.slow
def test_fix_uses_the_process_pool(tmp_path, monkeypatch):
    for i in range(20):
        (tmp_path / f"loop_{i:02}.py").write_text(FIXABLE)
        (tmp_path / f"plain_{i:02}.py").write_text(UNFIXABLE)
    serial_copy = tmp_path.parent / f"{tmp_path.name}_serial"
    shutil.copytree(tmp_path, serial_copy)
    serial = run_paths([str(serial_copy)], SETTINGS, fix=FixMode(), jobs=1)
    assert serial.processes == 1
    # These files are smaller than what is worth a process pool: lower the bar to use one.
    monkeypatch.setattr(runner, "MIN_FILES_FOR_PROCESSES", 2)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_PROCESSES", 1)
    parallel = run_paths([str(tmp_path)], SETTINGS, fix=FixMode(), jobs=2)
    assert parallel.processes == 2
    assert parallel.linted == serial.linted == parallel.files == 40
    assert len(parallel.fixed) == len(serial.fixed) == 20
    for path in tmp_path.glob("loop_*.py"):
        assert path.read_text() == FIXED
        assert (serial_copy / path.name).read_text() == FIXED

    def found(run: runner.Run) -> list[tuple[str, str, int, int]]:
        return [(d.code, Path(d.path).name, d.line, d.col) for d in run.diagnostics]

    assert found(parallel) == found(serial)
    assert [d.code for d in parallel.diagnostics] == ["TNK101"] * 20  # the unfixable remain


def test_diff_uses_the_process_pool(tmp_path, monkeypatch):
    for i in range(20):
        (tmp_path / f"loop_{i:02}.py").write_text(FIXABLE)
    monkeypatch.setattr(runner, "MIN_FILES_FOR_PROCESSES", 2)
    monkeypatch.setattr(runner, "MIN_BYTES_FOR_PROCESSES", 1)
    run = run_paths([str(tmp_path)], SETTINGS, fix=FixMode(write=False), jobs=2)
    assert run.processes == 2
    assert len(run.diffs) == 20
    names = [re.match(r"--- (.+)\n", diff)[1] for diff in run.diffs]  # type: ignore[index]
    assert names == [str(p) for p in sorted(tmp_path.glob("loop_*.py"))]  # discovery order
    assert all(p.read_text() == FIXABLE for p in tmp_path.glob("*.py"))


def test_fix_answers_from_the_cache_only_what_needs_no_fixing(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "a_fixable.py").write_text(FIXABLE)
    (project / "b_unfixable.py").write_text(UNFIXABLE)
    (project / "c_unsafe.py").write_text(UNSAFE_ONLY)

    def cache() -> Cache:
        return Cache(tmp_path / "cache", SETTINGS)

    linted = run_paths([str(project)], SETTINGS, cache=cache(), jobs=1)
    assert (linted.linted, linted.cached) == (3, 0)
    # The unfixable file, and the one with only an unsafe fix, need no fixing pass.
    fixed = run_paths([str(project)], SETTINGS, cache=cache(), jobs=1, fix=FixMode())
    assert (fixed.linted, fixed.cached) == (1, 2)
    assert [Path(d.path).name for d in fixed.fixed] == ["a_fixable.py"]
    assert (project / "a_fixable.py").read_text() == FIXED
    # What remains is what lint reports for the other two.
    assert fixed.diagnostics == [d for d in linted.diagnostics if "a_fixable" not in d.path]
    # With --unsafe-fixes, the unsafe one has a fix to apply; the fixed file is linted once.
    unsafe = run_paths(
        [str(project)], SETTINGS, cache=cache(), jobs=1, fix=FixMode(unsafe_fixes=True)
    )
    assert (unsafe.linted, unsafe.cached) == (2, 1)
    assert [(Path(d.path).name, d.code) for d in unsafe.fixed] == [("c_unsafe.py", "TNK105")]
    # A fix run caches the lint of the bytes it read; a lint run afterwards agrees with no cache.
    again = run_paths([str(project)], SETTINGS, cache=cache(), jobs=1)
    assert again.diagnostics == run_paths([str(project)], SETTINGS, jobs=1).diagnostics


def test_diff_on_a_cached_file_with_a_fix(tmp_path, capsys):
    # The cached lint is the fixer's first pass: the diff is the one an uncached run prints.
    path = tmp_path / "loop.py"
    path.write_text(FIXABLE)
    cache_dir = str(tmp_path / "cache")
    base = ["--isolated", "--tinker-version", "0.38", "--cache-dir", cache_dir]
    assert cli.main([*base, str(path)]) == 1
    capsys.readouterr()
    assert cli.main([*base, "--diff", str(path)]) == 1
    cached = capsys.readouterr().out
    assert _main(capsys, "--diff", str(path))[1] == cached
    assert '+tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()' in (
        cached
    )
    assert path.read_text() == FIXABLE
