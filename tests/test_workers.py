"""A run's worker processes end with the run: ``kill -9`` of tinker-lint (an editor or a CI job
cancelling it) must not leave them waiting for work for good (issue 13, item 4).

The run here is the real CLI with the real process pool; only each file's work is replaced by a
long sleep (inherited by the forked workers), so that the workers are certainly alive and busy
when the parent is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; the pool forks on Linux only"
)

RUN = textwrap.dedent(
    """
    import sys, time
    from tinker_lint.run import runner

    runner.MIN_FILES_FOR_PROCESSES = 2
    runner.MIN_BYTES_FOR_PROCESSES = 1
    runner._PDEATHSIG = sys.argv[2] == "prctl"  # "poll": only the portable fallback

    def busy(job, settings, fix):
        time.sleep(120)

    runner._work = busy
    from tinker_lint.cli import main

    sys.exit(main([sys.argv[1], "--no-cache", "--jobs", "2"]))
    """
)


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after it.
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.parametrize("how", ["prctl", "poll"])
@pytest.mark.slow
def test_workers_end_when_the_run_is_killed(tmp_path, how):
    for i in range(8):
        (tmp_path / f"m{i}.py").write_text(f"import tinker\nVALUE = {i}\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    parent = subprocess.Popen(
        [sys.executable, "-c", RUN, str(tmp_path), how],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:
        assert _wait_for(lambda: len(workers.update(_children(parent.pid)) or workers) >= 2, 30)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        # prctl: at once; the polling thread: within a second or two.
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10), (
            f"workers {sorted(w for w in workers if _alive(w))} outlived the run"
        )
    finally:
        parent.kill()
        for worker in workers:
            if _alive(worker):
                os.kill(worker, signal.SIGKILL)
