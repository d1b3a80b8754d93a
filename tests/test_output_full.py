"""``text``, the default, shows each finding in its source as ruff's ``full`` output does; ``concise``
is one line per finding, as before (issue 13, item 9). Counts are singular when they are one."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tinker_lint.cli import main
from tinker_lint.diagnostics import Diagnostic, Edit, Fix
from tinker_lint.report.text import write_text

# A tab-indented loop: the caret must still line up (tabs are shown as four spaces).
LOOP = (
    "import tinker\n"
    "\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
    '\tresult = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
    "\ttc.optim_step(adam)\n"
)
MESSAGE = "Waiting for `forward_backward` before submitting `optim_step`, which does not need it"


@pytest.fixture
def loop(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("loop.py").write_text(LOOP)


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["--isolated", "--no-cache", *argv])
    return code, capsys.readouterr().out


def test_text_shows_the_source_with_a_caret_under_the_finding(loop, capsys):
    code, out = run(capsys, "loop.py")
    assert code == 1
    assert out == (
        f"loop.py:5:63: TNK101 [*] {MESSAGE}\n"
        "  |\n"
        '3 | tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
        "4 | for batch in batches:\n"
        '5 |     result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
        f"  |{' ' * 66}{'^' * 6} TNK101 wait-before-submit (error)\n"
        "6 |     tc.optim_step(adam)\n"
        "  |\n"
        # The rule's help (why, and what to do), wrapped at 100 columns; then the fix's title.
        "  = help: Submit `optim_step` first, then wait for both (requests run in submission order;\n"
        "          `tinker_cookbook.supervised.train` pipelines this)\n"
        "  = fix: Keep the future in `result_future` and wait for it after `optim_step(\u2026)`\n"
        "\n"
        "Found 1 error in 1 file checked.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )


def test_concise_is_one_line_per_finding(loop, capsys):
    code, out = run(capsys, "--output-format", "concise", "loop.py")
    assert code == 1
    assert out == (
        f"loop.py:5:63: TNK101 [*] {MESSAGE}\n"
        "Found 1 error in 1 file checked.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )


def _full(diagnostics, sources=None) -> str:
    out = io.StringIO()
    write_text(diagnostics, out, files=2, full=True, sources=sources)
    return out.getvalue()


def test_a_range_over_several_lines_is_underlined_to_the_end_of_its_first():
    text = "x = f(\n    1,\n)\n"
    found = Diagnostic("m.py", 1, 5, "TNK205", "msg", 3, 2)
    assert _full([found], {"m.py": text}) == (
        "m.py:1:5: TNK205 msg\n"
        "  |\n"
        "1 | x = f(\n"
        "  |     ^^ TNK205 file-io-in-hot-loop (note)\n"
        "2 |     1,\n"
        "3 | )\n"
        "  |\n"
        "\n"
        "Found 1 error in 2 files checked.\n"
    )


def test_the_gutter_is_as_wide_as_the_last_line_number_shown_and_lines_break_as_python_does():
    text = "".join(f"v{i} = {i}\n" for i in range(1, 9)) + "a = 1\fb\n" + "w = 10\nz = 11\n"
    found = Diagnostic("m.py", 10, 1, "TNK000", "boom", 10, 2)
    fix = Fix("Do it", (Edit("", (10, 1), (10, 2)),))
    assert _full([Diagnostic("m.py", 9, 5, "TNK001", "bad", 9, 6, fix), found], {"m.py": text}) == (
        "m.py:9:5: TNK001 [*] bad\n"
        "   |\n"
        " 7 | v7 = 7\n"
        " 8 | v8 = 8\n"
        " 9 | a = 1\fb\n"
        "   |     ^ TNK001 syntax-error (error)\n"
        "10 | w = 10\n"
        "11 | z = 11\n"
        "   |\n"
        "  = fix: Do it\n"
        "\n"
        "m.py:10:1: TNK000 boom\n"
        "   |\n"
        " 8 | v8 = 8\n"
        " 9 | a = 1\fb\n"
        "10 | w = 10\n"
        "   | ^ TNK000 internal-error (error)\n"
        "11 | z = 11\n"
        "   |\n"
        "\n"
        "Found 2 errors in 2 files checked.\n"
        "[*] 1 fixable with the `--fix` option.\n"
    )


def test_the_help_is_wrapped_under_itself_and_a_word_longer_than_the_line_is_kept_whole():
    text = "x = 1\n"
    url = "https://example.com/" + "a" * 100
    words = " ".join(["because"] * 14)  # 111 columns with the indent: wrapped once
    found = Diagnostic("m.py", 1, 1, "TNK107", "msg", 1, 2, help=f"{words} see {url} then")
    assert _full([found], {"m.py": text}) == (
        "m.py:1:1: TNK107 msg\n"
        "  |\n"
        "1 | x = 1\n"
        "  | ^ TNK107 setup-call-in-hot-loop (warning)\n"
        "  |\n"
        f"  = help: {' '.join(['because'] * 11)}\n"
        "          because because because see\n"
        f"          {url}\n"
        "          then\n"
        "\n"
        "Found 1 error in 2 files checked.\n"
    )


def test_the_help_is_not_part_of_what_makes_a_finding():
    """Order and deduplication are the message's: two findings differing only in help are one."""
    a = Diagnostic("m.py", 1, 1, "TNK107", "msg", help="one")
    b = Diagnostic("m.py", 1, 1, "TNK107", "msg", help="two")
    assert a == b and len({a, b}) == 1


def test_a_file_gone_since_it_was_linted_still_gets_its_finding(tmp_path):
    gone = Diagnostic(str(tmp_path / "gone.py"), 3, 1, "TNK107", "msg", 3, 4)
    assert _full([gone]) == (
        f"{tmp_path / 'gone.py'}:3:1: TNK107 msg\n"
        "  = TNK107 setup-call-in-hot-loop (warning)\n"
        "\n"
        "Found 1 error in 2 files checked.\n"
    )


@pytest.mark.parametrize(
    ("files", "found", "fixed", "summary"),
    [
        (1, 0, 0, "All checks passed! (1 file checked)"),
        (0, 0, 0, "All checks passed! (0 files checked)"),
        (1, 1, 0, "Found 1 error in 1 file checked."),
        (3, 2, 0, "Found 2 errors in 3 files checked."),
        (1, 0, 1, "Found 1 error (1 fixed, 0 remaining) in 1 file checked."),
    ],
)
def test_plurals(files, found, fixed, summary):
    out = io.StringIO()
    diagnostics = [Diagnostic("m.py", i + 1, 1, "TNK101", "m") for i in range(found)]
    write_text(diagnostics, out, files=files, fixed=fixed)
    assert out.getvalue().splitlines()[-1] == summary
