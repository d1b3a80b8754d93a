"""Reporters: one module per output format, each a ``write_*(diagnostics, out, files=N)``."""

from tinker_lint.report.github import write_github
from tinker_lint.report.json import write_json
from tinker_lint.report.sarif import write_sarif
from tinker_lint.report.text import write_text

REPORTERS = {
    "text": write_text,
    "concise": write_text,
    "json": write_json,
    "sarif": write_sarif,
    "github": write_github,
}
