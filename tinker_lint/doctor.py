"""``tinker-lint doctor``: the known-bad versions table (TNK301-TNK303) applied to an installed
environment, with the versions of everything a Tinker slowness triage asks about first.

Versions come from distribution metadata (``importlib.metadata``); nothing is imported. By default the
environment is the one running tinker-lint; ``--python PATH`` reads another interpreter's, by running
``tinker_lint/deps/probe.py`` (standard library only) in it with ``-I -S``: its ``.pth`` files are
read for the directories they list, never run. TNK303 depends on the project's code: with
PATHs, their Python files are scanned for a Qwen VL model; without, transformers<5 is a warning.

Exit codes: 0 nothing wrong, 1 a known-bad version (or no tinker), 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.version import Version

from tinker_lint.deps import probe
from tinker_lint.deps.known_bad import KNOWN_BAD, KnownBad
from tinker_lint.deps.lint import QwenVlUse, find_qwen_vl
from tinker_lint.deps.probe import Snapshot
from tinker_lint.io.files import Skipped, discover
from tinker_lint.versions import NEWEST_KNOWN_TINKER

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
PACKAGES = ("tinker", "tinker-cookbook", "pydantic", "torch", "numpy", "transformers")


@dataclass(frozen=True)
class Row:
    component: str
    version: str
    verdict: str  # "ok", "not installed", "outdated", "warning", or a rule code
    fix: str = ""
    detail: str = ""  # why, printed under the table
    problem: bool = False


class ProbeError(Exception):
    pass


def snapshot(python: str | None = None) -> Snapshot:
    """``{"python": ..., "executable": ..., "versions": {name: version or None}}``."""
    if python is None:
        return probe.collect(PACKAGES)
    try:
        done = subprocess.run(
            # -I: none of the user's environment variables or site directory; -S: none of the
            # environment's .pth files run (the probe reads the directories they list).
            [python, "-I", "-S", probe.__file__, *PACKAGES],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ProbeError(f"cannot run {python}: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ProbeError(f"{python} could not read its packages: {last}")
    try:
        found: Snapshot = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise ProbeError(f"{python} printed something other than the probe's JSON") from None
    return found


def diagnose(environment: Snapshot, qwen_vl: QwenVlUse | None, code_scanned: bool) -> list[Row]:
    versions = environment["versions"]
    rows = [Row("Python", environment["python"], "ok")]
    for name in PACKAGES:
        installed = versions.get(name)
        if installed is None:
            if name == "tinker":
                rows.append(Row(name, "-", "not installed", "pip install tinker", problem=True))
            else:
                rows.append(Row(name, "-", "not installed"))
            continue
        try:
            version = Version(installed)
        # InvalidVersion, or a release number longer than int() reads (4,300 digits).
        except ValueError:
            rows.append(Row(name, installed, "unknown", detail=f"{name}: not a PEP 440 version"))
            continue
        rows.append(_judge(name, installed, version, qwen_vl, code_scanned))
    return rows


def _judge(
    name: str, installed: str, version: Version, qwen_vl: QwenVlUse | None, code_scanned: bool
) -> Row:
    if name == "tinker":
        if version < NEWEST_KNOWN_TINKER:
            return Row(
                name,
                installed,
                "outdated",
                f'pip install "tinker>={NEWEST_KNOWN_TINKER}"',
                f"tinker: {installed} is older than {NEWEST_KNOWN_TINKER}, the newest version "
                "tinker-lint knows; newer SDKs pipeline and block less",
            )
        if version > NEWEST_KNOWN_TINKER:
            detail = (
                f"tinker: {installed} is newer than {NEWEST_KNOWN_TINKER}, the newest version "
                "tinker-lint knows; its rules describe that one"
            )
            return Row(name, installed, "ok", detail=detail)
        return Row(name, installed, "ok")
    for entry in KNOWN_BAD:
        if entry.package != name or not entry.is_bad(version):
            continue
        if entry.needs_qwen_vl and qwen_vl is None:
            if code_scanned:
                continue  # the project's code names no Qwen VL model
            detail = f"{entry.code} if the project uses a Qwen VL model: {entry.problem}"
            return Row(name, installed, "warning", entry.install_fix, detail)
        return Row(
            name, installed, entry.code, entry.install_fix, _detail(entry, qwen_vl), problem=True
        )
    return Row(name, installed, "ok")


def _detail(entry: KnownBad, qwen_vl: QwenVlUse | None) -> str:
    evidence = ""
    if entry.needs_qwen_vl and qwen_vl is not None:
        evidence = f" (the project names `{qwen_vl.name}` in {qwen_vl.path}:{qwen_vl.line})"
    return f"{entry.code}: {entry.problem}{evidence}"


def render(rows: Sequence[Row], environment: Snapshot) -> str:
    header = ("component", "version", "verdict", "fix")
    table = [header, *((r.component, r.version, r.verdict, r.fix) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    lines = [f"environment: {environment.get('executable', '?')}"]
    for line in table:
        cells = [line[i].ljust(widths[i]) for i in range(3)]
        lines.append("  ".join([*cells, line[3]]).rstrip())
    details = [r.detail for r in rows if r.detail]
    if details:
        lines.append("")
        lines.extend(details)
    problems = [r for r in rows if r.problem]
    lines.append("")
    if problems:
        noun = "problem" if len(problems) == 1 else "problems"
        lines.append(f"{len(problems)} {noun} found.")
    else:
        lines.append("No known-bad versions.")
    return "\n".join(lines) + "\n"


def scan_code(paths: Sequence[str]) -> QwenVlUse | None:
    """The first place the Python files under ``paths`` name a Qwen VL model."""
    for item in discover(paths):
        if isinstance(item, Skipped):
            continue
        try:
            with open(item, "rb") as handle:
                found = find_qwen_vl(handle.read(), os.path.normpath(item))
        except OSError:
            continue
        if found is not None:
            return found
    return None


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tinker-lint doctor",
        description="Check the installed environment for known-bad versions (TNK301-TNK303).",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        help="the project's code, scanned for Qwen VL models (TNK303); without it, "
        "transformers<5 is only a warning",
    )
    parser.add_argument(
        "--python", help="the interpreter whose environment to check (default: this one)"
    )
    args = parser.parse_args(list(argv))
    try:
        environment = snapshot(args.python)
    except ProbeError as error:
        sys.stderr.write(f"tinker-lint doctor: error: {error}\n")
        return EXIT_ERROR
    qwen_vl = scan_code(args.paths) if args.paths else None
    rows = diagnose(environment, qwen_vl, code_scanned=bool(args.paths))
    sys.stdout.write(render(rows, environment))
    return EXIT_FOUND if any(r.problem for r in rows) else EXIT_CLEAN
