"""Opt-in rules and ``preview`` (issue 16): an opt-in rule runs only when a selector names its code
exactly (ruff's explicit-preview-rules), never through ``TNK``, ``TNK4`` or ``ALL``; ``ignore`` and
``per-file-ignores`` still win. ``--preview`` / ``preview = true`` set ``Settings.preview``.

The rule's opt-in line is read from its file, as its level is (``codes.is_opt_in``)."""

from __future__ import annotations

import argparse
import textwrap

import pytest

from tinker_lint import codes
from tinker_lint.cli import build_parser, settings_resolver
from tinker_lint.codes import RULE_CODES, is_opt_in
from tinker_lint.io import settings as settings_module
from tinker_lint.io.config import ConfigError, load_settings
from tinker_lint.io.settings import Settings
from tinker_lint.rules import DOCUMENTED_RULES

OPT_IN = "TNK407"  # any rule code: made opt-in for the selection tests


@pytest.fixture
def opt_in(monkeypatch):
    """``OPT_IN`` is an opt-in rule for this test (the settings module asks ``is_opt_in``)."""
    monkeypatch.setattr(settings_module, "is_opt_in", lambda code: code == OPT_IN)


@pytest.mark.parametrize(
    ("select", "extend_select", "ignore", "on"),
    [
        (("TNK",), (), (), False),
        (("TNK4",), (), (), False),
        (("ALL",), (), (), False),
        (("TNK40",), (), (), False),
        ((OPT_IN,), (), (), True),
        (("TNK",), (OPT_IN,), (), True),
        (("TNK4",), ("TNK4", OPT_IN), (), True),
        # ignore still wins: on a tie (the same code), and when selected by a prefix only.
        (("TNK",), (OPT_IN,), (OPT_IN,), False),
        ((OPT_IN,), (), ("TNK4",), True),  # the most specific selector wins, as for every rule
    ],
)
def test_an_opt_in_rule_is_on_only_when_its_code_is_named(
    opt_in, select, extend_select, ignore, on
):
    settings = Settings(select=select, extend_select=extend_select, ignore=ignore)
    assert settings.is_enabled(OPT_IN) is on


def test_the_other_rules_are_still_selected_by_a_prefix(opt_in):
    for select in (("TNK",), ("TNK4",), ("ALL",), ("TNK40",)):
        assert Settings(select=select).is_enabled("TNK406"), select


def test_per_file_ignores_still_win_over_an_opt_in_selection(opt_in):
    settings = Settings(extend_select=(OPT_IN,), per_file_ignores=(("tests/*", (OPT_IN,)),))
    assert settings.is_enabled(OPT_IN, "train.py")
    assert not settings.is_enabled(OPT_IN, "tests/test_a.py")


@pytest.mark.parametrize("code", RULE_CODES)
def test_the_registry_reads_the_rule_classes_own_opt_in(code):
    rule = DOCUMENTED_RULES[code]
    assert isinstance(rule.opt_in, bool)
    assert is_opt_in(code) is rule.opt_in


def test_the_opt_in_line_is_read_from_the_class_body(monkeypatch):
    sources = {
        "tnk998_a": 'class R:\n    level = "note"\n    opt_in = True\n',
        "tnk997_b": 'class R:\n    level = "note"\n',
        "tnk996_c": "class R:\n    opt_in = True\n    opt_in = False\n",
    }
    monkeypatch.setattr(codes, "_rule_source", lambda module: sources[module])
    for number, module in (("998", "tnk998_a"), ("997", "tnk997_b"), ("996", "tnk996_c")):
        entry = codes.Code(f"TNK{number}", "x", "pytorch", codes.Kind.PYTHON, f"m.{module}")
        monkeypatch.setitem(codes.REGISTRY, f"TNK{number}", entry)
    assert codes.is_opt_in.__wrapped__("TNK998") is True
    assert codes.is_opt_in.__wrapped__("TNK997") is False
    with pytest.raises(RuntimeError, match="TNK996: its rule class declares `opt_in` more than"):
        codes.is_opt_in.__wrapped__("TNK996")
    # The engine's codes and unknown ones are never opt-in.
    assert codes.is_opt_in.__wrapped__("TNK000") is False
    assert codes.is_opt_in.__wrapped__("TNK999") is False


# --- preview -------------------------------------------------------------------------------------
def _pyproject(tmp_path, body: str):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.tinker-lint]\n" + textwrap.dedent(body))
    return path


