"""An exception in one rule is a TNK000 naming the rule and the file; the other rules' findings and
the other files are still reported. An error that escapes everything is one line, exit 2."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest

import tinker_lint.cli as cli_module
import tinker_lint.run.engine as engine
from tests.robustness_support import sample
from tinker_lint.io.config import default_settings
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.rules.base import Context, Finding, Rule
from tinker_lint.run.engine import lint_text

SETTINGS = default_settings()
CODE, FOUND = sample()  # TNK104's example: [(2, 12, "TNK104")]


class BrokenRule(Rule):
    """A rule with a bug: it fails on files named ``bad*.py`` (others are fine)."""

    code = "TNK199"
    name = "broken-rule"
    summary = "fails on purpose"

    @classmethod
    def applies_to(cls, text: str) -> bool:
        return True

    def check(self, ctx: Context) -> Iterator[Finding]:
        if "bad" in ctx.path:
            raise KeyError("no such binding")
        yield from ()


class FailsHalfway(BrokenRule):
    """Yields one finding, then fails: the finding already made is kept."""

    code = "TNK198"
    name = "fails-halfway"

    def check(self, ctx: Context) -> Iterator[Finding]:
        yield Finding(ctx.model.module.body[0], "first")
        raise RecursionError("maximum recursion depth exceeded")


def test_broken_rule_is_tnk000_naming_rule_and_file_and_others_still_run():
    result = lint_text(CODE, "src/bad_loop.py", SETTINGS, rules=[BrokenRule, *PYTHON_RULES])
    found = [(d.path, d.line, d.col, d.code) for d in result.diagnostics]
    assert found == [("src/bad_loop.py", 1, 1, "TNK000")] + [
        ("src/bad_loop.py", *where) for where in FOUND
    ]
    message = result.diagnostics[0].message
    assert message.startswith(
        "Internal error in rule TNK199 (broken-rule) on this file (KeyError: 'no such binding' at "
        "test_robustness_internal_error.py:"
    ), message
    assert message.endswith("please report it. Other rules and files were still checked.")


def test_rule_failing_halfway_keeps_its_findings_and_reports_tnk000():
    result = lint_text(CODE, "x.py", SETTINGS, rules=[FailsHalfway])
    line = FailsHalfway.check.__code__.co_firstlineno + 2  # the ``raise``
    assert [(d.line, d.col, d.code, d.message) for d in result.diagnostics] == [
        (
            1,
            1,
            "TNK000",
            "Internal error in rule TNK198 (fails-halfway) on this file (RecursionError: maximum "
            f"recursion depth exceeded at test_robustness_internal_error.py:{line}); please "
            "report it. Other rules and files were still checked.",
        ),
        (1, 1, "TNK198", "first"),
    ]


def test_tnk000_can_be_ignored_like_any_code():
    settings = replace(default_settings(), ignore=("TNK000",))
    result = lint_text(CODE, "bad.py", settings, rules=[BrokenRule, *PYTHON_RULES])
    assert [(d.line, d.col, d.code) for d in result.diagnostics] == FOUND


def test_model_failure_is_tnk000_for_that_file_only(monkeypatch):
    class ExplodingModel:
        def __init__(self, *args, **kwargs):
            raise AttributeError("'NoneType' object has no attribute 'value'")

    monkeypatch.setattr(engine, "SemanticModel", ExplodingModel)
    result = lint_text(CODE, "m.py", SETTINGS)
    assert [(d.line, d.col, d.code) for d in result.diagnostics] == [(1, 1, "TNK000")]
    assert result.diagnostics[0].message.startswith(
        "Internal error in the semantic model on this file (AttributeError:"
    )


def test_cli_reports_tnk000_and_goes_on_to_the_other_files(tmp_path, monkeypatch, capsys):
    """Through the command: the broken rule fails on bad.py; good.py and the other rules' findings
    in bad.py are still reported, and the exit code is 1 (findings), not a crash."""
    monkeypatch.setattr(engine, "PYTHON_RULES", (BrokenRule, *PYTHON_RULES))
    (tmp_path / "bad.py").write_text(CODE)
    (tmp_path / "good.py").write_text(CODE)
    code = cli_module.main(["--isolated", "--output-format", "concise", str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    line, col, rule = FOUND[0]
    assert out[0].startswith(
        f"{tmp_path}/bad.py:1:1: TNK000 Internal error in rule TNK199 (broken-rule) on this file"
    )
    assert out[1].startswith(f"{tmp_path}/bad.py:{line}:{col}: {rule} ")
    assert out[2].startswith(f"{tmp_path}/good.py:{line}:{col}: {rule} ")
    assert out[3] == "Found 3 errors in 2 files checked."


def test_last_resort_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """An error outside every per-file guard (here: in the reporter) never shows a traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("VALUE = 1\n")  # something to report on

    def reporter(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_module, "write_text", reporter)
    monkeypatch.setattr(sys, "argv", ["tinker-lint", "--isolated", "--output-format", "text", "."])
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.delenv("TINKER_LINT_DEBUG", raising=False)
    assert cli_module.entry() == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        "tinker-lint: error: internal error (OSError: [Errno 28] No space left on device at "
        "test_robustness_internal_error.py:"
    )
    assert err.endswith("please report it (TINKER_LINT_DEBUG=1 shows the traceback)\n")


def test_last_resort_shows_the_traceback_when_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def reporter(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_module, "write_text", reporter)
    monkeypatch.setattr(sys, "argv", ["tinker-lint", "--isolated", "."])
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv("TINKER_LINT_DEBUG", "1")
    with pytest.raises(OSError, match="No space left"):
        cli_module.entry()
