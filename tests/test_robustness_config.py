"""A broken configuration is one clear error naming the file and the key, exit 2; a typo in a
``# noqa`` is a warning naming the file, the line and the code."""

from __future__ import annotations

import pytest

from tests.robustness_support import cli, no_traceback, sample

pytestmark = pytest.mark.slow

CODE, FOUND = sample()

CONFIG_ERRORS = {
    "invalid-toml": (
        b"[tool.tinker-lint]\nselect = [\n",
        "pyproject.toml: invalid TOML: Invalid value (at end of document)",
    ),
    "duplicate-table": (
        b'[tool.tinker-lint]\nselect = ["TNK1"]\n[tool.tinker-lint]\n',
        "pyproject.toml: invalid TOML: Cannot declare ('tool', 'tinker-lint') twice "
        "(at line 3, column 18)",
    ),
    "not-utf8": (
        b'[tool.tinker-lint]\n# caf\xe9\nselect = ["TNK1"]\n',
        "pyproject.toml: invalid TOML: not UTF-8 (byte 24)",
    ),
    "unknown-key": (
        b'[tool.tinker-lint]\nselcet = ["TNK1"]\n',
        "pyproject.toml [tool.tinker-lint]: unknown key `selcet` (known keys: select,",
    ),
    "unknown-code": (
        b'[tool.tinker-lint]\nselect = ["TNK999"]\n',
        "pyproject.toml [tool.tinker-lint]: unknown rule code or prefix 'TNK999' in `select`",
    ),
    "unknown-code-per-file": (
        b'[tool.tinker-lint]\nper-file-ignores = {"x.py" = ["TNK9"]}\n',
        "pyproject.toml [tool.tinker-lint]: unknown rule code or prefix 'TNK9' in "
        "`per-file-ignores.x.py`",
    ),
    "wrong-type": (
        b'[tool.tinker-lint]\nselect = "TNK101"\n',
        "pyproject.toml [tool.tinker-lint]: `select` must be a list of rule codes, got 'TNK101'",
    ),
    "bad-version": (
        b'[tool.tinker-lint]\ntinker-version = "banana"\n',
        "pyproject.toml [tool.tinker-lint]: `tinker-version`: invalid version 'banana'",
    ),
    "table-not-table": (
        b"[tool]\ntinker-lint = 3\n",
        "pyproject.toml: [tool.tinker-lint] must be a table",
    ),
    "tool-not-table": (b"tool = 1\n# tinker-lint\n", "pyproject.toml: `tool` must be a table"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_ERRORS))
def test_malformed_pyproject_is_one_clear_error(tmp_path, case):
    content, message = CONFIG_ERRORS[case]
    (tmp_path / "pyproject.toml").write_bytes(content)
    (tmp_path / "a.py").write_text(CODE)
    run = cli("a.py", cwd=tmp_path, isolated=False)
    no_traceback(run)
    assert run.returncode == 2
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    # The file is named relative to the working directory it sits in.
    assert line.startswith("tinker-lint: error: pyproject.toml"), line
    assert message in line, line


def test_a_pyproject_without_our_table_is_not_ours(tmp_path):
    """A project that only depends on tinker-lint is linted with the defaults."""
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["tinker-lint"]\n')
    (tmp_path / "a.py").write_text(CODE)
    run = cli("a.py", cwd=tmp_path, isolated=False)
    no_traceback(run)
    assert run.diagnostics() == [("a.py", *where) for where in FOUND]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--frobnicate"], "tinker-lint: error: unrecognized arguments: --frobnicate"),
        (["--select", "TNK999"], "unknown rule code or prefix 'TNK999' in `--select`"),
        (["--ignore", "XYZ1"], "unknown rule code or prefix 'XYZ1' in `--ignore`"),
        (["--tinker-version", "banana"], "--tinker-version: invalid version 'banana'"),
        (["--config", "missing.toml"], "missing.toml: no such configuration file"),
        (["--output-format", "yaml"], "argument --output-format: invalid choice: 'yaml'"),
    ],
)
def test_bad_command_line_is_exit_2(tmp_path, args, message):
    (tmp_path / "a.py").write_text(CODE)
    run = cli(*args, "a.py", cwd=tmp_path, isolated=False)
    no_traceback(run)
    assert run.returncode == 2
    assert message in run.stderr, run.stderr


def test_unknown_code_in_noqa_is_a_warning_naming_file_line_and_code(tmp_path):
    """``# noqa: TNK999`` silences nothing: said on stderr (as ruff's RUF102), not a finding, so
    the exit code is the findings' alone. Other tools' codes (E501) are not ours to judge."""
    line = FOUND[0][0]
    lines = CODE.splitlines()
    lines[line - 1] += "  # noqa: TNK999, E501"
    (tmp_path / "typo.py").write_text("\n".join(lines) + "\n")
    (tmp_path / "clean.py").write_text("x = 1  # noqa: TNK10, E501\n")
    run = cli(tmp_path)
    no_traceback(run)
    assert run.diagnostics() == [("typo.py", *where) for where in FOUND]  # still reported
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        f"tinker-lint: warning: {tmp_path}/typo.py:{line}: unknown rule code `TNK999` in "
        "`# noqa` (it silences nothing)"
    ]
    clean = cli(tmp_path / "clean.py")
    assert clean.returncode == 0
    assert clean.stderr == ""  # TNK10 is a prefix of known codes
