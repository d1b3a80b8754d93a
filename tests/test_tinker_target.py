"""Which tinker version the fixes target (issue 13 item 1): ``--tinker-version``, then
``tinker-version`` in the configuration, then the project's own pin or lock, then the installed
tinker; when none says, a warning and the version-gated fixes (TNK105, TNK106) are unsafe.

The regression: where tinker is not installed (the pre-commit hook's environment), a project
pinning ``tinker==0.36.0`` was fixed for 0.38, breaking its code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint import cli
from tinker_lint.deps import tinker_pin
from tinker_lint.deps.tinker_pin import lowest_admitted, project_tinker_version
from tinker_lint.run import resolve

REPO = Path(__file__).resolve().parent.parent

# Valid 0.36 code that 0.38's fixes would break: `.result()` on a 0.36 TrainingClient raises
# AttributeError, and `await sc.sample(...)` awaits a concurrent.futures.Future (TypeError).
PROGRAM = textwrap.dedent(
    """\
    import tinker

    service_client = tinker.ServiceClient()
    training_client = service_client.create_lora_training_client(base_model="m")
    training_client.forward_backward(batch, loss_fn="cross_entropy")


    async def sample(sc: tinker.SamplingClient, prompt, params):
        return await sc.sample_async(prompt=prompt, num_samples=1, sampling_params=params)
    """
)
FOUND_AT_038 = [("TNK106", 4, 19), ("TNK105", 9, 18)]
WARNING = (
    "tinker-lint: warning: tinker version unknown; assuming 0.38 (set tinker-version in "
    "[tool.tinker-lint]); the fixes that need it are unsafe\n"
)


@pytest.fixture(autouse=True)
def _fresh_pins():
    tinker_pin._pin_of_root.cache_clear()  # each test writes its own projects
    yield
    tinker_pin._pin_of_root.cache_clear()


@pytest.fixture
def no_installed_tinker(monkeypatch):
    """As in the pre-commit hook's environment: no tinker distribution to read."""
    monkeypatch.setattr(resolve, "installed_tinker_version", lambda: (None, "newest known"))


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (tmp_path / "train.py").write_text(PROGRAM)
    return tmp_path / "train.py"


def _json(argv: list[str], capsys) -> tuple[list[tuple[str, int, int, str | None]], str]:
    cli.main(["--no-cache", "--output-format", "json", *argv])
    captured = capsys.readouterr()
    found = [
        (
            d["code"],
            d["location"]["row"],
            d["location"]["column"],
            d["fix"] and d["fix"]["applicability"],
        )
        for d in json.loads(captured.out)
    ]
    return found, captured.err


# The lowest version a requirement admits: what a range must be fixed for.
@pytest.mark.parametrize(
    ("specifiers", "lowest"),
    [
        ("==0.36.0", "0.36.0"),
        (">=0.30,<0.38", "0.30"),
        (">=0.30,<0.39", "0.30"),  # admits 0.38, and 0.30 too: not 0.38's fixes
        (">=0.38", "0.38"),
        (">0.37", "0.37.1"),
        ("~=0.36.0", "0.36.0"),
        ("==0.36.*", "0.36"),
        ("<0.39", "0.1.0"),  # no lower bound: the first release
        ("!=0.37.0", "0.1.0"),
    ],
)
def test_lowest_admitted(specifiers, lowest):
    assert lowest_admitted((SpecifierSet(specifiers),)) == Version(lowest)


def test_lowest_admitted_of_alternatives_and_of_no_constraint():
    assert lowest_admitted((SpecifierSet(">=0.38"), SpecifierSet("==0.36.0"))) == Version("0.36")
    assert lowest_admitted((SpecifierSet(""),)) is None
    assert lowest_admitted(()) is None


