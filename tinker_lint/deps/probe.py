"""Installed versions, read from distribution metadata (never importing the packages).

Standard library only, so any interpreter can run this file as a script: ``tinker-lint doctor
--python PATH`` runs ``PATH -I probe.py NAME...`` and reads the JSON it prints.
"""

import json
import platform
import sys
from importlib import metadata


def collect(names):
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": platform.python_version(), "executable": sys.executable, "versions": versions}


if __name__ == "__main__":
    json.dump(collect(sys.argv[1:]), sys.stdout)
