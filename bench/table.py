"""Issue 30's targets in one table, for the current checkout: tinker-lint against its peers, row
by row, with CPU-time ratios and tinker-lint's peak memory, all measured in one run.

    python3 bench/table.py [--runs 3] [--dense DIR] [--cookbook DIR] [--rows ROW,ROW...]
                           [--edits 20] [--markdown]

The rows (``--rows`` picks some; all by default):

  stdlib         CPython's standard library (this interpreter's), cold, against
                 ``ruff check --select ALL`` (concise): CPU <= 1.2x, and tinker-lint's peak
                 <= 150 MB
  cookbook       tinker-cookbook 0.6.1 (``bench/corpora.py``), cold, against flake8 + bugbear:
                 <= 0.4x
  dense          the Tinker-dense files (``--dense DIR``, made with ``python3 bench/ecosystem.py
                 materialise DIR --dense --mirrors MIRRORS``), cold, against flake8 + bugbear:
                 <= 0.6x; skipped without ``--dense``
  plugin         flake8 with tinker-lint's plugin on the cookbook's ``rl/train.py`` against flake8
                 with bugbear on it, whole runs (the editor's case): <= 1.2x
  startup        one 3-line file, against flake8 with no plugin: <= 1.5x; and ruff, shown
  server         ``tinker-lint server``, one edit of ``rl/train.py`` (``server_latency.py``'s
                 edits), against ``ruff server`` with ALL: CPU per edit <= 2x
  cookbook-ruff  the cookbook against ruff ALL: half the 22x measured before issue 30 (<= 11x)
  dense-ruff     the dense files against ruff ALL: half the 36x measured before it (<= 18x)

Each command row is measured as ``bench/run.py`` measures (its functions): the checkout's bytecode
written first, then per tool one run sampled for memory (the process tree's PSS, every 10 ms; also
a warm-up), then ``--runs`` timed rounds in which the tools of a row group take turns, every other
round in reverse order; CPU is user + system of the process and its children (``wait4``). The
ratio is tinker-lint's median CPU over the peer's. A tool that is not installed, or a corpus not
given, leaves its rows skipped with a note. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import run  # noqa: E402
from bench.corpora import DownloadError, cookbook_package  # noqa: E402

MB = run.MB
TRAIN = Path("rl") / "train.py"  # in the cookbook's package
TINY = "import os\n\nprint(os.getcwd())\n"  # the start-up row's file
PAUSE = 0.5  # seconds after a server's edits before its CPU time is read (its collection)


@dataclass(frozen=True)
class Row:
    key: str  # the name ``--rows`` takes
    work: str
    ours: str  # the job of tinker-lint's side
    peer: str  # the job of the other side
    peer_name: str
    limit: float | None  # the CPU ratio to meet; None: shown, no target
    memory: int | None = None  # MB, tinker-lint's peak to stay under
    target: str = ""  # printed; default "<= {limit}x"


ROWS = [
    Row("stdlib", "CPython stdlib, cold", "stdlib:tl", "stdlib:ruff", "ruff ALL concise", 1.2, 150),
    Row(
        "cookbook", "cookbook 0.6.1, cold", "cookbook:tl", "cookbook:bugbear", "flake8+bugbear", 0.4
    ),
    Row("dense", "Tinker-dense, cold", "dense:tl", "dense:bugbear", "flake8+bugbear", 0.6),
    Row(
        "plugin",
        "flake8 plugin, rl/train.py",
        "plugin:tl",
        "plugin:bugbear",
        "flake8+bugbear, rl/train.py",
        1.2,
    ),
    Row("startup", "start-up, one tiny file", "startup:tl", "startup:flake8", "flake8", 1.5),
    Row(
        "startup", "start-up, one tiny file", "startup:tl", "startup:ruff", "ruff ALL concise", None
    ),
    Row(
        "server",
        "server, an edit of rl/train.py",
        "server:tl",
        "server:ruff",
        "ruff server ALL",
        2.0,
    ),
    Row(
        "cookbook-ruff",
        "cookbook 0.6.1, cold",
        "cookbook:tl",
        "cookbook:ruff",
        "ruff ALL concise",
        11.0,
        target="<= 11x (half of 22x)",
    ),
    Row(
        "dense-ruff",
        "Tinker-dense, cold",
        "dense:tl",
        "dense:ruff",
        "ruff ALL concise",
        18.0,
        target="<= 18x (half of 36x)",
    ),
]
ROW_NAMES = list(dict.fromkeys(row.key for row in ROWS))
# The order the groups run in, cheap first; a group's tools take turns within its rounds.
GROUPS = ["startup", "plugin", "cookbook", "dense", "stdlib", "server"]


# ------------------------------------------------------------------------------------------
# The jobs
# ------------------------------------------------------------------------------------------
@dataclass
class Server:
    """A language server: ``command`` None is this checkout's ``tinker-lint server``."""

    command: list[str] | None
    options: dict[str, Any] | None = None