@pytest.mark.parametrize(
    ("name", "text", "version", "source"),
    [
        ("requirements.txt", "tinker==0.36.0\n", "0.36.0", "`tinker==0.36.0` in requirements.txt"),
        ("requirements-dev.txt", "tinker>=0.30,<0.39\n", "0.30", "`tinker>=0.30,<0.39` in "),
        (
            "pyproject.toml",
            '[project]\nname = "p"\ndependencies = ["tinker==0.36.0"]\n',
            "0.36.0",
            "`tinker==0.36.0` in pyproject.toml",
        ),
        (
            "pyproject.toml",
            '[project]\nname = "p"\n[project.optional-dependencies]\nrl = ["tinker~=0.36.0"]\n',
            "0.36.0",
            "`tinker~=0.36.0` in pyproject.toml",
        ),
        (
            "pyproject.toml",
            '[dependency-groups]\ndev = ["tinker==0.35.0"]\n',
            "0.35.0",
            "`tinker==0.35.0` in pyproject.toml",
        ),
        (
            "pyproject.toml",
            '[tool.poetry.dependencies]\ntinker = "^0.36"\n',
            "0.36",
            'tinker = "^0.36"` in pyproject.toml',
        ),
        (
            "setup.cfg",
            "[options]\ninstall_requires =\n    tinker==0.36.0\n",
            "0.36.0",
            "`tinker==0.36.0` in setup.cfg",
        ),
        (
            "uv.lock",
            'version = 1\n\n[[package]]\nname = "tinker"\nversion = "0.36.0"\n',
            "0.36.0",
            "tinker 0.36.0 locked in uv.lock",
        ),
        (
            "poetry.lock",
            '[[package]]\nname = "tinker"\nversion = "0.36.0"\n',
            "0.36.0",
            "tinker 0.36.0 locked in poetry.lock",
        ),
        (
            "pylock.toml",
            'lock-version = "1.0"\n\n[[packages]]\nname = "tinker"\nversion = "0.36.0"\n',
            "0.36.0",
            "tinker 0.36.0 locked in pylock.toml",
        ),
    ],
)
def test_the_project_pin_is_read_from_each_kind_of_file(tmp_path, name, text, version, source):
    train = _project(tmp_path, {name: text})
    pin = project_tinker_version(str(train))
    assert pin is not None
    assert pin.version == Version(version)
    assert source in pin.source


def test_a_lock_wins_over_the_requirement_and_no_constraint_says_nothing(tmp_path):
    train = _project(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["tinker>=0.30"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "tinker"\nversion = "0.38.0"\n',
        },
    )
    pin = project_tinker_version(str(train))
    assert pin is not None and pin.version == Version("0.38.0")
    other = tmp_path / "other"
    other.mkdir()
    (other / "requirements.txt").write_text("tinker\n")
    assert project_tinker_version(str(other / "x.py")) is None


def test_the_nearest_project_root_is_read(tmp_path):
    # A sub-project's own pin, not the repository's.
    (tmp_path / "requirements.txt").write_text("tinker==0.38.0\n")
    sub = tmp_path / "legacy"
    sub.mkdir()
    (sub / "requirements.txt").write_text("tinker==0.36.0\n")
    pin = project_tinker_version(str(sub / "train.py"))
    assert pin is not None and pin.version == Version("0.36.0")


def test_a_036_pin_gets_no_038_finding_and_no_fix_without_tinker(
    tmp_path, capsys, no_installed_tinker
):
    train = _project(tmp_path, {"requirements.txt": "tinker==0.36.0\n"})
    found, err = _json([str(train)], capsys)
    assert found == []
    assert err == ""
    assert cli.main(["--no-cache", "--fix", str(train)]) == 0
    capsys.readouterr()
    assert train.read_text() == PROGRAM


def test_the_configuration_wins_over_the_pin_and_the_flag_over_both(
    tmp_path, capsys, no_installed_tinker
):
    train = _project(
        tmp_path,
        {
            "requirements.txt": "tinker==0.36.0\n",
            "pyproject.toml": '[tool.tinker-lint]\ntinker-version = "0.38"\n',
        },
    )
    found, err = _json([str(train)], capsys)
    assert found == [(c, line, col, "safe") for c, line, col in FOUND_AT_038]
    assert err == ""
    found, err = _json(["--tinker-version", "0.36", str(train)], capsys)
    assert found == []


