"""The newest CPython on this machine, newer than the one running the tests: the watchdog's
scenarios run under it too (tests/test_watchdog.py). CI's machine is of the same kind as this
one: pyenv's interpreters in ``$PYENV_ROOT/versions`` (3.12.1 and 3.13.0 here), or a
``python3.1N`` on ``PATH``."""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Its version, implementation and whether its GIL is on (free-threaded builds: off), as JSON.
_PROBE = (
    "import json, platform, sys, sysconfig; print(json.dumps([list(sys.version_info[:3]), "
    "platform.python_implementation(), not sysconfig.get_config_var('Py_GIL_DISABLED')]))"
)


def _candidates() -> list[str]:
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(glob.glob(str(pyenv / "versions" / "3.*" / "bin" / "python3")))
    for minor in range(12, 20):
        on_path = shutil.which(f"python3.{minor}")
        if on_path is not None:
            found.append(on_path)
    return found


@functools.cache
def newest_cpython() -> tuple[str, str] | None:
    """(path, version) of the newest CPython with a GIL newer than the running one, else None.
    A candidate that does not run (a pyenv shim of a version not selected) is passed over."""
    best: tuple[tuple[int, ...], str] | None = None
    for path in _candidates():
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
        key = tuple(version)
        if key > sys.version_info[:3] and (best is None or key > best[0]):
            best = (key, path)
    if best is None:
        return None
    return best[1], ".".join(map(str, best[0]))
