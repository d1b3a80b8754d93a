"""``python -m tinker_lint.watch`` runs the program as ``python`` would (issue 29): ``python -m``
put the working directory first on ``sys.path``, so a ``json.py`` there was imported in place of
the standard library's (by the watchdog, and by the script), where ``python s.py`` puts the script's
folder first. Each run here is compared with the bare ``python`` one: ``sys.path[0]``,
``sys.argv``, ``__file__``, which ``json`` is imported, and the frames above the program's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.checkout import checkout_env

# What the program reports of how it was run, on one line of stdout (``json``: the one it got).
REPORT = """\
import inspect, sys
import json
import helper
print("REPORT", json.dumps({
    "argv": sys.argv,
    "path0": sys.path[0],
    "file": __file__,
    "name": __name__,
    "main": sys.modules["__main__"].__dict__ is globals(),
    "json": json.__file__,
    "helper": helper.__file__,
    "frames": len(inspect.stack()),
}))
"""


def _run(cwd: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env={**checkout_env(), "TINKER_LINT_WATCHDOG_OUT": str(cwd / "events.jsonl")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    return dict(json.loads(line[len("REPORT ") :]))


def test_a_script_runs_as_python_runs_it(tmp_path: Path) -> None:
    # In the working directory, a json.py that must not be imported; the script in a folder.
    (tmp_path / "json.py").write_text('raise ImportError("the working directory\'s json.py")\n')
    (tmp_path / "helper.py").write_text("WHERE = 'the working directory'\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "s.py").write_text(REPORT)
    (sub / "helper.py").write_text("WHERE = 'the script folder'\n")
    bare = _run(tmp_path, "sub/s.py", "a", "--b")
    watched = _run(tmp_path, "-m", "tinker_lint.watch", "sub/s.py", "a", "--b")
    assert bare["argv"] == ["sub/s.py", "a", "--b"]
    assert bare["path0"] == str(sub)
    assert bare["json"].startswith(sys.base_prefix)  # the standard library's
    for key in ("argv", "path0", "file", "name", "main", "json", "helper"):
        assert watched[key] == bare[key], key
    # Above the script's frame: only this module's top level and python -m's two runpy frames.
    assert watched["frames"] <= bare["frames"] + 3


def test_a_module_runs_as_python_m_runs_it(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(REPORT)
    (tmp_path / "helper.py").write_text("WHERE = 'the working directory'\n")
    bare = _run(tmp_path, "-m", "pkg.mod", "x")
    watched = _run(tmp_path, "-m", "tinker_lint.watch", "-m", "pkg.mod", "x")
    assert bare["path0"] == str(tmp_path)
    assert bare["argv"] == [str(package / "mod.py"), "x"]
    for key in ("argv", "path0", "file", "name", "main", "json", "helper"):
        assert watched[key] == bare[key], key
    assert watched["frames"] <= bare["frames"] + 1  # this module's top level