@dataclass
class Places:
    stdlib: str
    dense: str | None
    cookbook: Path | None  # the package folder (``.../tinker_cookbook``)
    tiny: str


def jobs(places: Places, python: str, notes: list[str]) -> dict[str, run.Tool | Server]:
    """Every job this machine can run, by name (``GROUP:SIDE``); a missing tool or corpus leaves
    its jobs out, with a note."""

    def lint(target: str) -> list[str]:
        argv = [python, "-m", "tinker_lint", "--isolated", "--exit-zero", "--no-cache"]
        return [*argv, "--output-format", "concise", target]

    def flake8(plugins: str, target: str) -> list[str]:
        return [python, str(run.FLAKE8_WITH), plugins, "--", *run.flake8_arguments(target)]

    found: dict[str, run.Tool | Server] = {}
    targets = {"stdlib": places.stdlib, "startup": places.tiny}
    if places.dense is not None:
        targets["dense"] = places.dense
    if places.cookbook is not None:
        targets["cookbook"] = str(places.cookbook)
        targets["plugin"] = str(places.cookbook / TRAIN)
    for group, target in targets.items():
        if group != "plugin":
            found[f"{group}:tl"] = run.Tool(f"tinker-lint ({group})", lint(target))
    ruff = run._ruff()
    if ruff is None:
        notes.append("ruff not found: its rows are skipped")
    else:
        for group in ("stdlib", "cookbook", "dense", "startup"):
            if group in targets:
                argv = [ruff, "check", "--isolated", "--select", "ALL", "--no-cache"]
                argv += ["--exit-zero", "--quiet", "--output-format", "concise", targets[group]]
                found[f"{group}:ruff"] = run.Tool(f"ruff ({group})", argv)
        found["server:ruff"] = Server(
            [ruff, "server"],
            # Its settings from the editor alone (as --isolated): every rule.
            {"settings": {"configurationPreference": "editorOnly", "lint": {"select": ["ALL"]}}},
        )
    version = run._flake8_plugins(python)
    if version is None:
        notes.append("flake8 not installed: its rows are skipped")
    else:
        found["startup:flake8"] = run.Tool("flake8 (startup)", flake8("", places.tiny))
        if "plugin" in targets:
            found["plugin:tl"] = run.Tool(
                "flake8+tinker-lint", flake8("tinker-lint", targets["plugin"])
            )
        if "flake8-bugbear" in version:
            for group in ("cookbook", "dense", "plugin"):
                if group in targets:
                    name = f"flake8+bugbear ({group})"
                    found[f"{group}:bugbear"] = run.Tool(name, flake8("bugbear", targets[group]))
        else:
            notes.append(
                "flake8-bugbear not installed (pip install flake8-bugbear): its rows are skipped"
            )
    if importlib.util.find_spec("pygls") is None:
        notes.append("pygls not installed (the server extra): the server row is skipped")
    elif places.cookbook is not None:
        found["server:tl"] = Server(None)
    return found


