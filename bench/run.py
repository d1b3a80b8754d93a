"""Benchmark tinker-lint against ruff and flake8 on corpora of real code; print medians and ratios.

    python bench/run.py CORPUS [CORPUS ...] [--runs 5] [--markdown]

Run it on both kinds of code the targets are about (issue 14): the tinker-cookbook, where most
files never reach libcst, and a Tinker-dense corpus, where every file calls the SDK and most do
(``python3 bench/ecosystem.py materialise DEST --dense``); docs/performance.md has both.

Installs nothing: a tool that is not installed is skipped with a note (flake8-bugbear, for the
ratios that need it: ``pip install flake8-bugbear``). Each run is a fresh process started with
``subprocess``, timed with ``time.perf_counter``; the tools take turns, round by round, so a noisy
neighbour slows them alike. Reported per tool: the median wall time, the median CPU time (user +
system, the process and its children), the largest process's peak RSS (``wait4``), and the peak of
the whole process tree (sampled from /proc every 10 ms in one extra run, as PSS, which counts pages
shared between processes once, and as RSS, which counts them in each).

tinker-lint runs from this checkout (``python -m tinker_lint`` with it first on ``sys.path``),
never from an installed copy; so does its flake8 plugin (see ``flake8_with.py``). The checkout's
bytecode is written first, as pip writes an installed plugin's. All tools run with
their configuration files ignored (``--isolated``), and flake8 skips the directories tinker-lint and
ruff skip by default (``site-packages``, ``venv``, ``build``...), so that they read the same files.

The targets (tinker-lint issue 7):
  cold   tinker-lint --no-cache          <= 0.4 x flake8 + bugbear (--select B)
  warm   tinker-lint, nothing changed    <= 1.5 x ruff check --select ALL --no-cache
  plugin flake8 + tinker-lint, over flake8 with no plugin <= what bugbear adds over it
  memory peak of a cold tinker-lint run  <= 300 MB
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAKE8_WITH = Path(__file__).resolve().parent / "flake8_with.py"
MB = 1024 * 1024


@dataclass
class Tool:
    name: str
    argv: list[str]
    prepare: list[str] | None = None  # run once, untimed, before the rounds (fills the cache)
    note: str = ""


@dataclass
class Result:
    tool: Tool
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    max_rss: int = 0  # bytes, largest single process
    tree_pss: int = 0  # bytes, peak of the process tree
    tree_rss: int = 0
    failed: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.wall)


# ------------------------------------------------------------------------------------------
# The tools
# ------------------------------------------------------------------------------------------
def _ruff() -> str | None:
    """The ruff binary itself: a pyenv or pipx shim in front of it would add its own start-up."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.is_file():
        return str(beside)
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def _flake8_plugins(python: str) -> str | None:
    """flake8's ``--version`` line (it names the installed plugins), or None without flake8.
    Asked with the checkout first on the path, as the tools run: flake8 loads every installed
    plugin to list them, and an installed tinker-lint that cannot be imported from here (an
    editable install of another checkout, another interpreter) would fail it."""
    try:
        out = subprocess.run(
            [python, "-m", "flake8", "--version"],
            capture_output=True,
            text=True,
            check=True,
            env=_environment(),
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return " ".join(out.stdout.split())


def flake8_arguments(corpus: str) -> list[str]:
    """flake8's arguments after ``flake8_with.py PLUGINS --``: the same selection for every
    plugin set, so that only the plugins' own work differs; it shows bugbear's and tinker-lint's
    findings only (pyflakes and pycodestyle run all the same). The directories tinker-lint and
    ruff skip by default are excluded."""
    sys.path.insert(0, str(ROOT))
    from tinker_lint.io.files import SKIPPED_DIRS

    exclude = ",".join(sorted({*SKIPPED_DIRS, "*.egg-info"}))
    return ["--isolated", "--exit-zero", "--select", "B,TNK", "--extend-exclude", exclude, corpus]


def tools(corpus: str, python: str, cache_dir: str, notes: list[str]) -> list[Tool]:
    sys.path.insert(0, str(ROOT))  # the checkout's tinker_lint, for ``report``
    lint = [python, "-m", "tinker_lint", "--isolated", "--exit-zero", "--output-format", "concise"]
    found = [
        Tool("tinker-lint cold", [*lint, "--no-cache", corpus]),
        Tool(
            "tinker-lint warm",
            [*lint, "--cache-dir", cache_dir, corpus],
            prepare=[*lint, "--cache-dir", cache_dir, corpus],
            note="cache filled by one run before the rounds",
        ),
    ]
    ruff = _ruff()
    if ruff is None:
        notes.append("ruff not found: the warm ratio is not measured")
    else:
        found.append(
            Tool(
                "ruff --select ALL",
                [
                    ruff,
                    "check",
                    "--isolated",
                    "--select",
                    "ALL",
                    "--no-cache",
                    "--exit-zero",
                    "--quiet",
                    corpus,
                ],
            )
        )
    version = _flake8_plugins(python)
    if version is None:
        notes.append("flake8 not installed: the cold and plugin ratios are not measured")
        return found
    flake8 = ["--", *flake8_arguments(corpus)]
    found.append(Tool("flake8 (no plugin)", [python, str(FLAKE8_WITH), "", *flake8]))
    if "flake8-bugbear" in version:
        found.append(Tool("flake8 + bugbear", [python, str(FLAKE8_WITH), "bugbear", *flake8]))
    else:
        notes.append(
            "flake8-bugbear not installed (pip install flake8-bugbear): the cold and "
            "plugin ratios are not measured"
        )
    found.append(Tool("flake8 + tinker-lint", [python, str(FLAKE8_WITH), "tinker-lint", *flake8]))
    return found


# ------------------------------------------------------------------------------------------
# Running and measuring
# ------------------------------------------------------------------------------------------
def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("TINKER_LINT_CACHE_DIR", None)
    return env


def run_once(argv: list[str], sample_memory: bool = False) -> tuple[float, float, int, int, int]:
    """Wall seconds, CPU seconds, the largest process's peak RSS, and (when sampled) the tree's
    peak PSS and RSS, in bytes."""
    sampler = _TreeSampler() if sample_memory else None
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=errors, env=_environment(), cwd=ROOT
        )
        if sampler is not None:
            sampler.start(process.pid)
        _, status, usage = os.wait4(process.pid, 0)  # wait4: the child's resource usage too
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if sampler is not None:
            sampler.stop()
        if process.returncode not in (0, 1):
            errors.seek(0)
            message = errors.read().decode(errors="replace").strip()[-500:]
            raise RuntimeError(f"{Path(argv[0]).name} exited {process.returncode}: {message}")
    cpu = usage.ru_utime + usage.ru_stime
    max_rss = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    pss, rss = (sampler.peak_pss, sampler.peak_rss) if sampler else (0, 0)
    return wall, cpu, max_rss, pss, rss


