"""How fast ``tinker-lint server`` answers an edit, against the flake8 route, and its memory.

    python3 bench/server_latency.py [--cookbook DIR] [--edits 20] [--flake8-runs 5] [--no-memory]
                                    [--where bodies|loops|typing]

1. Starts the server (``python -m tinker_lint server``, this checkout), opens the cookbook's
   ``rl/train.py`` and waits for its diagnostics (cold: libcst's import, the helpers' summaries).
2. Warms up with 3 edits, then makes ``--edits`` more, one at a time, each a different small
   change in the middle of the file (a statement added to a function), and times each from the
   ``didChange`` sent to the ``publishDiagnostics`` for that version: median and p90. With
   ``--where loops`` each edit is a statement added inside a loop's body in the file's second
   half (its training loops), where a user editing a step types; with ``--where typing``, each
   is one keystroke of a statement typed there (some of those texts do not compile).
3. Times ``flake8 --select TNK`` on the same file (what python-lsp-server runs on each check: a
   new process) and ``ruff check --no-cache`` on it (ruff's own process per check), median of
   ``--flake8-runs``, and prints the server's median edit as a ratio of each.
4. Opens every other Python file of the cookbook, waits for all their diagnostics, and reads the
   server's resident memory (VmRSS, VmHWM) from /proc.

Run it alone on the machine: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import COOKBOOK, unpacked  # noqa: E402
from tests.lsp_client import LspClient  # noqa: E402  (the tests' LSP client)

TRAIN = Path("tinker_cookbook/rl/train.py")


def _edited(text: str, number: int) -> str:
    """The text with one statement added at the top of a function body in the middle of the
    file: a change the analysis has to look at (not a comment the pre-filter could skip)."""
    lines = text.splitlines(keepends=True)
    defs = [i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))]
    target = defs[len(defs) // 2 + number % max(1, len(defs) // 2)]
    # After the signature (it may span lines): the first line that ends with ':'.
    end = target
    while not lines[end].rstrip().endswith(":"):
        end += 1
    indent = " " * (len(lines[target]) - len(lines[target].lstrip()) + 4)
    return "".join([*lines[: end + 1], f"{indent}_edit_{number} = {number}\n", *lines[end + 1 :]])


def _loop_lines(text: str) -> list[int]:
    """The first lines (0-based) of the statements inside the bodies of the ``for`` and
    ``while`` loops in the second half of the file, in order: where a training step is edited."""
    tree = ast.parse(text)
    half = len(text.splitlines()) // 2
    lines = {
        statement.lineno - 1
        for node in ast.walk(tree)
        if isinstance(node, ast.For | ast.AsyncFor | ast.While) and node.lineno > half
        for statement in node.body
        if not isinstance(statement, ast.Expr | ast.Pass)  # not a docstring or a placeholder
    }
    return sorted(lines)


def _edited_in_loop(text: str, number: int, lines: list[int]) -> str:
    """The text with one statement added before a statement of a loop's body (``--where
    loops``): what a user editing a training step types."""
    rows = text.splitlines(keepends=True)
    target = lines[(number * 7) % len(lines)]  # spread over the loops, not in order
    indent = rows[target][: len(rows[target]) - len(rows[target].lstrip())]
    return "".join([*rows[:target], f"{indent}_edit_{number} = {number}\n", *rows[target:]])


TYPED = "metrics_total = len(metrics) + i_batch"  # typed in a training loop (``--where typing``)


def _typed(text: str, lines: list[int], count: int) -> list[str]:
    """The texts of ``count`` keystrokes, each one character more of ``TYPED`` on a new line of
    a loop's body in the middle of the loops (a new line begun when one is done): what an editor
    sends as a user types a statement in a training step. Some of them do not compile
    (``metrics_total =``): the server then reports the syntax error, as an editor shows it."""
    rows = text.splitlines(keepends=True)
    target = lines[len(lines) // 2]
    indent = rows[target][: len(rows[target]) - len(rows[target].lstrip())]
    texts = []
    for k in range(count):
        done, chars = divmod(k, len(TYPED))
        typed = [f"{indent}{TYPED}\n"] * done + [f"{indent}{TYPED[: chars + 1]}\n"]
        texts.append("".join([*rows[:target], *typed, *rows[target:]]))
    return texts


def _edits(text: str, where: str, count: int) -> list[str]:
    """The texts of 3 warm-up edits and ``count`` timed ones, made before any clock starts."""
    if where == "typing":
        return _typed(text, _loop_lines(text), 3 + count)
    if where == "loops":
        lines = _loop_lines(text)
        return [_edited_in_loop(text, n, lines) for n in [100, 101, 102, *range(count)]]
    return [_edited(text, n) for n in [100, 101, 102, *range(count)]]


def _timed_edits(client: LspClient, path: Path, texts: list[str], first: int) -> list[float]:
    """Each text sent as a new version (``didChange``, the whole text), timed to its
    diagnostics."""
    times = []
    for n, edited in enumerate(texts):
        version = first + n
        sent = time.perf_counter()
        mark = client.change(path, edited, version)
        client.diagnostics(path, after=mark, version=version)
        times.append(time.perf_counter() - sent)
    return times


def _compiles(text: str) -> bool:
    try:
        compile(text, "<edit>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def _rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _process_times(command: list[str], runs: int) -> list[float]:
    times = []
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return times


def _flake8(path: Path, runs: int) -> list[float]:
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "TNK", str(path)]
    return _process_times(command, runs)


def _ruff(path: Path, runs: int) -> list[float]:
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", str(path)]
    return _process_times(command, runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cookbook", type=Path, help="an unpacked cookbook wheel (default: 0.6.1, downloaded once)"
    )
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--flake8-runs", type=int, default=5)
    parser.add_argument("--no-memory", action="store_true", help="skip opening the whole cookbook")
    parser.add_argument(
        "--where",
        choices=("bodies", "loops", "typing"),
        default="bodies",
        help="each edit: a statement at the top of a function's body (the default), or in a "
        "loop's body; or a keystroke of a statement typed in a loop's body",
    )
    args = parser.parse_args(argv)
    if args.cookbook is None:
        args.cookbook = unpacked(COOKBOOK)
    path = args.cookbook / TRAIN
    if not path.is_file():
        sys.stderr.write(f"server_latency: {path}: not found (--cookbook DIR)\n")
        return 2
    text = path.read_text(encoding="utf-8")
    client = LspClient(cwd=args.cookbook)
    try:
        started = time.perf_counter()
        client.initialize(args.cookbook)
        found = client.diagnostics(path, after=client.open(path, text), version=1)
        cold = time.perf_counter() - started
        print(f"{TRAIN} ({len(text.splitlines()):,} lines): {len(found)} findings")
        print(f"  server, start + first diagnostics: {cold * 1000:.0f} ms")
        texts = _edits(text, args.where, args.edits)
        _timed_edits(client, path, texts[:3], 2)  # warm-up
        times = _timed_edits(client, path, texts[3:], 5)
        where = {
            "bodies": "",
            "loops": " (in loop bodies)",
            "typing": f" (keystrokes in a loop body, {sum(map(_compiles, texts[3:]))} compile)",
        }[args.where]
        print(
            f"  server, didChange -> publishDiagnostics over {args.edits} edits{where}: "
            f"median {statistics.median(times) * 1000:.0f} ms, p90 {_p90(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms"
        )
        edit = statistics.median(times)
        flake8 = statistics.median(_flake8(path, args.flake8_runs))
        print(
            f"  flake8 --select TNK (a new process per check), median of {args.flake8_runs}: "
            f"{flake8 * 1000:.0f} ms; server edit / flake8: {edit / flake8:.2f}x"
        )
        ruff = statistics.median(_ruff(path, args.flake8_runs))
        print(
            f"  ruff check --no-cache (its default rules, a new process), median of "
            f"{args.flake8_runs}: {ruff * 1000:.0f} ms; server edit / ruff: {edit / ruff:.2f}x"
        )
        rss, peak = _rss_mb(client.process.pid)
        print(f"  server memory with 1 file open: {rss:.0f} MB (peak {peak:.0f} MB)")
        if not args.no_memory:
            others = sorted(p for p in args.cookbook.rglob("*.py") if p != path)
            started = time.perf_counter()
            marks = {}
            for other in others:
                marks[other] = client.open(other)
            for other in others:
                client.diagnostics(other, after=marks[other], version=1)
            elapsed = time.perf_counter() - started
            rss, peak = _rss_mb(client.process.pid)
            print(
                f"  the whole cookbook open ({len(others) + 1} files, linted in {elapsed:.1f} s): "
                f"{rss:.0f} MB resident (peak {peak:.0f} MB)"
            )
        client.stop()
    finally:
        client.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
