"""Colour in the text reports as ruff gives it (issue 28, item 3): on a terminal, none into a pipe,
``FORCE_COLOR`` and ``NO_COLOR`` honoured; the machine formats never coloured. Run through the
real console script, its stdout a pseudo-terminal or a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.snippets import WAIT_BEFORE_SUBMIT
from tinker_lint.report.colour import wants_colour

LOOP = WAIT_BEFORE_SUBMIT
ESC = "\x1b["
# The finding's first line, painted: the path bold, the code bold red, the [*] cyan.
PAINTED_HEAD = f"{ESC}1mloop.py:4:66{ESC}0m: {ESC}1;31mTNK101{ESC}0m {ESC}36m[*]{ESC}0m "
CARET = f"{ESC}1;31m^^^^^^{ESC}0m {ESC}1;31mTNK101 wait-before-submit (error){ESC}0m"


def _environ(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    env.pop("CLICOLOR_FORCE", None)
    env.pop("CLICOLOR", None)
    env.update(changes)
    return env


def run(tmp_path: Path, *argv: str, terminal: bool, **env: str) -> str:
    (tmp_path / "loop.py").write_text(LOOP)
    command = [sys.executable, "-m", "tinker_lint", "--isolated", "--no-cache", *argv, "loop.py"]
    if not terminal:
        done = subprocess.run(
            command, cwd=tmp_path, env=_environ(**env), capture_output=True, text=True
        )
        return done.stdout
    main, child = pty.openpty()
    with subprocess.Popen(
        command, cwd=tmp_path, env=_environ(**env), stdout=child, stderr=subprocess.DEVNULL
    ) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal's other end closed (Linux: EIO)
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait()
    os.close(main)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_terminal_gets_colour(tmp_path: Path) -> None:
    out = run(tmp_path, terminal=True)
    assert out.startswith(PAINTED_HEAD)
    assert CARET in out
    assert f"{ESC}1;36mhelp{ESC}0m: Submit `optim_step` first" in out
    assert f"{ESC}1;36mfix{ESC}0m: Keep the future" in out


def test_a_pipe_gets_none(tmp_path: Path) -> None:
    out = run(tmp_path, terminal=False)
    assert out.startswith("loop.py:4:66: TNK101 [*] ")
    assert ESC not in out


def test_force_color_paints_into_a_pipe(tmp_path: Path) -> None:
    out = run(tmp_path, terminal=False, FORCE_COLOR="1")
    assert out.startswith(PAINTED_HEAD)


def test_no_color_on_a_terminal_paints_nothing(tmp_path: Path) -> None:
    out = run(tmp_path, terminal=True, NO_COLOR="1")
    assert out.startswith("loop.py:4:66: TNK101 [*] ")
    assert ESC not in out


def test_concise_is_painted_too_but_json_never(tmp_path: Path) -> None:
    concise = run(tmp_path, "--output-format", "concise", terminal=False, FORCE_COLOR="1")
    assert concise.startswith(PAINTED_HEAD)
    as_json = run(tmp_path, "--output-format", "json", terminal=True, FORCE_COLOR="1")
    assert ESC not in as_json


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("environ", "tty", "expected"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"NO_COLOR": ""}, True, True),  # set but empty: no-color.org asks for a value
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": ""}, False, False),
        ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, True),  # ruff's override wins
        ({"CLICOLOR_FORCE": "1"}, False, True),
        ({"CLICOLOR_FORCE": "0"}, False, False),
        ({"CLICOLOR": "0"}, True, False),
    ],
)
def test_which_environment_paints(environ: dict[str, str], tty: bool, expected: bool) -> None:
    assert wants_colour(_Stream(tty), environ) is expected  # type: ignore[arg-type]
