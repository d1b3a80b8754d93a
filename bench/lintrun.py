"""What the corpus scripts of bench/ share: running tinker-lint of a checkout over a project
directory, its JSON findings, and a temporary worktree of another revision.

A module beside the scripts (`ecosystem.py`, `torch_score.py`), imported with bench/ on the path;
it runs tinker-lint in a subprocess, so the corpus code is never imported.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, order=True)
class Finding:
    path: str  # relative to the project directory
    line: int
    column: int
    code: str
    message: str

    def show(self) -> str:
        return f"{self.code} {self.path}:{self.line}:{self.column} {self.message}"


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A detached worktree of this checkout at `ref`, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="tinker-lint-bench-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(CHECKOUT), "worktree", "add", "--detach", "--quiet", str(tree), ref],
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(CHECKOUT), "worktree", "remove", "--force", str(tree)],
                check=False,
            )


def lint(tree: Path, project_dir: Path, args: list[str]) -> tuple[list[Finding] | None, str]:
    """`python3 -m tinker_lint --output-format json --no-cache ARGS...` of the checkout `tree`, run
    in `project_dir`: its findings (paths relative to `project_dir`) and an error text, or None and
    the command's own error (exit 2: the caller decides what it means)."""
    done = subprocess.run(
        [sys.executable, "-m", "tinker_lint", "--output-format", "json", "--no-cache", *args],
        capture_output=True,
        text=True,
        # No bytecode written: `tree` may be another engineer's checkout, read only.
        env=dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1"),
        cwd=project_dir,
        check=False,
    )
    try:
        records = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return None, f"exit {done.returncode}: {done.stderr.strip() or done.stdout[:500]}"
    # Exit status 1 means "findings"; anything else is a failure worth showing.
    error = "" if done.returncode in (0, 1) else f"exit {done.returncode}: {done.stderr.strip()}"
    return [to_finding(r, project_dir) for r in records], error


def to_finding(record: dict[str, object], project_dir: Path) -> Finding:
    path = Path(str(record.get("filename") or record.get("path") or ""))
    if path.is_absolute():
        with contextlib.suppress(ValueError):
            path = path.relative_to(project_dir)
    location = record.get("location")
    if isinstance(location, dict):
        line, column = location.get("row", 0), location.get("column", 0)
    else:
        line, column = record.get("line", 0), record.get("column", 0)
    return Finding(
        path=path.as_posix(),
        line=int(str(line)),
        column=int(str(column)),
        code=str(record.get("code", "")),
        message=str(record.get("message", "")),
    )


def stale_labels(labels: Iterable[tuple[str, Path, int, str]]) -> list[str]:
    """Of labels given as (where, file, line, text), those whose line in the materialised corpus
    does not hold their `text` (another version of the file, or a typo in the label)."""
    problems = []
    lines_of: dict[Path, list[str]] = {}
    for where, file, line, text in labels:
        if file not in lines_of:
            lines_of[file] = file.read_text(encoding="utf-8").splitlines() if file.is_file() else []
        lines = lines_of[file]
        if line > len(lines):
            problems.append(f"{where}: no such line in {file}")
        elif text not in lines[line - 1]:
            problems.append(f"{where}: expected {text!r}, found {lines[line - 1].strip()!r}")
    return problems
