"""What every SARIF file tinker-lint writes shares: the schema, and how a path becomes an artifact
location (the linter's ``report.sarif`` and ``tinker-lint trace --output-format sarif``). Light: no
rule, no libcst."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/tinker-lint/tinker-lint"
SRCROOT = "%SRCROOT%"


def artifact(path: str) -> dict:
    """Relative paths stay relative to the run's directory (%SRCROOT%), as code scanning wants."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    posix = path.replace(os.sep, "/")
    if posix.startswith("../"):
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(posix), "uriBaseId": SRCROOT}


def root_uri(cwd: str | None = None) -> str:
    """The run's directory as the %SRCROOT% base (``originalUriBaseIds``)."""
    return Path(cwd or os.getcwd()).resolve().as_uri().rstrip("/") + "/"
