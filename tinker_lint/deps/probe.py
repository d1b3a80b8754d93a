"""Installed versions, read from distribution metadata (never importing the packages).

Standard library only, so any interpreter can run this file as a script: ``tinker-lint doctor
--python PATH`` runs ``PATH -I probe.py NAME...`` and reads the JSON it prints.
"""

from __future__ import annotations  # annotations are never evaluated: any Python 3.8+ runs this

import json
import platform
import sys
from collections.abc import Iterable
from importlib import metadata
from typing import TypedDict


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
    json.dump(collect(sys.argv[1:]), sys.stdout)