def test_preview_in_the_configuration(tmp_path):
    assert load_settings(_pyproject(tmp_path, "preview = true\n"), Settings()).preview is True
    assert load_settings(_pyproject(tmp_path, "preview = false\n"), Settings()).preview is False
    assert load_settings(_pyproject(tmp_path, ""), Settings()).preview is False
    with pytest.raises(ConfigError, match="`preview` must be true or false, got 'yes'"):
        load_settings(_pyproject(tmp_path, 'preview = "yes"\n'), Settings())


def _args(*argv: str) -> argparse.Namespace:
    args = build_parser().parse_args([*argv])
    args.paths = args.paths or ["."]
    return args


def test_preview_on_the_command_line_over_the_configuration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _pyproject(tmp_path, "preview = true\n")
    assert settings_resolver(_args()).for_path(".").preview is True
    assert settings_resolver(_args("--no-preview")).for_path(".").preview is False
    _pyproject(tmp_path, "")
    assert settings_resolver(_args()).for_path(".").preview is False
    assert settings_resolver(_args("--preview")).for_path(".").preview is True


# --- what the docs and the listing say -----------------------------------------------------------
def test_an_opt_in_rules_page_index_and_listing_say_so(monkeypatch, capsys):
    from tinker_lint import docs

    assert "## Off by default" not in docs.rule_page(OPT_IN)
    monkeypatch.setattr(docs, "is_opt_in", lambda code: code == OPT_IN)
    page = docs.rule_page(OPT_IN)
    assert (
        "## Off by default\n\nThis rule is opt-in: it runs only when its code is selected" in page
    )
    for how in (
        f"`tinker-lint --extend-select {OPT_IN}`",
        f'`extend-select = ["{OPT_IN}"]` under `[tool.tinker-lint]`',
        f"`--tinker-enable {OPT_IN}`, or `tinker-enable = {OPT_IN}` in the `[flake8]` section",
    ):
        assert how in page
    # Right below the level line, before "Why".
    assert page.index("Level: **") < page.index("## Off by default") < page.index("## Why")
    index = docs.index_page()
    assert f"| [{OPT_IN}]({OPT_IN}.md) | {codes.name_of(OPT_IN)} | note | off (opt-in) |" in index
    assert "| [TNK406](TNK406.md) | empty-cache-in-step | warning | on |" in index
    assert docs.rule_command(["--all"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert listed[OPT_IN].split()[2] == "(opt-in)"
    assert "(opt-in)" not in listed["TNK406"]


# --- TNK403 through the front doors, for real --------------------------------------------------
COPY_LOOP = """\
for inputs, labels in loader:
    inputs = inputs.to(device)
    criterion(model(inputs), labels).backward()
    optimizer.step()
"""
TNK403_AT = ("train.py", 2, 14, "TNK403")


def _run(project, *command: str) -> tuple[int, list[tuple[str, int, int, str]], str]:
    import re
    import subprocess
    import sys

    from tests.checkout import checkout_env

    done = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=project,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = re.compile(r"^([^:]+):(\d+):(\d+): (TNK\d+) ")
    found = [
        (m[1], int(m[2]), int(m[3]), m[4])
        for m in map(line.match, done.stdout.splitlines())
        if m is not None
    ]
    return done.returncode, found, done.stderr


@pytest.fixture
def copy_project(tmp_path):
    (tmp_path / "train.py").write_text(COPY_LOOP)
    return tmp_path


@pytest.mark.slow  # a process per case: the fast loop keeps the in-process selection tests above
@pytest.mark.parametrize(
    ("flags", "found"),
    [
        ((), []),
        (("--select", "TNK"), []),
        (("--select", "ALL"), []),
        (("--extend-select", "TNK4"), []),
        (("--extend-select", "TNK403"), [TNK403_AT]),
        (("--select", "TNK403"), [TNK403_AT]),
        (("--extend-select", "TNK403", "--ignore", "TNK403"), []),
    ],
)
def test_the_command_runs_tnk403_only_when_named(copy_project, flags, found):
    command = ("tinker_lint", "--isolated", "--no-cache", "--output-format", "concise")
    code, got, _ = _run(copy_project, *command, *flags, "train.py")
    assert (code, got) == (1 if found else 0, found)


def test_extend_select_in_the_configuration_turns_tnk403_on(copy_project):
    command = ("tinker_lint", "--no-cache", "--output-format", "concise", "train.py")
    (copy_project / "pyproject.toml").write_text('[tool.tinker-lint]\nextend-select = ["TNK4"]\n')
    assert _run(copy_project, *command)[1] == []
    (copy_project / "pyproject.toml").write_text('[tool.tinker-lint]\nextend-select = ["TNK403"]\n')
    assert _run(copy_project, *command)[1] == [TNK403_AT]


@pytest.mark.slow  # a flake8 process per case
@pytest.mark.parametrize(
    ("flags", "config", "found"),
    [
        # Off by default, and an explicit ``--select TNK`` does not bring it back (it would with
        # ``extend_default_ignore`` alone: TorchFix's TOR4xx).
        (("--select", "TNK"), "", []),
        ((), "", []),
        (("--select", "TNK", "--tinker-enable", "TNK403"), "", [TNK403_AT]),
        (("--tinker-enable=TNK403",), "", [TNK403_AT]),
        (("--select", "TNK"), "tinker-enable = TNK403\n", [TNK403_AT]),
        # flake8's own selection still applies on top.
        (("--select", "E", "--tinker-enable", "TNK403"), "", []),
        (("--tinker-enable", "TNK403", "--extend-ignore", "TNK403"), "", []),
    ],
)
def test_flake8_runs_tnk403_only_with_tinker_enable(copy_project, flags, config, found):
    (copy_project / "setup.cfg").write_text("[flake8]\n" + config)
    _, got, err = _run(copy_project, "flake8", *flags, "train.py")
    assert err == ""
    assert got == found  # (pyflakes' findings, undefined names, also set the exit code)


def test_flake8_tinker_enable_of_an_unknown_code_is_a_configuration_error(copy_project):
    _, got, err = _run(
        copy_project, "flake8", "--select", "TNK", "--tinker-enable", "TNK4", "train.py"
    )
    assert got == [("train.py", 1, 1, "TNK004")]
    assert err == ""


def test_flake8_preview_and_enable_reach_the_settings(tmp_path):
    from tinker_lint import flake8_plugin
    from tinker_lint.flake8_plugin import TinkerLintPlugin

    namespace = argparse.Namespace(
        tinker_version=None, tinker_enable=["tnk403", " "], tinker_preview=True
    )
    TinkerLintPlugin.parse_options(namespace)
    try:
        options = TinkerLintPlugin._options
        assert options == flake8_plugin._Options(None, ("TNK403",), True)
        settings = flake8_plugin._project_settings(str(tmp_path), options)
        assert isinstance(settings, Settings)
        assert (settings.extend_select, settings.preview) == (("TNK403",), True)
        assert settings.is_enabled("TNK403")
        # ``preview = true`` under [tool.tinker-lint] is honoured by the plugin too.
        _pyproject(tmp_path, "preview = true\n")
        plain = flake8_plugin._Options()
        settings = flake8_plugin._project_settings(str(tmp_path), plain)
        assert isinstance(settings, Settings)
        assert (settings.extend_select, settings.preview) == ((), True)
        assert not settings.is_enabled("TNK403")
    finally:
        TinkerLintPlugin.parse_options(argparse.Namespace())
        flake8_plugin._project_settings.cache_clear()


def test_flake8_reads_tinker_preview_from_its_configuration(copy_project):
    (copy_project / "setup.cfg").write_text(
        "[flake8]\ntinker-preview = true\ntinker-enable = TNK403, TNK401\n"
    )
    _, got, err = _run(copy_project, "flake8", "--select", "TNK", "train.py")
    assert (got, err) == ([TNK403_AT], "")


def test_flake8_and_the_command_report_the_same_tnk403_findings(tmp_path):
    import shutil

    from tests.fixture_expectations import fixture_dir

    shutil.copy(fixture_dir("TNK4") / "tnk403_blocking_batch_copy.py", tmp_path / "f.py")
    _, flake8, err = _run(
        tmp_path, "flake8", "--isolated", "--select", "TNK403", "--tinker-enable", "TNK403", "f.py"
    )
    assert err == ""
    command = ("tinker_lint", "--isolated", "--no-cache", "--output-format", "concise")
    _, cli, _ = _run(tmp_path, *command, "--select", "TNK403", "f.py")
    assert flake8 == cli
    assert [line for _, line, _, _ in cli] == [13, 14, 21, 31, 41, 54, 60, 163, 164]