def test_the_pin_wins_over_the_installed_tinker(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(resolve, "installed_tinker_version", lambda: (Version("0.38.0"), "x"))
    train = _project(tmp_path, {"requirements.txt": "tinker==0.36.0\n"})
    assert _json([str(train)], capsys) == ([], "")


def test_the_installed_tinker_when_the_project_does_not_say(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(resolve, "installed_tinker_version", lambda: (Version("0.36.0"), "x"))
    train = _project(tmp_path, {})
    assert _json([str(train)], capsys) == ([], "")
    monkeypatch.setattr(resolve, "installed_tinker_version", lambda: (Version("0.38.0"), "x"))
    found, err = _json([str(train)], capsys)
    assert found == [(c, line, col, "safe") for c, line, col in FOUND_AT_038]
    assert err == ""


def test_an_unknown_version_warns_once_and_its_fixes_are_unsafe(
    tmp_path, capsys, no_installed_tinker
):
    train = _project(tmp_path, {})
    (tmp_path / "second.py").write_text(PROGRAM)
    found, err = _json([str(train), str(tmp_path / "second.py")], capsys)
    assert found == [(c, line, col, "unsafe") for c, line, col in FOUND_AT_038] * 2
    assert err == WARNING
    # --fix applies none of them: the code may target an older SDK.
    assert cli.main(["--no-cache", "--fix", str(train)]) == 1
    out = capsys.readouterr()
    assert train.read_text() == PROGRAM
    assert "2 hidden fixes can be enabled with the `--unsafe-fixes` option" in out.out
    assert out.err == WARNING
    # --unsafe-fixes applies them, as the user asked.
    assert cli.main(["--no-cache", "--fix", "--unsafe-fixes", str(train)]) == 0
    capsys.readouterr()
    fixed = train.read_text()
    assert 'create_lora_training_client(base_model="m").result()' in fixed
    assert "await sc.sample(prompt=prompt" in fixed


def test_an_unknown_version_is_not_mentioned_where_it_changes_nothing(
    tmp_path, capsys, no_installed_tinker
):
    """The warning only when a version-gated finding (TNK105/TNK106) or its fix is in the run
    (issue 28, item 8): not for a file without Tinker, nor for findings the version does not gate."""
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    assert _json([str(plain)], capsys) == ([], "")
    loop = tmp_path / "loop.py"
    loop.write_text(WAIT_BEFORE_SUBMIT)
    assert _json([str(plain), str(loop)], capsys) == ([("TNK101", 4, 66, "safe")], "")
    # A gated finding silenced is not in the run either.
    gated = tmp_path / "gated.py"
    gated.write_text(PROGRAM.replace("params)\n", "params)  # noqa: TNK105\n"))
    found, err = _json([str(gated), "--ignore", "TNK106"], capsys)
    assert (found, err) == ([], "")
    # One gated finding among the files: the warning, once.
    found, err = _json([str(plain), str(loop), str(tmp_path / "gated.py")], capsys)
    assert [code for code, *_ in found] == ["TNK101", "TNK106"]
    assert err == WARNING


def _without_tinker(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in an interpreter where no tinker distribution can be found, as in a pre-commit
    hook's environment: ``-S`` (no site-packages), with this checkout and the linter's own
    dependencies (only they, by symbolic links) on the path."""
    shim = cwd.parent / "shim"
    shim.mkdir(exist_ok=True)
    for name in ("libcst", "packaging", "pathspec", "yaml"):
        module = __import__(name)
        link = shim / name
        if not link.exists():
            link.symlink_to(Path(module.__file__).parent)
    program = (
        f"import sys; sys.path[:0] = [{str(REPO)!r}, {str(shim)!r}]\n"
        "from importlib import metadata\n"
        "try:\n"
        "    metadata.version('tinker')\n"
        "    raise SystemExit('tinker is installed here')\n"
        "except metadata.PackageNotFoundError:\n"
        "    pass\n"
        "from tinker_lint.cli import entry\n"
        "raise SystemExit(entry())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-S", "-c", program, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_without_tinker_installed_a_036_project_is_left_alone(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    train = _project(project, {"requirements.txt": "tinker==0.36.0\n"})
    done = _without_tinker(["--no-cache", "--fix", "train.py"], project)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout == "All checks passed! (1 file checked)\n"
    assert train.read_text() == PROGRAM
    # With nothing pinned, the same environment says it does not know, and fixes nothing.
    (project / "requirements.txt").unlink()
    done = _without_tinker(["--no-cache", "--fix", "train.py"], project)
    assert done.returncode == 1
    assert done.stderr == WARNING
    assert train.read_text() == PROGRAM


def test_a_configured_project_without_a_pin_parses_no_dependency_file(tmp_path, monkeypatch):
    """``[tool.tinker-lint]`` names "tinker-lint", not tinker: looking for the project's pin must
    not parse its dependency files on every run (80 ms of a 300 ms warm run on the cookbook)."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["tinker-cookbook>=0.6"]\n\n'
        '[tool.tinker-lint]\nselect = ["TNK1"]\n'
    )
    (tmp_path / "requirements.txt").write_text("tinker_cookbook\n")

    def parsed(kind: str, path: str, text: str):
        raise AssertionError(f"{path} was parsed for a tinker pin it does not hold")

    monkeypatch.setattr(tinker_pin, "_declared_in", parsed)
    tinker_pin._pin_of_root.cache_clear()
    assert project_tinker_version(str(tmp_path)) is None
    (tmp_path / "requirements.txt").write_text("tinker-cookbook\ntinker==0.36.0\n")
    tinker_pin._pin_of_root.cache_clear()
    with pytest.raises(AssertionError, match=r"requirements\.txt was parsed"):
        project_tinker_version(str(tmp_path))