# ------------------------------------------------------------------------------------------
# Language servers: bench/server_latency.py's edits and timing, one fresh server per session
# ------------------------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    """A live process's CPU time so far (user + system, all its threads and waited children)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rpartition(")")[2].split()
    # After the command's ")": state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def _session(
    server: Server, cookbook: Path, texts: list[str], sample: bool
) -> tuple[list[float], float, int, int]:
    """One server: start it, open ``rl/train.py`` and wait for its diagnostics, make 3 warm-up
    edits, then time the rest. The edits' wall times, the server's CPU per timed edit, and (when
    sampled) its tree's peak PSS and RSS."""
    from bench import server_latency  # the LSP client and the edits, only for this row
    from tests.lsp_client import LspClient

    root = cookbook.parent  # the unpacked wheel, as server_latency.py opens it
    path = cookbook / TRAIN
    client = LspClient(cwd=root, command=server.command)
    sampler = run._TreeSampler()
    try:
        if sample:
            sampler.start(client.process.pid)
        client.initialize(root, options=server.options)
        opened = client.open(path, path.read_text(encoding="utf-8"))
        client.diagnostics(path, after=opened, version=1, timeout=300)
        server_latency._timed_edits(client, path, texts[:3], 2)  # warm-up
        time.sleep(PAUSE)
        before = _cpu_seconds(client.process.pid)
        times = server_latency._timed_edits(client, path, texts[3:], 5)
        time.sleep(PAUSE)  # its collection after the last edit counts too
        cpu = (_cpu_seconds(client.process.pid) - before) / len(times)
        sampler.stop()
        client.stop()
    finally:
        sampler.stop()
        client.kill()
    return times, cpu, sampler.peak_pss, sampler.peak_rss


def measure_servers(
    named: list[tuple[str, Server]], cookbook: Path, runs: int, edits: int
) -> list[run.Result]:
    """As ``run.measure``: one session sampled for memory (also a warm-up), then ``runs`` rounds
    in which the servers take turns. ``wall``: every timed edit's latency; ``cpu``: each round's
    CPU per edit."""
    from bench import server_latency

    text = (cookbook / TRAIN).read_text(encoding="utf-8")
    texts = server_latency._edits(text, "bodies", edits)
    results = [run.Result(run.Tool(name, server.command or [])) for name, server in named]
    servers = dict(named)
    for result in results:
        try:
            _, _, result.tree_pss, result.tree_rss = _session(
                servers[result.tool.name], cookbook, texts, True
            )
        except (AssertionError, OSError) as error:
            result.failed = str(error)[:300]
    for round_ in range(runs):
        for result in results if round_ % 2 == 0 else reversed(results):
            if result.failed:
                continue
            try:
                times, cpu, _, _ = _session(servers[result.tool.name], cookbook, texts, False)
            except (AssertionError, OSError) as error:
                result.failed = str(error)[:300]
                result.wall.clear()
                continue
            result.wall.extend(times)
            result.cpu.append(cpu)
        sys.stderr.write(f"\rserver: round {round_ + 1}/{runs}")
    sys.stderr.write("\n")
    return results


# ------------------------------------------------------------------------------------------
# The table
# ------------------------------------------------------------------------------------------
def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def verdict(row: Row, ours: run.Result, theirs: run.Result) -> tuple[str, str]:
    """(the CPU ratio, PASS / FAIL / what failed / "-" for a row with no target)."""
    mine, peer = statistics.median(ours.cpu), statistics.median(theirs.cpu)
    if peer <= 0:
        return "n/a", "not measured"
    value = mine / peer
    ratio = f"{value:.2f}x" if value < 10 else f"{value:.1f}x"
    if row.limit is None:
        return ratio, "-"
    failed = []
    if value > row.limit:
        failed.append("CPU")
    if row.memory is not None and (ours.tree_pss or ours.max_rss) > row.memory * MB:
        failed.append("memory")
    if not failed:
        return ratio, "PASS"
    return ratio, "FAIL" if row.memory is None or len(failed) == 2 else f"FAIL ({failed[0]})"


def target(row: Row) -> str:
    if row.target:
        return row.target
    if row.limit is None:
        return "(shown)"
    text = f"<= {row.limit:.2f}x"
    return text if row.memory is None else f"{text}, <= {row.memory} MB"


