"""``# noqa`` directives through the command: a typo (``TNK1O1``, ``TNKX``) silences nothing and is
warned about on stderr, naming the line and the text; valid ones silence as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinker_lint.cli import main

# One TNK101 on line 5 (tests/test_output_full.py's loop); the directive goes at that line's end.
LOOP = (
    "import tinker\n"
    "\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()  {directive}\n'
    "    tc.optim_step(adam)\n"
)
FINDING = ("loop.py", 5, 66, "TNK101")


def lint(tmp_path: Path, capsys: pytest.CaptureFixture[str], directive: str):
    (tmp_path / "loop.py").write_text(LOOP.format(directive=directive))
    code = main(["--isolated", "--no-cache", "--output-format", "concise", "loop.py"])
    out, err = capsys.readouterr()
    found = []
    for line in out.splitlines():
        if line.startswith("loop.py:"):
            path, row, col, rest = line.split(":", 3)
            found.append((path, int(row), int(col), rest.split()[0]))
    return code, found, err


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("directive", "warning"),
    [
        (
            "# noqa: TNK1O1",
            "loop.py:5: invalid code `TNK1O1` in `# noqa: TNK1O1`: a code is letters followed by "
            "digits (e.g., `TNK101`); it silences nothing",
        ),
        (
            "# noqa:TNK1O1",
            "loop.py:5: invalid code `TNK1O1` in `# noqa:TNK1O1`: a code is letters followed by "
            "digits (e.g., `TNK101`); it silences nothing",
        ),
        (
            "# noqa: TNKX",
            "loop.py:5: invalid code `TNKX` in `# noqa: TNKX`: a code is letters followed by "
            "digits (e.g., `TNK101`); it silences nothing",
        ),
        (
            "# noqa: TNK101x",
            "loop.py:5: invalid code `TNK101x` in `# noqa: TNK101x`: a code is letters followed by "
            "digits (e.g., `TNK101`); it silences nothing",
        ),
        (
            "# noqa: ,",
            "loop.py:5: invalid `# noqa` directive `# noqa: ,`: expected a comma-separated list "
            "of codes (e.g., `# noqa: TNK101, TNK102`); it silences nothing",
        ),
        (
            "# noqa: TNK999",
            "loop.py:5: unknown rule code `TNK999` in `# noqa` (it silences nothing)",
        ),
    ],
)
def test_a_typo_keeps_the_finding_and_is_warned_about(tmp_path, capsys, directive, warning):
    code, found, err = lint(tmp_path, capsys, directive)
    assert code == 1
    assert found == [FINDING]
    assert err.splitlines() == [f"tinker-lint: warning: {warning}"]


@pytest.mark.parametrize(
    "directive",
    [
        "# noqa: TNK1",
        "# noqa: TNK10",
        "# noqa: TNK101",
        "# noqa:TNK101",
        "# NOQA: tnk101",
        "# noqa",
        "# noqa: E501, TNK101",
        "# noqa: TNK101 because the wait is needed here",
    ],
)
def test_a_valid_directive_silences_without_a_warning(tmp_path, capsys, directive):
    code, found, err = lint(tmp_path, capsys, directive)
    assert (code, found, err) == (0, [], "")


def test_another_tools_code_keeps_the_finding_without_a_warning(tmp_path, capsys):
    code, found, err = lint(tmp_path, capsys, "# noqa: E501")
    assert (code, found, err) == (1, [FINDING], "")


def test_a_typo_next_to_a_valid_code_silences_only_the_valid_one(tmp_path, capsys):
    code, found, err = lint(tmp_path, capsys, "# noqa: TNK101, TNK1O2")
    assert (code, found) == (0, [])
    assert err.splitlines() == [
        "tinker-lint: warning: loop.py:5: invalid code `TNK1O2` in `# noqa: TNK101, TNK1O2`: a "
        "code is letters followed by digits (e.g., `TNK101`); it silences nothing"
    ]


def test_flake8_reads_the_directives_with_its_own_pattern(tmp_path):
    """Under flake8 the plugin drops what our reading of a line's noqa silences, then flake8 drops
    what its pattern does: ``TNK1O1`` is one unknown code to both (kept), but ``# noqa: TNKX``
    is a blanket noqa to flake8 (silenced; docs/configuration.md says so)."""
    import subprocess
    import sys

    from tests.checkout import checkout_env

    directives = {"typo": "# noqa: TNK1O1", "blanket": "# noqa: TNKX", "prefix": "# noqa: TNK1"}
    (tmp_path / "setup.cfg").write_text("[flake8]\n")  # nothing from this repository's
    for name, directive in directives.items():
        (tmp_path / f"{name}.py").write_text(LOOP.format(directive=directive))
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TNK", *(f"{n}.py" for n in directives)],
        cwd=tmp_path,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stderr == ""
    assert [line.split(" ", 2)[:2] for line in done.stdout.splitlines()] == [
        ["typo.py:5:66:", "TNK101"]
    ]


def test_a_typo_in_a_requirements_file_keeps_its_finding(tmp_path, capsys):
    (tmp_path / "requirements.txt").write_text(
        "pydantic==2.13.0b1  # noqa: TNK3O1\ntransformers==5.3.0  # noqa: TNK302\n"
    )
    code = main(["--isolated", "--no-cache", "--output-format", "concise", "requirements.txt"])
    out, err = capsys.readouterr()
    assert code == 1
    assert [line.split(" ", 2)[:2] for line in out.splitlines()[:-1]] == [
        ["requirements.txt:1:1:", "TNK301"]
    ]
    assert err.splitlines() == [
        "tinker-lint: warning: requirements.txt:1: invalid code `TNK3O1` in `# noqa: TNK3O1`: a "
        "code is letters followed by digits (e.g., `TNK101`); it silences nothing"
    ]


CONTINUED = (
    "import tinker\n"
    "\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result(); note = """\n'
    '    waited on purpose"""  {first}\n'
    "    tc.optim_step(adam)\n"
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result() or \\\n'
    "        None  {second}\n"
    "    tc.optim_step(adam)\n"
)


