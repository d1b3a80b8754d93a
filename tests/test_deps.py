"""TNK301-TNK303 on dependency files: messages, the CLI and the pieces underneath (the known-bad table's PEP 440
judgement, Poetry constraints, TOML positions, pip's requirements syntax). The exact (file, code,
line, column) every project under fixtures/deps/ reports is written in its files as ``# expect:``
comments and checked by tests/test_fixtures.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.fixture_expectations import FIXTURES_ROOT, relative, units
from tinker_lint.cli import lint_paths, main
from tinker_lint.deps.kinds import is_dependency_file
from tinker_lint.deps.known_bad import BY_CODE
from tinker_lint.deps.lint import QwenVlUse, find_qwen_vl, lint_dependency_file
from tinker_lint.deps.poetry import poetry_specifiers
from tinker_lint.deps.toml_positions import TomlPositions
from tinker_lint.io.settings import Settings
from tinker_lint.rules import ALL_CODES, DEPENDENCY_RULES

FIXTURES = FIXTURES_ROOT / "deps"
SETTINGS = Settings()


def project_expectations(project: Path) -> set[tuple[str, str, int, int]]:
    """The project's ``# expect:`` comments: (file in the project, code, line, column)."""
    [unit] = [u for u in units() if u.path == project]
    return {(relative(str(FIXTURES_ROOT / f[0]), project), *f[1:]) for f in unit.expected()}


def findings(directory: Path, settings: Settings = SETTINGS) -> set[tuple[str, str, int, int]]:
    diagnostics, _, warnings = lint_paths([str(directory)], settings)
    assert warnings == []
    return {(os.path.relpath(d.path, directory), d.code, d.line, d.col) for d in diagnostics}


def test_messages_say_what_and_why() -> None:
    diagnostics, _, _ = lint_paths([str(FIXTURES / "requirements_flagged")], SETTINGS)
    # What and where in the message; why, the evidence and the remedy in the help.
    by_code = {(os.path.basename(d.path), d.code): (d.message, d.help) for d in diagnostics}
    assert by_code[("requirements.txt", "TNK301")] == (
        "`pydantic[email]>=2.13.0b1` admits pydantic 2.13.0b3: pre-release with a slow "
        "`model_dump()`",
        "pydantic 2.13 pre-releases make `model_dump()` very slow on large payloads, which stalls "
        "`forward_backward` submission for minutes; require a stable pydantic (`pydantic<2.13` or "
        "`pydantic>=2.13.0`)",
    )
    assert by_code[("requirements.txt", "TNK302")] == (
        '`transformers[torch] == 5.3.0 ; python_version >= "3.11"` pins transformers 5.3.0: '
        "wrong DeepSeek V2/V3 tokenizer",
        "transformers 5.3.0 loads the wrong tokenizer class for DeepSeek V2/V3 (fixed in 5.3.1); "
        "pin `transformers>=5.3.1` (or exclude it: `!=5.3.0`)",
    )
    train = os.path.join(str(FIXTURES / "requirements_flagged"), "train.py")
    assert by_code[("requirements-dev.txt", "TNK303")] == (
        '`transformers>=4.45,<5; sys_platform == "linux"` admits transformers 4.57.6: miscounts '
        "Qwen VL image tokens",
        "transformers before 5.0 miscounts image tokens in `Qwen2VLImageProcessor`, used for Qwen "
        f"VL models (the project names `Qwen/Qwen3-VL-30B-A3B-Instruct` in {train}:3); require "
        "`transformers>=5,!=5.3.0`",
    )
    pre, _, _ = lint_paths([str(FIXTURES / "requirements_pre")], SETTINGS)
    assert pre[0].message.startswith("`pydantic>=2` admits pydantic 2.13.0b3 under `--pre`: ")
    locked, _, _ = lint_paths([str(FIXTURES / "uv_lock_flagged" / "uv.lock")], SETTINGS)
    assert (
        locked[0].message == "pydantic 2.13.0b2 is locked: pre-release with a slow `model_dump()`"
    )
    assert locked[0].help.endswith("(`pydantic<2.13` or `pydantic>=2.13.0`), then lock again")
    assert (locked[0].end_line, locked[0].end_col) == (11, 20)