HEADER = [
    "row",
    "work",
    "tinker-lint wall",
    "tinker-lint CPU",
    "against",
    "its wall",
    "its CPU",
    "CPU ratio",
    "tinker-lint peak",
    "its peak",
    "target",
    "verdict",
]


def _peak(result: run.Result) -> str:
    return f"{result.tree_pss / MB:.0f} MB" if result.tree_pss else f"{result.max_rss / MB:.0f} MB*"


def table_rows(rows: list[Row], results: dict[str, run.Result]) -> list[list[str]]:
    """The table's rows; a row whose jobs did not run (``results`` has none) is skipped."""
    out = []
    for row in rows:
        ours, theirs = results.get(row.ours), results.get(row.peer)
        head = [row.key, row.work]
        if ours is None or theirs is None or not ours.wall or not theirs.wall:
            failed = next((r.failed for r in (ours, theirs) if r is not None and r.failed), "")
            why = f"failed: {failed[:80]}" if failed else "skipped (see the notes)"
            out.append([*head, "-", "-", row.peer_name, "-", "-", "-", "-", "-", target(row), why])
            continue
        ratio, passed = verdict(row, ours, theirs)
        out.append(
            [
                *head,
                seconds(statistics.median(ours.wall)),
                seconds(statistics.median(ours.cpu)),
                row.peer_name,
                seconds(statistics.median(theirs.wall)),
                seconds(statistics.median(theirs.cpu)),
                ratio,
                _peak(ours),
                _peak(theirs),
                target(row),
                passed,
            ]
        )
    return out


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------
def _rows_argument(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ROW_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown row {', '.join(unknown) or '(none)'}: choose from {', '.join(ROW_NAMES)}"
        )
    return names


def _checkout() -> str:
    try:
        done = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=10"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return done.stdout.strip()


