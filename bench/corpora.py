"""The public corpora the bench scripts default to, downloaded once from PyPI into the checkout's
``.tinker_lint_cache/corpora/`` (where the tests' ``cookbook`` fixture keeps the same wheel), so
that no default names a folder only one machine has.

    python3 bench/corpora.py tinker-cookbook==0.6.1    # prints the unpacked folder

A script that takes ``--cookbook DIR`` (or ``--root DIR``) uses the folder given, and downloads
only when none is.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / ".tinker_lint_cache" / "corpora"
COOKBOOK = "tinker-cookbook==0.6.1"
SDK = "tinker==0.38.0"


class DownloadError(RuntimeError):
    pass


def unpacked(requirement: str, into: Path = CORPORA) -> Path:
    """The wheel of ``NAME==VERSION`` unpacked into ``into/NAME-VERSION`` (the name as the wheel
    spells it: ``tinker_cookbook-0.6.1``), downloaded with pip the first time only."""
    name, _, version = requirement.partition("==")
    if not version:
        raise DownloadError(f"{requirement}: give an exact version (NAME==VERSION)")
    target = into / f"{name.replace('-', '_')}-{version}"
    if target.is_dir() and any(target.iterdir()):
        return target
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="corpus-", dir=into) as tmp:
        # Unpacked beside the target and renamed into place: an interrupted download leaves no
        # half-unpacked corpus that the next run would take for a whole one.
        staging = Path(tmp) / "unpacked"
        extract_wheel(requirement, staging)
        try:
            staging.replace(target)
        except OSError:
            if not any(target.iterdir()):  # not another process's download finished first
                raise
    return target


def extract_wheel(requirement: str, target: Path) -> None:
    """Download the wheel of ``requirement`` with pip (no dependencies) and unpack it into
    ``target``."""
    with tempfile.TemporaryDirectory(prefix="wheel-") as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", requirement, "-d", tmp],
            capture_output=True,
            text=True,
            check=False,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if not wheels:
            raise DownloadError(f"cannot download {requirement}: {done.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(target)


def cookbook_package(root: Path | None = None) -> Path:
    """tinker-cookbook's package folder (``.../tinker_cookbook``): under ``root`` if given (an
    unpacked wheel or a checkout), else the downloaded 0.6.1."""
    base = root if root is not None else unpacked(COOKBOOK)
    package = base / "tinker_cookbook"
    return package if package.is_dir() else base


if __name__ == "__main__":
    for requirement in sys.argv[1:] or [COOKBOOK]:
        print(unpacked(requirement))
