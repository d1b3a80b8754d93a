"""Running the real ``tinker-lint`` command on files a test made, for the robustness tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ``path:line:col: CODE message``; the path may hold spaces, colons are not expected in it.
DIAGNOSTIC = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TNK\d{3}) (?P<msg>.*)$"
)


def compiles(source: str | bytes) -> bool:
    """The oracle for TNK001: whether CPython itself compiles ``source`` (a syntax error CPython
    does not see is tinker-lint's bug). Shared by the fuzz and corpus tests and ``bench/sweep.py``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about generated or stdlib code
            compile(source, "<oracle>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def diagnostics(self) -> list[tuple[str, int, int, str]]:
        """(file name, line, column, code) for each diagnostic line of the text output."""
        found = []
        for line in self.stdout.splitlines():
            match = DIAGNOSTIC.match(line)
            if match:
                found.append(
                    (
                        os.path.basename(match["path"]),
                        int(match["line"]),
                        int(match["col"]),
                        match["code"],
                    )
                )
        return found

    def messages(self, code: str) -> list[str]:
        return [
            m["msg"]
            for m in map(DIAGNOSTIC.match, self.stdout.splitlines())
            if m and m["code"] == code
        ]


def cli(
    *args: str | os.PathLike,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    timeout: float = 120,
    isolated: bool = True,
) -> Run:
    """``python -m tinker_lint [--isolated] ARGS`` in a fresh process, from this checkout."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    flags = ["--isolated"] if isolated else []
    completed = subprocess.run(
        [*prefix, sys.executable, "-m", "tinker_lint", *flags, *map(os.fspath, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        timeout=timeout,
    )
    return Run(
        completed.returncode,
        completed.stdout.decode("utf-8", "backslashreplace"),
        completed.stderr.decode("utf-8", "backslashreplace"),
    )


def no_traceback(run: Run) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert "Traceback" not in run.stdout, run.stdout
    assert run.returncode in (0, 1, 2), (run.returncode, run.stderr[-2000:])


def sample() -> tuple[str, list[tuple[int, int, str]]]:
    """A small file with a finding, and where: TNK104's own first INVALID example."""
    from tinker_lint.rules import RULES_BY_CODE

    example = RULES_BY_CODE["TNK104"].INVALID[0]
    return example.code, [(line, col, "TNK104") for line, col in example.expect]


def without_read_permission() -> tuple[str, ...] | None:
    """A prefix under which mode 000 means unreadable: none needed for a normal user; for root,
    ``setpriv`` dropping the capabilities that let root read anything. None if neither works."""
    if os.geteuid() != 0:
        return ()
    prefix = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
    try:
        subprocess.run([*prefix, "true"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return prefix
