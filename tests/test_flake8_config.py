"""The flake8 plugin reads the configuration as the command does (issue 13 item 5): the same tinker
version (flake8's ``--tinker-version``, ``tinker-version`` in ``[tool.tinker-lint]``, the project's
pin, the installed tinker), a configuration error reported visibly (TNK004 at line 1, in place of
the file's findings, as the command exits 2), and ``# ruff: noqa`` / ``# flake8: noqa`` meaning the
same in both front ends. Real flake8 and the real command, as subprocesses.

On main, the plugin ignored an invalid ``--tinker-version`` and dropped the whole table on any error
in it (a valid ``tinker-version`` too), so editors showed TNK105s the command did not.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.checkout import checkout_env

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """\
    import tinker


    async def sample(sc: tinker.SamplingClient, prompt, params):
        return await sc.sample_async(prompt=prompt, num_samples=1, sampling_params=params)
    """
)
TNK105 = ("train.py", 5, 18, "TNK105")
CONCISE = ("--output-format", "concise")
_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>TNK\d+) (?P<text>.*)$")


def _parse(out: str) -> list[tuple[str, int, int, str, str]]:
    found = []
    for line in out.splitlines():
        match = _LINE.match(line)
        if match is not None:
            found.append(
                (
                    match["path"],
                    int(match["line"]),
                    int(match["col"]),
                    match["code"],
                    match["text"],
                )
            )
    return found


def _flake8(project: Path, *args: str) -> tuple[int, list[tuple[str, int, int, str, str]]]:
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TNK", *args, "train.py"],
        cwd=project,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stderr == "", done.stderr
    return done.returncode, _parse(done.stdout)


def _cli(project: Path, *args: str) -> tuple[int, list[tuple[str, int, int, str, str]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--no-cache", *CONCISE, *args, "train.py"],
        cwd=project,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, _parse(done.stdout), done.stderr


def _project(tmp_path: Path, pyproject: str | None = None, program: str = PROGRAM) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    # Its own flake8 configuration: nothing from this repository's.
    (project / "setup.cfg").write_text("[flake8]\n")
    if pyproject is not None:
        (project / "pyproject.toml").write_text(textwrap.dedent(pyproject))
    (project / "train.py").write_text(program)
    return project


def _codes(found):
    return [(path, line, col, code) for path, line, col, code, _ in found]


@pytest.mark.slow
def test_an_invalid_flake8_tinker_version_is_reported_once_per_file(tmp_path):
    project = _project(tmp_path)
    code, found = _flake8(project, "--tinker-version", "banana")
    assert code == 1
    assert found == [
        (
            "train.py",
            1,
            1,
            "TNK004",
            "tinker-lint configuration error: flake8 option --tinker-version: invalid version "
            "'banana' (expected e.g. 0.38); no tinker-lint check ran on this file",
        )
    ]
    # The command refuses the same version.
    code, _, err = _cli(project, "--tinker-version", "banana")
    assert code == 2
    assert "invalid version 'banana'" in err


@pytest.mark.slow
def test_an_error_in_the_table_is_reported_and_its_version_is_not_dropped(tmp_path):
    project = _project(
        tmp_path,
        """\
        [tool.tinker-lint]
        tinker-version = "0.36"
        select = ["TNK9"]
        """,
    )
    message = "pyproject.toml [tool.tinker-lint]: unknown rule code or prefix 'TNK9' in `select`"
    code, found = _flake8(project)
    assert code == 1
    assert found == [
        (
            "train.py",
            1,
            1,
            "TNK004",
            f"tinker-lint configuration error: {message}; no tinker-lint check ran on this file",
        )
    ]
    code, cli_found, err = _cli(project)
    assert (code, cli_found, err) == (2, [], f"tinker-lint: error: {message}\n")


@pytest.mark.parametrize(
    ("pyproject", "requirements", "flags", "expected"),
    [
        ('[tool.tinker-lint]\ntinker-version = "0.36"\n', None, (), []),
        ('[tool.tinker-lint]\ntinker-version = "0.38"\n', None, (), [TNK105]),
        (
            '[tool.tinker-lint]\ntinker-version = "0.36"\n',
            None,
            ("--tinker-version", "0.38"),
            [TNK105],
        ),
        (None, "tinker==0.36.0\n", (), []),  # the project's pin, over the installed 0.38
        (None, "tinker>=0.38\n", (), [TNK105]),
    ],
)
@pytest.mark.slow
def test_the_plugin_targets_the_same_tinker_version_as_the_command(
    tmp_path, pyproject, requirements, flags, expected
):
    project = _project(tmp_path, pyproject)
    if requirements is not None:
        (project / "requirements.txt").write_text(requirements)
    _, found = _flake8(project, *flags)
    assert [(p.removeprefix("./"), *rest) for p, *rest in _codes(found)] == expected
    _, cli_found, _ = _cli(project, *flags)
    assert _codes(cli_found) == expected


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# ruff: noqa\n", []),
        ("# flake8: noqa\n", []),
        ("# ruff: noqa: TNK105\n", []),
        ("# ruff: noqa: TNK2\n", [(TNK105[0], TNK105[1] + 1, *TNK105[2:])]),
        ("x = 1  # ruff: noqa\n", [(TNK105[0], TNK105[1] + 1, *TNK105[2:])]),  # not its own line
    ],
)
@pytest.mark.slow
def test_file_level_noqa_means_the_same_in_both_front_ends(tmp_path, comment, expected):
    project = _project(tmp_path, program=comment + PROGRAM)
    _, found = _flake8(project, "--tinker-version", "0.38")
    assert [(p.removeprefix("./"), *rest) for p, *rest in _codes(found)] == expected
    _, cli_found, _ = _cli(project, "--tinker-version", "0.38")
    assert _codes(cli_found) == expected


@pytest.mark.parametrize(
    ("text", "exempt"),
    [
        ("# ruff: noqa\n", {""}),
        ("x = 1\n\t# flake8: noqa\n", {""}),
        ("# flake8=noqa\n", {""}),  # flake8's NOQA_FILE takes `=` too
        ("# RUFF: NOQA: tnk105, TNK2\n", {"TNK105", "TNK2"}),
        ("# flake8: noqa:TNK105 TNK106\n", {"TNK105", "TNK106"}),
        ("a = 1\r# ruff: noqa: TNK1\r", {"TNK1"}),  # old Mac line ends
        ("x = 1  # ruff: noqa\n", set()),  # after code: not a file-level directive
        ("# noqa\n", set()),
        ("s = '''\n'''\n", set()),
    ],
)
def test_file_exemptions(text, exempt):
    from tinker_lint.noqa import file_exemptions, is_exempt

    assert file_exemptions(text) == exempt
    assert is_exempt("TNK105", file_exemptions(text)) == any("TNK105".startswith(p) for p in exempt)


def test_the_plugin_works_out_the_text_facts_once_per_file(tmp_path, monkeypatch):
    """The plugin's gate and the engine's pre-filter ask the same facts of one text: they are
    worked out once (they were twice per file under flake8)."""
    from tinker_lint.flake8_plugin import TinkerLintPlugin
    from tinker_lint.prefilter import needs

    made = []
    original = needs.TextFacts.__init__

    def counting(self, text):
        made.append(text)
        original(self, text)

    monkeypatch.setattr(needs.TextFacts, "__init__", counting)
    text = (
        "import tinker\n\n"
        'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
        "for batch in batches:\n"
        '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
        "    tc.optim_step(adam)\n"
    )
    path = tmp_path / "train.py"
    path.write_text(text)
    plugin = TinkerLintPlugin(ast.parse(text), str(path), text.splitlines(keepends=True))
    found = [(line, col, message.split()[0]) for line, col, message, _ in plugin.run()]
    assert found == [(5, 65, "TNK101")]
    assert made == [text]
