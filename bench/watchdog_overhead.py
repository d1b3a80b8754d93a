"""What the GIL-stall watchdog (tinker_lint.runtime) costs: CPU seconds of a process running a
fixed workload without and with it, at a 100 ms and a 10 ms interval, backstop on and off.

    python3 bench/watchdog_overhead.py                 # 3 interleaved rounds, about a minute
    python3 bench/watchdog_overhead.py --repeats 5 --calls 3000000

The workload (a child process per run): a call-heavy main thread making ``--calls`` Python calls,
plus an asyncio loop thread that wakes every 10 ms (a client's SDK loop). Each run prints the
process's CPU seconds (user + system), its wall time, and the watchdog thread's own CPU time
(``/proc/self/task/<tid>/schedstat``, nanoseconds, Linux): on a shared machine the process totals
are noisy, the thread's own time is not. The table gives medians over the rounds and the watchdog's
CPU as a share of one core over the run (docs/watchdog.md, "Overhead").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFIGS = {
    "bare": None,
    "100 ms, no backstop": {"interval": 0.1, "backstop": 0.0},
    "100 ms + backstop": {"interval": 0.1, "backstop": 1.0},
    "10 ms + backstop": {"interval": 0.01, "backstop": 1.0},
}


def thread_cpu_s(native_id: int) -> float:
    """A thread's time on CPU (Linux schedstat: ns on CPU, ns waiting, slices)."""
    try:
        with open(f"/proc/self/task/{native_id}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except OSError:
        return float("nan")


def work(calls: int) -> int:
    def leaf(x: int) -> int:
        return x + 1

    total = 0
    for i in range(calls):
        total = leaf(total) ^ (i & 7)
    return total


def child(config: str, calls: int) -> None:
    options = CONFIGS[config]
    dog = None
    if options is not None:
        sys.path.insert(0, str(ROOT))
        import tinker_lint.runtime

        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"wd_overhead_{os.getpid()}.jsonl")
        dog = tinker_lint.runtime.watch(**options, out=out, summary=False)
    loop = asyncio.new_event_loop()

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(0.01)

    task = loop.create_task(heartbeat())  # kept: the loop holds tasks weakly
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    time.sleep(0.2)  # the loop registered and ticking
    cpu0, wall0 = os.times(), time.perf_counter()
    dog_thread = dog._thread if dog is not None else None
    dog0 = thread_cpu_s(dog_thread.native_id) if dog_thread and dog_thread.native_id else 0.0
    work(calls)
    wall = time.perf_counter() - wall0
    cpu1 = os.times()
    dog1 = thread_cpu_s(dog_thread.native_id) if dog_thread and dog_thread.native_id else 0.0
    stalls = len(dog.stalls) if dog is not None else 0
    loop.call_soon_threadsafe(task.cancel)
    if dog is not None:
        tinker_lint.runtime.stop()
        os.unlink(out)
    print(
        json.dumps(
            {
                "cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system),
                "wall_s": wall,
                "watchdog_cpu_s": dog1 - dog0,
                "stalls": stalls,
            }
        )
    )


def micro() -> dict[str, float]:
    """CPU microseconds (this thread's) of one quiet cycle (a tick posted to a live loop, its lag
    recorded), one backstop re-arm, one sleep and wake-up: the floor under the table's figures."""
    import faulthandler
    import tempfile

    sys.path.insert(0, str(ROOT))
    from tinker_lint.runtime.options import Options
    from tinker_lint.runtime.watchdog import Watchdog

    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as dump:
        dog = Watchdog(Options(out=os.path.join(tmp, "unused.jsonl"), threshold=5.0))
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        dog.register(loop, thread)

        def per_call(fn: Callable[[], object], n: int) -> float:
            best = float("inf")
            for _ in range(5):
                t0 = time.thread_time()
                for _ in range(n):
                    fn()
                best = min(best, (time.thread_time() - t0) / n * 1e6)
            return best

        def one_cycle() -> None:
            dog.cycle(time.perf_counter())
            time.sleep(0)  # the loop thread runs the tick

        result = {
            "cycle_us": per_call(one_cycle, 1000),
            "rearm_us": per_call(lambda: faulthandler.dump_traceback_later(1.0, file=dump), 200),
            "sleep_wake_us": per_call(lambda: time.sleep(0.0001), 500),
        }
        faulthandler.cancel_dump_traceback_later()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument("--calls", type=int, default=10_000_000, help="calls in the workload (10M)")
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls)
        return 0
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in CONFIGS}
    for _ in range(args.repeats):
        for name in CONFIGS:  # interleaved, so machine load falls on every config alike
            done = subprocess.run(
                [sys.executable, __file__, "--child", name, "--calls", str(args.calls)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[name].append(json.loads(done.stdout))
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.repeats} rounds, "
        f"{args.calls} calls"
    )
    bare_cpu = statistics.median(r["cpu_s"] for r in runs["bare"])
    print(
        f"{'config':<22} {'process CPU s':>13} {'vs bare':>8} {'wall s':>7} "
        f"{'watchdog CPU ms':>15} {'of a core':>9} {'stalls':>6}"
    )
    for name, rs in runs.items():
        cpu = statistics.median(r["cpu_s"] for r in rs)
        wall = statistics.median(r["wall_s"] for r in rs)
        dog = statistics.median(r["watchdog_cpu_s"] for r in rs)
        share = statistics.median(r["watchdog_cpu_s"] / r["wall_s"] for r in rs)
        stalls = sum(int(r["stalls"]) for r in rs)
        print(
            f"{name:<22} {cpu:>13.3f} {cpu / bare_cpu:>8.3f} {wall:>7.3f} "
            f"{dog * 1e3:>15.2f} {share * 100:>8.3f}% {stalls:>6}"
        )
    costs = micro()
    print(
        f"one quiet cycle {costs['cycle_us']:.1f} us, one backstop re-arm {costs['rearm_us']:.1f} us, "
        f"one sleep and wake-up {costs['sleep_wake_us']:.1f} us (this thread's CPU, best of 5)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
