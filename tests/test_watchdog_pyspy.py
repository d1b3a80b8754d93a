"""The watchdog's optional ``py-spy dump`` on a stall (``TINKER_LINT_WATCHDOG_PYSPY=1``): its
output parsed as py-spy 0.4 writes it, and the real py-spy run on a pure-Python hog, when it is
installed and may ptrace (root, or ``CAP_SYS_PTRACE``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_watchdog import marker_line, run, stall_ends
from tinker_lint.runtime.watchdog import pyspy_holder

# What py-spy 0.4.3 printed here for tests/watchdog_scenarios.py py_loop (trimmed): each thread is
# named by its OS thread id, in decimal.
DUMP_0_4 = """\
Process 8069: /usr/bin/python3 -m tests.watchdog_scenarios py_loop
Python v3.11.7 (/usr/bin/python3.11)

Thread {main} (active+gil): "MainThread"
    compute_metrics (tests/watchdog_scenarios.py:69)
    py_loop_main (tests/watchdog_scenarios.py:76)
Thread 8071 (idle): "tinker-lint-watchdog"
    Watchdog._run (tinker_lint/runtime/watchdog.py:295)
"""


def test_the_gil_holder_in_a_py_spy_0_4_dump_is_found_by_its_os_thread_id():
    main = threading.main_thread()
    assert main.native_id is not None
    assert pyspy_holder(DUMP_0_4.format(main=main.native_id)) == main.ident
    # Not a thread of this process: no holder, rather than a made-up ident.
    assert pyspy_holder(DUMP_0_4.format(main=2**31 - 1)) is None
    # Older releases wrote the pthread id in hex: that is the ident.
    assert pyspy_holder('Thread 0x7F5C8DDF6740 (active+gil): "MainThread"') == 0x7F5C8DDF6740
    assert pyspy_holder(DUMP_0_4.replace("active+gil", "active").format(main=1)) is None


def _py_spy() -> str | None:
    """py-spy on PATH, or installed beside this interpreter (``pip install py-spy``)."""
    beside = Path(sys.executable).with_name("py-spy")
    return shutil.which("py-spy") or (str(beside) if beside.exists() else None)


@pytest.mark.slow
def test_the_real_py_spy_dump_names_the_hog_s_line(tmp_path):
    exe = _py_spy()
    if exe is None:
        pytest.skip("py-spy is not installed (pip install py-spy)")
    # Can it read a process here? ptrace may be refused (containers without CAP_SYS_PTRACE).
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as sleeper:
        try:
            time.sleep(0.5)
            probe = subprocess.run(
                [exe, "dump", "--pid", str(sleeper.pid)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        finally:
            sleeper.kill()
    if probe.returncode != 0:
        pytest.skip(
            f"py-spy cannot read a process here: {probe.stdout[-300:]}{probe.stderr[-300:]}"
        )
    path = f"{Path(exe).parent}{os.pathsep}{os.environ['PATH']}"
    done, evs = run(
        tmp_path,
        "-m",
        "tests.watchdog_scenarios",
        "py_loop",
        env={"PATH": path, "TINKER_LINT_WATCHDOG_PYSPY": "1", "TINKER_LINT_WATCHDOG_BACKSTOP": "0"},
    )
    line = marker_line("PY_LOOP")
    (end,) = stall_ends(evs)
    assert (end["args"]["label"], end["args"]["line"]["line"]) == ("loop_blocked_cpu", line)
    dump = end["args"]["pyspy"]
    # Taken when the stall opened, while the loop ran: the main thread is at the hog's line, under
    # the coroutine that awaited it. Its state is py-spy's view of that instant: "active+gil", or
    # "active" while the watchdog thread samples, or "idle" while the OS has it off the CPU (seen
    # next to two busy loops).
    holder = re.search(r'^Thread (\d+) \([a-z+]+\): "MainThread"\n((?:    .*\n)+)', dump, re.M)
    assert holder is not None, dump
    frames = holder[2].splitlines()
    # One instant of the two-line loop: its ``while`` (the marker) or its body, the next line.
    assert frames[0].strip() in {
        f"compute_metrics (tests/watchdog_scenarios.py:{n})" for n in (line, line + 1)
    }
    assert frames[1].strip().startswith("py_loop_main (tests/watchdog_scenarios.py:")
    assert int(holder[1]) == end["pid"]  # the main thread's OS id is the process id
    assert "[py-spy dump, " in done.stderr