class _TreeSampler:
    """The peak of the summed memory of a process and its descendants, read from /proc."""

    def __init__(self) -> None:
        self.peak_pss = 0
        self.peak_rss = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, pid: int) -> None:
        if not Path("/proc/self/smaps_rollup").exists():
            return
        self._thread = threading.Thread(target=self._loop, args=(pid,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self, pid: int) -> None:
        while not self._done.wait(0.01):
            pss = rss = 0
            for member in _tree(pid):
                p, r = _memory(member)
                pss, rss = pss + p, rss + r
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_rss = max(self.peak_rss, rss)


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    todo.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def _memory(pid: int) -> tuple[int, int]:
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


def _compile_checkout(python: str, notes: list[str]) -> None:
    """Write the checkout's bytecode, as pip does when it installs a package: with
    PYTHONDONTWRITEBYTECODE set and no ``__pycache__``, every tinker-lint process (each flake8
    worker too) would compile its modules again, a cost installed plugins such as bugbear do not pay."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [python, "-m", "compileall", "-q", str(ROOT / "tinker_lint")],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        notes.append(
            "PYTHONDONTWRITEBYTECODE is set: tinker-lint's bytecode was written first, as pip "
            "writes an installed package's"
        )


def benchmark(corpus: str, runs: int, python: str, notes: list[str]) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="tinker-lint-bench-") as cache_dir:
        return measure(tools(corpus, python, cache_dir, notes), runs, corpus)


def measure(found: list[Tool], runs: int, label: str) -> list[Result]:
    """Each tool's memory run (untimed, also a warm-up), then ``runs`` timed rounds in which the
    tools take turns; progress on stderr as ``label: round i/N``."""
    results = [Result(tool) for tool in found]
    for result in results:
        try:
            if result.tool.prepare:
                run_once(result.tool.prepare)
            # Memory, in a run of its own (sampling costs a little CPU); also a warm-up.
            _, _, _, result.tree_pss, result.tree_rss = run_once(result.tool.argv, True)
        except RuntimeError as error:
            result.failed = str(error)
    for round_ in range(runs):
        # Every other round in reverse order: a machine that speeds up or slows down during a
        # round favours no tool.
        for result in results if round_ % 2 == 0 else reversed(results):
            if result.failed:
                continue
            wall, cpu, max_rss, _, _ = run_once(result.tool.argv)
            result.wall.append(wall)
            result.cpu.append(cpu)
            result.max_rss = max(result.max_rss, max_rss)
        sys.stderr.write(f"\r{label}: round {round_ + 1}/{runs}")
    sys.stderr.write("\n")
    return results


# ------------------------------------------------------------------------------------------
# Reporting
# ------------------------------------------------------------------------------------------
def machine() -> list[tuple[str, str]]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor() or "unknown"
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return [
        (
            "cores (usable)",
            str(len(os.sched_getaffinity(0)))
            if hasattr(os, "sched_getaffinity")
            else str(os.cpu_count()),
        ),
        ("CPU", model),
        ("memory", memory),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("load average at start", load),
    ]


def _versions(python: str) -> list[tuple[str, str]]:
    found = []
    for name, argv in (
        ("libcst", [python, "-c", "import importlib.metadata as m; print(m.version('libcst'))"]),
        ("ruff", [_ruff() or "ruff", "--version"]),
        ("flake8", [python, "-m", "flake8", "--version"]),
    ):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
            found.append((name, " ".join(out.split())))
        except (OSError, subprocess.CalledProcessError):
            found.append((name, "not installed"))
    return found


def ratios(results: list[Result]) -> list[tuple[str, str, str, str]]:
    """(what, measured, target, verdict) for the four targets."""
    by = {r.tool.name: r for r in results if r.wall}
    rows = []

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    def ratio(what: str, ours: Result | None, theirs: Result | None, limit: float) -> None:
        if ours and theirs:
            value = ours.median / theirs.median
            rows.append((what, f"{value:.2f}x", f"<= {limit:.2f}x", verdict(value <= limit)))
        else:
            rows.append((what, "n/a", f"<= {limit:.2f}x", "not measured"))

    cold, bugbear = by.get("tinker-lint cold"), by.get("flake8 + bugbear")
    ratio("cold / flake8+bugbear", cold, bugbear, 0.4)
    ratio("warm / ruff", by.get("tinker-lint warm"), by.get("ruff --select ALL"), 1.5)
    base, plugin = by.get("flake8 (no plugin)"), by.get("flake8 + tinker-lint")
    if base and plugin and bugbear:
        # Paired by round (the three runs of a round are next to each other in time): the median
        # of the per-round extras, and of the per-round difference, which decides.
        ours = statistics.median(p - b for p, b in zip(plugin.wall, base.wall, strict=True))
        theirs = statistics.median(p - b for p, b in zip(bugbear.wall, base.wall, strict=True))
        gaps = [p - b for p, b in zip(plugin.wall, bugbear.wall, strict=True)]
        gap = statistics.median(gaps)
        # How often: on a noisy machine one median hides whether the gap is a trend or a coin.
        ahead = sum(g < 0 for g in gaps)
        rows.append(
            (
                "plugin: extra over flake8",
                f"{ours:+.2f} s (bugbear {theirs:+.2f} s; paired gap {gap:+.2f} s, "
                f"ahead in {ahead} of {len(gaps)} rounds)",
                "<= bugbear's",
                verdict(gap <= 0),
            )
        )
    else:
        rows.append(("plugin: extra over flake8", "n/a", "<= bugbear's", "not measured"))
    if cold:
        peak = cold.tree_pss or cold.max_rss
        how = "tree PSS" if cold.tree_pss else "largest process RSS"
        rows.append(
            (
                "peak memory (cold)",
                f"{peak / MB:.0f} MB ({how})",
                "<= 300 MB",
                verdict(peak <= 300 * MB),
            )
        )
    return rows


def table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def _line_count(path: str) -> int:
    try:
        with open(path, "rb") as handle:
            return handle.read().count(b"\n")
    except OSError:
        return 0


def report(corpus: str, results: list[Result], runs: int, markdown: bool) -> str:
    from tinker_lint.io.files import discover

    found = [item for item in discover([corpus]) if isinstance(item, str)]
    total = sum(_line_count(path) for path in found)
    title = f"{corpus} ({len(found)} files, {total:,} lines, {runs} runs each)"
    lines = [f"{'### ' if markdown else ''}{title}", ""]
    rows = []
    for r in results:
        if r.failed:
            rows.append([r.tool.name, "failed", "", "", "", "", r.failed[:60]])
            continue
        rows.append(
            [
                r.tool.name,
                f"{r.median:.2f}",
                f"{min(r.wall):.2f}",
                f"{statistics.median(r.cpu):.2f}",
                f"{r.max_rss / MB:.0f}",
                f"{r.tree_pss / MB:.0f} / {r.tree_rss / MB:.0f}" if r.tree_pss else "n/a",
                r.tool.note,
            ]
        )
    header = ["tool", "median s", "min s", "CPU s", "max RSS MB", "tree PSS/RSS MB", "note"]
    lines += [table(header, rows, markdown), ""]
    lines += [
        table(
            ["what", "measured", "target", "verdict"],
            [list(row) for row in ratios(results)],
            markdown,
        ),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpora", nargs="+", help="directories of Python code")
    parser.add_argument("--runs", "-n", type=int, default=5, help="timed runs per tool (5)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the tools")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    notes: list[str] = []
    _compile_checkout(args.python, notes)
    out = [
        table(
            ["machine", ""],
            [list(row) for row in machine() + _versions(args.python)],
            args.markdown,
        ),
        "",
    ]
    for corpus in args.corpora:
        if not Path(corpus).is_dir():
            parser.error(f"{corpus}: not a directory")
        results = benchmark(corpus, args.runs, args.python, notes)
        out.append(report(corpus, results, args.runs, args.markdown))
    out += [f"note: {n}" for n in dict.fromkeys(notes)]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