def _steal() -> int | None:
    """The machine's CPU steal ticks so far (``/proc/stat``): a neighbour's share of this host."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            return int(handle.readline().split()[8])
    except (OSError, IndexError, ValueError):
        return None


def _plural(count: int, what: str) -> str:
    return f"{count:,} {what}{'' if count == 1 else 's'}"


def _files(path: str) -> int:
    from tinker_lint.io.files import discover

    return sum(isinstance(item, str) for item in discover([path]))


def measure_all(
    rows: list[Row], available: dict[str, run.Tool | Server], cookbook: Path | None, args: Any
) -> dict[str, run.Result]:
    """The jobs of ``rows`` that can run, group by group (``GROUPS``), by job name."""
    wanted = {job for row in rows for job in (row.ours, row.peer)} & available.keys()
    results: dict[str, run.Result] = {}
    for group in GROUPS:
        names = sorted(job for job in wanted if job.startswith(f"{group}:"))
        servers = [(n, job) for n in names if isinstance(job := available[n], Server)]
        tools = [(n, job) for n in names if isinstance(job := available[n], run.Tool)]
        if servers and cookbook is not None:
            found = measure_servers(servers, cookbook, args.runs, args.edits)
            results.update(zip((n for n, _ in servers), found, strict=True))
        if tools:
            found = run.measure([tool for _, tool in tools], args.runs, group)
            results.update(zip((n for n, _ in tools), found, strict=True))
    return results


# The corpus each row reads (the start-up row's file is made by the run).
CORPUS = {
    "stdlib": "stdlib",
    "cookbook": "cookbook",
    "cookbook-ruff": "cookbook",
    "plugin": "cookbook",
    "server": "cookbook",
    "dense": "dense",
    "dense-ruff": "dense",
}


def main(argv: list[str] | None = None) -> int:
    paragraphs = (__doc__ or "").split("\n\n")
    parser = argparse.ArgumentParser(
        description=paragraphs[0],
        epilog="\n\n".join(paragraphs[2:]),  # the rows and the method, not the usage
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", "-n", type=int, default=3, help="timed rounds per row (3)")
    parser.add_argument(
        "--dense", type=Path, help="the Tinker-dense files (ecosystem.py materialise DIR --dense)"
    )
    parser.add_argument(
        "--cookbook", type=Path, help="an unpacked cookbook wheel (default: 0.6.1, downloaded once)"
    )
    parser.add_argument(
        "--rows",
        type=_rows_argument,
        default=ROW_NAMES,
        help=f"the rows to measure, comma-separated (default: all: {','.join(ROW_NAMES)})",
    )
    parser.add_argument("--edits", type=int, default=20, help="timed edits per server session")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.edits < 1:
        parser.error("--runs and --edits take a positive number")
    if args.dense is not None and not args.dense.is_dir():
        parser.error(f"{args.dense}: not a directory")
    started, steal = time.perf_counter(), _steal()
    python = sys.executable
    notes: list[str] = []
    run._compile_checkout(python, notes)
    rows = [row for row in ROWS if row.key in args.rows]
    read = {CORPUS[row.key] for row in rows if row.key in CORPUS}
    cookbook = None
    if "cookbook" in read:
        try:
            cookbook = cookbook_package(args.cookbook)
        except DownloadError as error:
            notes.append(f"no cookbook (give --cookbook DIR): its rows are skipped; {error}")
    if "dense" in read and args.dense is None:
        notes.append(
            "no --dense DIR: the dense rows are skipped (python3 bench/ecosystem.py materialise "
            "DIR --dense --mirrors MIRRORS makes it)"
        )
    with tempfile.TemporaryDirectory(prefix="tinker-lint-table-") as tiny:
        Path(tiny, "tiny.py").write_text(TINY, encoding="utf-8")
        places = Places(
            stdlib=sysconfig.get_paths()["stdlib"],
            dense=None if args.dense is None else str(args.dense),
            cookbook=cookbook,
            tiny=tiny,
        )
        results = measure_all(rows, jobs(places, python, notes), cookbook, args)
    corpora = {"stdlib": places.stdlib, "cookbook": cookbook, "dense": places.dense}
    sizes = [
        f"corpus: {name}: {path} ({_plural(_files(str(path)), 'Python file')})"
        for name, path in corpora.items()
        if name in read and path is not None
    ]
    elapsed, steal_after = time.perf_counter() - started, _steal()
    machine = [*run.machine(), *run._versions(python), ("checkout", _checkout())]
    if steal is not None and steal_after is not None:
        machine.append(("CPU steal during the run", f"{steal_after - steal} ticks (/proc/stat)"))
    machine.append(("took", f"{elapsed:.0f} s" if elapsed < 120 else f"{elapsed / 60:.1f} min"))
    notes += _method_notes(args.runs, args.edits, any(row.key == "server" for row in rows))
    out = [
        run.table(["machine", ""], [list(pair) for pair in machine], args.markdown),
        "",
        f"{'### ' if args.markdown else ''}Issue 30's table (runs: {args.runs})",
        "",
        run.table(HEADER, table_rows(rows, results), args.markdown),
        "",
        *sizes,
        *(f"note: {note}" for note in dict.fromkeys(notes)),
    ]
    print("\n".join(out))
    return 0


def _method_notes(runs: int, edits: int, server: bool) -> list[str]:
    notes = [
        f"wall and CPU: medians of {runs} runs, each a fresh process; CPU is user + system of "
        "the process and its children (wait4); the ratio is tinker-lint's CPU over the other's",
        "peak: the process tree's PSS, sampled every 10 ms in one extra run (*: the largest "
        "process's RSS from wait4, when the run ended before the first sample or /proc has no PSS)",
    ]
    if server:
        notes.append(
            f"server: {runs} sessions of each server (a fresh process, rl/train.py opened, 3 "
            f"warm-up edits, then {edits} timed: server_latency.py's edits, --where bodies); "
            "wall: the median didChange -> publishDiagnostics over every timed edit; CPU: the "
            f"server's CPU time over the timed edits and {PAUSE} s after, per edit, median "
            "over sessions; peak: one more session, sampled"
        )
    return notes


if __name__ == "__main__":
    raise SystemExit(main())
