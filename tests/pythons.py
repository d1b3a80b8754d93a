"""The newest CPython on this machine, newer than the one running the tests: the watchdog's
scenarios run under it too (tests/test_watchdog.py). CI's machine is of the same kind as this
one: pyenv's interpreters in ``$PYENV_ROOT/versions`` (3.12.1 and 3.13.0 here), or a
``python3.1N`` on ``PATH``."""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Its version, implementation and whether its GIL is on (free-threaded builds: off), as JSON.
_PROBE = (
    "import json, platform, sys, sysconfig; print(json.dumps([list(sys.version_info[:3]), "
    "platform.python_implementation(), not sysconfig.get_config_var('Py_GIL_DISABLED')]))"
)


def _claimed(path: str) -> tuple[int, ...]:
    """The version a candidate's path claims (``versions/3.13.0/bin``, ``python3.13``), to try
    the newest first; the interpreter itself is asked before it is used."""
    match = re.search(r"/versions/3\.(\d+)(?:\.(\d+))?[^/]*/bin/python3$", path) or re.search(
        r"python3\.(\d+)()$", path
    )
    return (3, int(match[1]), int(match[2] or 0)) if match else (0,)


def _candidates() -> list[str]:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(glob.glob(str(pyenv / "versions" / "3.*" / "bin" / "python3")))
    for minor in range(12, 20):
        on_path = shutil.which(f"python3.{minor}")
        if on_path is not None:
            found.append(on_path)
    # Newest claimed first; among equals, pyenv's own binaries (found first) before PATH's shims.
    return sorted(found, key=_claimed, reverse=True)


@functools.cache
def newest_cpython() -> tuple[str, str] | None:
    """(path, version) of the newest CPython with a GIL newer than the running one, else None.
    A candidate that does not run (a pyenv shim of a version not selected) is passed over."""
    for path in _candidates():
        if _claimed(path) <= sys.version_info[:3]:
            break  # the rest claim no newer version
        try:
            done = subprocess.run(
                [path, "-c", _PROBE], capture_output=True, text=True, timeout=20, check=False
            )
            version, implementation, gil = json.loads(done.stdout)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            continue
        # Free-threaded builds have no GIL to hold: the hog scenarios mean something else there.
        if done.returncode != 0 or implementation != "CPython" or not gil:
            continue
        if tuple(version) > sys.version_info[:3]:
            return path, ".".join(map(str, version))
    return None