def test_cli_select_ignore_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    project = str(FIXTURES / "pyproject_flagged")
    assert main(["--isolated", "--select", "TNK3", "--output-format", "concise", project]) == 1
    out = capsys.readouterr().out
    assert out.count("TNK30") == 5
    assert f"{os.path.normpath(project)}/pyproject.toml:12:6: TNK302 " in out
    assert (
        main(
            [
                "--isolated",
                "--select",
                "TNK3",
                "--ignore",
                "TNK301,TNK302",
                "--output-format",
                "concise",
                project,
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()[:-1]] == ["TNK303"]
    assert main(["--isolated", "--select", "TNK1", project]) == 0
    assert main(["--isolated", str(FIXTURES / "pyproject_clean")]) == 0
    assert "TNK301" in ALL_CODES and "TNK303" in ALL_CODES


def test_per_file_ignores(make_settings: Callable[..., Settings]) -> None:
    project = FIXTURES / "requirements_flagged"
    expected = project_expectations(project)
    kept = {f for f in expected if f[0] != "requirements-dev.txt"}
    assert set() < kept < expected  # the ignore has findings to drop and findings to keep
    settings = make_settings(per_file_ignores=(("requirements-dev.txt", ("TNK3",)),))
    assert findings(project, settings) == kept


def test_a_named_file_is_linted_alone() -> None:
    # Without the project's code, TNK303 has no Qwen VL evidence.
    path = FIXTURES / "requirements_flagged" / "requirements-dev.txt"
    diagnostics, files, _ = lint_paths([str(path)], SETTINGS)
    assert files == 1
    assert [(d.code, d.line, d.col) for d in diagnostics] == [("TNK301", 3, 1)]


@pytest.mark.parametrize("rule", DEPENDENCY_RULES, ids=lambda r: r.code)
def test_rule_examples(rule, tmp_path: Path) -> None:
    assert rule.INVALID and rule.VALID and rule.summary and rule.why
    assert rule.known_bad().code == rule.code
    qwen = QwenVlUse("train.py", 1, "Qwen3-VL")
    for example in (*rule.INVALID, *rule.VALID):
        path = tmp_path / example.filename
        path.write_text(example.code)
        result = lint_dependency_file(
            str(path), example.code, SETTINGS, qwen if example.qwen_vl else None
        )
        assert [(d.code, d.line, d.col) for d in result.diagnostics] == [
            (rule.code, line, col) for line, col in example.expect
        ], example


@pytest.mark.parametrize(
    ("code", "specifier", "prereleases", "admitted"),
    [
        # TNK301: PEP 440 admits a pre-release only when the set names one (or --pre).
        ("TNK301", ">=2", False, None),
        ("TNK301", ">=2", True, "2.13.0b3"),
        ("TNK301", "", False, None),
        ("TNK301", ">=2.13.0b1", False, "2.13.0b3"),
        ("TNK301", "==2.13.0b1", False, "2.13.0b1"),
        ("TNK301", "~=2.13.0b1", False, "2.13.0b3"),
        ("TNK301", ">=2.12,<=2.13.0b1", False, "2.13.0b1"),
        ("TNK301", ">=2.13.0b1,!=2.13.0b3", False, "2.13.0b2"),
        ("TNK301", "<2.13", True, None),  # "<2.13" excludes 2.13's own pre-releases
        ("TNK301", ">=2.13.0", True, None),
        ("TNK301", "==2.13.*", False, None),
        ("TNK301", "==2.12.0b1", False, None),  # another minor's pre-release
        ("TNK301", ">=2.14.0b1", False, None),
        # TNK302: exact pins only; a range resolves to the newest release.
        ("TNK302", "==5.3.0", False, "5.3.0"),
        ("TNK302", "==5.3", False, "5.3.0"),
        ("TNK302", "===5.3.0", False, "5.3.0"),
        ("TNK302", ">=5,<=5.3.0", False, None),
        ("TNK302", "==5.3.*", False, None),
        ("TNK302", "!=5.3.0", False, None),
        ("TNK302", "==5.3.1", False, None),
        # TNK303: any 4.x admitted.
        ("TNK303", "", False, "4.57.6"),
        ("TNK303", "<5", False, "4.57.6"),
        ("TNK303", ">=4.40.1,<4.41", False, "4.40.1"),
        ("TNK303", ">4.40,<4.41", False, "4.40.1"),
        ("TNK303", "==4.30.2", False, "4.30.2"),
        ("TNK303", ">=5", False, None),
        ("TNK303", ">=4.0,!=4.*", False, None),
        ("TNK303", ">=5.0.0rc1", False, None),
        ("TNK303", "<5.0.0rc1", False, "4.57.6"),
    ],
)
def test_admitted(code: str, specifier: str, prereleases: bool, admitted: str | None) -> None:
    found = BY_CODE[code].admitted_by(SpecifierSet(specifier), prereleases)
    assert found == (Version(admitted) if admitted else None)


@pytest.mark.parametrize(
    ("version", "bad"),
    [
        ("2.13.0b2", {"TNK301"}),
        ("2.13.0rc1", {"TNK301"}),
        ("2.13.0.dev1", {"TNK301"}),
        ("2.13.0", set()),
        ("2.13.1", set()),
        ("2.14.0b1", set()),
        ("5.3.0", {"TNK302"}),
        ("5.3.1", set()),
        ("4.57.6", {"TNK303"}),
        ("5.0.0rc1", set()),
    ],
)
def test_locked_or_installed_version(version: str, bad: set[str]) -> None:
    package = "transformers" if version.startswith(("4.", "5.")) else "pydantic"
    found = {
        e.code for e in BY_CODE.values() if e.package == package and e.is_bad(Version(version))
    }
    assert found == bad


@pytest.mark.parametrize(
    ("constraint", "specifiers"),
    [
        ("^2.13", [">=2.13,<3.0.0"]),
        ("^2.13.0b1", [">=2.13.0b1,<3.0.0"]),
        ("^1.2", [">=1.2,<2.0.0"]),
        ("^0.2.3", [">=0.2.3,<0.3.0"]),
        ("^0.0.3", [">=0.0.3,<0.0.4"]),
        ("^0.0", [">=0.0,<0.1.0"]),
        ("^0", [">=0,<1.0.0"]),
        ("~2.13.1", [">=2.13.1,<2.14.0"]),
        ("~2.13", [">=2.13,<2.14.0"]),
        ("~2", [">=2,<3.0.0"]),
        ("~=2.13", ["~=2.13"]),
        ("5.3.0", ["==5.3.0"]),
        ("=5.3.0", ["==5.3.0"]),
        ("5.3.*", ["==5.3.*"]),
        ("*", [""]),
        (">= 5, != 5.3.0", [">=5,!=5.3.0"]),
        (">=5 <6", [">=5,<6"]),
        ("^4.40 || >=5.3.1", [">=4.40,<5.0.0", ">=5.3.1"]),
    ],
)
def test_poetry_constraints(constraint: str, specifiers: list[str]) -> None:
    assert poetry_specifiers(constraint) == tuple(SpecifierSet(s) for s in specifiers)


def test_poetry_constraint_unreadable() -> None:
    assert poetry_specifiers("^latest") is None


def test_toml_positions() -> None:
    text = (
        '[project]\nname = "x"\ndependencies = [\n  "a",  # comment ] "not a string"\n'
        "  'b', \"a\",\n]\n"
        'optional-dependencies.vl = ["c\\u00e9"]\n'
        "[[package]]\nname = \"p\"\nversion = '1'\n"
        '[package.metadata]\nrequires-dist = [{ name = "q", specifier = ">=1" }]\n'
        '[[package]]\nname = "r"\nwhen = 1979-05-27 07:32:00Z\nversion = """\n2"""\n'
        '[tool."poetry".dependencies]\n"Transformers" = { version = "^4" }\n'
    )
    positions = TomlPositions(text)
    assert positions.string(("project", "dependencies", 0), "a") == (4, 4)
    assert positions.string(("project", "dependencies", 1), "b") == (5, 4)
    assert positions.string(("project", "dependencies", 2), "a") == (5, 9)
    assert positions.string(("project", "dependencies", 2), "b") is None
    assert positions.string(("project", "optional-dependencies", "vl", 0), "c\u00e9") == (7, 30)
    assert positions.string(("package", 0, "version"), "1") == (10, 12)
    metadata = ("package", 0, "metadata", "requires-dist", 0, "specifier")
    assert positions.string(metadata, ">=1") == (12, 45)
    assert positions.string(("package", 1, "version"), "2") == (16, 14)
    assert positions.key(("tool", "poetry", "dependencies", "Transformers")) == (19, 1)
    assert positions.key(("package", 1)) == (13, 1)


def test_requirements_syntax(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "-rrequirements-a.txt\n"
        "--requirement=missing.txt\n"
        "-r https://example.org/requirements.txt\n"
        "transformers\\\n"
        "  ==5.3.0 \\\n"
        "  --hash=sha256:0000\n"
        "#pydantic==2.13.0b1\n"
        "pydantic==2.13.0b1#not-a-comment-without-space\n"
    )
    (tmp_path / "requirements-a.txt").write_text("-r requirements.txt\npydantic==2.13.0b2\n")
    diagnostics, _, warnings = lint_paths([str(tmp_path)], SETTINGS)
    assert warnings == [
        f"{tmp_path / 'requirements.txt'}: cannot read missing.txt: No such file or directory"
    ]
    assert {(os.path.basename(d.path), d.code, d.line, d.col) for d in diagnostics} == {
        ("requirements.txt", "TNK302", 4, 1),
        ("requirements-a.txt", "TNK301", 2, 1),  # once, though reached twice
    }


def test_uv_prerelease_allow(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "t"\ndependencies = ["pydantic>=2", "pydantic<2.13"]\n\n'
        '[tool.uv]\nprerelease = "allow"\n'
    )
    diagnostics, _, _ = lint_paths([str(tmp_path)], SETTINGS)
    assert [(d.code, d.line, d.col) for d in diagnostics] == [("TNK301", 3, 18)]
    assert diagnostics[0].message.startswith(
        '`pydantic>=2` admits pydantic 2.13.0b3 under `prerelease = "allow"`: '
    )


def test_lock_without_table_headers(tmp_path: Path) -> None:
    # Valid TOML that no tool writes: the entries as an inline array, read whole.
    (tmp_path / "pylock.toml").write_text(
        'lock-version = "1.0"\npackages = [\n  { name = "numpy", version = "2.4.6" },\n'
        '  { name = "pydantic", version = "2.13.0b1" },\n]\n'
    )
    assert findings(tmp_path) == {("pylock.toml", "TNK301", 4, 35)}


def test_unparsable_files_are_warnings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["pydantic==2.13.0b1"\n')
    (tmp_path / "setup.cfg").write_text("install_requires = pydantic==2.13.0b1\n")
    diagnostics, files, warnings = lint_paths([str(tmp_path)], SETTINGS)
    assert diagnostics == [] and files == 2
    assert [w.split(": ")[0] for w in warnings] == [
        str(tmp_path / "pyproject.toml"),
        str(tmp_path / "setup.cfg"),
    ]


def test_discovery(tmp_path: Path) -> None:
    for name in ("requirements.txt", "requirements-dev.txt", "dev-requirements.txt", "setup.cfg"):
        assert is_dependency_file(f"a/{name}")
    for name in ("pyproject.toml", "uv.lock", "poetry.lock", "pylock.toml", "pylock.cpu.toml"):
        assert is_dependency_file(name)
    assert is_dependency_file("requirements/base.txt")
    for name in ("constraints.txt", "pylock.a.b.toml", "Pipfile.lock", "setup.py", "notes.txt"):
        assert not is_dependency_file(name)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "requirements.txt").write_text("pydantic==2.13.0b1\n")
    (tmp_path / "requirements.txt").write_text("pydantic==2.13.0b1\n")
    assert findings(tmp_path) == {("requirements.txt", "TNK301", 1, 1)}


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (b'MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"', "Qwen/Qwen3-VL-30B-A3B-Instruct"),
        (b"from transformers import Qwen2VLImageProcessor", "Qwen2VLImageProcessor"),
        (
            b"Qwen2_5_VLForConditionalGeneration.from_pretrained(p)",
            "Qwen2_5_VLForConditionalGeneration",
        ),
        (b'renderer_name = "qwen3_vl_instruct"', "qwen3_vl_instruct"),
        (b"# uses qwen2.5-vl\n", "qwen2.5-vl"),
        (b'MODEL = "Qwen/Qwen3-8B"  # qwen3 renderer, vllm', None),
        (b'MODEL = "Qwen/Qwen3.5-397B-A17B"', None),
    ],
)
def test_qwen_vl_names(text: bytes, name: str | None) -> None:
    found = find_qwen_vl(b"import x\n" + text, "t.py")
    assert (found.name if found else None) == name
    if found:
        assert found.line == 2