@pytest.mark.parametrize("front", ["tinker-lint", "flake8"])
def test_a_directive_where_a_string_or_continuation_ends_covers_its_lines(tmp_path, front):
    """As ruff (and flake8, which reads the lines joined): a finding on a line that a multi-line
    string or a backslash carries on past is silenced by the directive where that ends."""
    import subprocess
    import sys

    from tests.checkout import checkout_env

    (tmp_path / "setup.cfg").write_text("[flake8]\n")
    (tmp_path / "silenced.py").write_text(
        CONTINUED.format(first="# noqa: TNK101", second="# noqa: TNK1")
    )
    (tmp_path / "kept.py").write_text(CONTINUED.format(first="# noqa: E501", second=""))
    if front == "flake8":
        command = ["-m", "flake8", "--select", "TNK"]
    else:
        command = ["-m", "tinker_lint", "--isolated", "--no-cache", "--output-format", "concise"]
    done = subprocess.run(
        [sys.executable, *command, "silenced.py", "kept.py"],
        cwd=tmp_path,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert [
        line.split(" ", 2)[:2] for line in done.stdout.splitlines() if line.startswith("kept")
    ] == [["kept.py:5:66:", "TNK101"], ["kept.py:8:66:", "TNK101"]]
    assert "silenced.py" not in done.stdout


def test_the_editor_action_puts_the_directive_where_it_is_read():
    """The server's "silence TNK101 on this line" edit, for a finding on a line a multi-line
    string carries on past: at the end of the string's last line, as --add-noqa."""
    pytest.importorskip("lsprotocol")
    from tinker_lint.diagnostics import Edit
    from tinker_lint.noqa import Suppression
    from tinker_lint.server.lint import noqa_edit

    text = CONTINUED.format(first="", second="")
    edit = noqa_edit(text, 5, "TNK101")
    assert edit == Edit("  # noqa: TNK101", (6, 25), (6, 27))
    lines = text.splitlines(keepends=True)
    lines[5] = lines[5][:24] + "  # noqa: TNK101\n"
    assert Suppression("".join(lines)).silences("TNK101", 5)
    assert noqa_edit(text, 8, "TNK101") == Edit("  # noqa: TNK101", (9, 13), (9, 15))
