"""A run answered wholly from the cache, with and without rule selection (issue 12).

    python bench/cached_select.py CORPUS [--runs 11]

Copies CORPUS into two throwaway projects, one whose ``pyproject.toml`` has a ``[tool.tinker-lint]``
table with ``select``, one without; fills each cache once, then times, round by round in turns:
no selection, ``select`` in the file, and ``--select`` on the command line. Selecting rules must
cost nothing on a warm run: config validation reads the code registry (``tinker_lint/codes.py``),
which imports neither the rules nor libcst. Prints the median and minimum wall time of each and the
ratio to the run without selection; ``ruff check --select ALL`` on the same files, warm, for scale.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tinker_lint(project: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tinker_lint", *extra, str(project)]


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=_env())
    return time.perf_counter() - start


def _env() -> dict[str, str]:
    import os

    # This checkout, never an installed copy.
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tinker-lint-bench-") as tmp:
        plain, selected = Path(tmp, "plain"), Path(tmp, "selected")
        for project in (plain, selected):
            shutil.copytree(args.corpus, project / "src")
        (plain / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
        (selected / "pyproject.toml").write_text(
            "[project]\nname = 'bench'\n\n[tool.tinker-lint]\nselect = ['TNK1', 'TNK2']\n"
        )
        rows = {
            "no selection": (_tinker_lint(plain / "src"), plain),
            "select in pyproject.toml": (_tinker_lint(selected / "src"), selected),
            "--select on the command line": (
                _tinker_lint(plain / "src", "--select", "TNK1,TNK2"),
                plain,
            ),
        }
        ruff = shutil.which("ruff")
        if ruff:
            rows["ruff check --select ALL (warm)"] = (
                [ruff, "check", "--select", "ALL", "--exit-zero", "-q", str(plain / "src")],
                plain,
            )
        for argv, cwd in rows.values():  # fill the caches, untimed
            subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=_env())
        times: dict[str, list[float]] = {name: [] for name in rows}
        for round_ in range(args.runs):
            order = list(rows.items())
            if round_ % 2:
                order.reverse()
            for name, (argv, cwd) in order:
                times[name].append(_time(argv, cwd))
    base = statistics.median(times["no selection"])
    print(f"{args.corpus}: {args.runs} warm runs each, alternating order")
    print(f"{'':32} {'median':>8} {'min':>8} {'ratio':>6}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32} {median:8.3f} {min(values):8.3f} {median / base:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
