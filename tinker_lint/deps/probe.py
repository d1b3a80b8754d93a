"""Installed versions, read from distribution metadata (never importing the packages).

Standard library only, so any interpreter can run this file as a script: ``tinker-lint doctor
--python PATH`` runs ``PATH -I -S probe.py NAME...`` and reads the JSON it prints. ``-S``: the
environment's ``.pth`` files, whose ``import`` lines Python runs at start-up, are not run; the
site-packages directories (and the directories those files list) are put on the path here
instead, so that their metadata is still found.
"""

from __future__ import annotations  # annotations are never evaluated: any Python 3.8+ runs this

import json
import os
import platform
import site
import sys
from collections.abc import Iterable
from importlib import metadata
from typing import TypedDict


def site_directories() -> list[str]:
    """What ``site`` would add to ``sys.path``, without running anything: the site-packages of the
    environment and the directories listed in their ``.pth`` files, whose ``import`` lines are
    skipped."""
    found: list[str] = []
    for directory in site.getsitepackages(_prefixes()):
        if not os.path.isdir(directory):
            continue
        found.append(directory)
        for name in sorted(os.listdir(directory)):
            if name.endswith(".pth"):
                found.extend(_listed(directory, name))
    return found


def _prefixes() -> list[str]:
    """A virtualenv's prefix (and the base one if it includes the system site-packages), found
    from its ``pyvenv.cfg`` as ``site.venv`` finds it (which would also run the ``.pth`` files)."""
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    for candidate in (bin_dir, os.path.dirname(bin_dir)):
        config = os.path.join(candidate, "pyvenv.cfg")
        if os.path.isfile(config):
            with open(config, encoding="utf-8", errors="replace") as f:
                settings = dict(
                    (key.strip().lower(), value.strip().lower())
                    for key, sep, value in (line.partition("=") for line in f)
                    if sep
                )
            venv = os.path.dirname(bin_dir)
            if settings.get("include-system-site-packages", "false") == "true":
                return [venv, sys.base_prefix]
            return [venv]
    return [sys.prefix]


def _listed(directory: str, name: str) -> list[str]:
    try:
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    paths: list[str] = []
    for line in lines:
        line = line.rstrip()
        if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
            continue  # an import line is code: it is what -S keeps from running
        path = os.path.join(directory, line)
        if os.path.isdir(path):
            paths.append(path)
    return paths


class Snapshot(TypedDict):
    python: str
    executable: str
    versions: dict[str, str | None]  # None: not installed


def collect(names: Iterable[str]) -> Snapshot:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": platform.python_version(), "executable": sys.executable, "versions": versions}


if __name__ == "__main__":
    if sys.flags.no_site:
        sys.path.extend(site_directories())
    json.dump(collect(sys.argv[1:]), sys.stdout)
