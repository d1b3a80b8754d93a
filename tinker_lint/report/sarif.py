"""SARIF 2.1.0, for GitHub code scanning (``github/codeql-action/upload-sarif``) and other viewers.

Every known rule is listed in the driver, with its summary, its help page (the same Markdown as
``docs/rules/``) and a help URI, so a viewer can explain a finding without tinker-lint installed.
Codes, names, levels and URLs come from the code registry; summaries and pages need the rules (and
so libcst), which this reporter alone imports.

Each result carries its rule's level. What the run could not check is in the invocation's
``toolExecutionNotifications``: each file not analysed (also a TNK003 result, so that code scanning
shows it) and each warning the run printed (a path skipped, a configuration problem).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from tinker_lint import __version__
from tinker_lint.codes import ALL_CODES, level_of, name_of
from tinker_lint.diagnostics import Diagnostic, Edit, docs_url
from tinker_lint.docs import rule_page, rule_summary
from tinker_lint.report.sarif_paths import INFORMATION_URI, SCHEMA_URI, SRCROOT, artifact, root_uri


def _rule(code: str) -> dict[str, object]:
    return {
        "id": code,
        "name": name_of(code),
        "shortDescription": {"text": rule_summary(code)},
        "helpUri": docs_url(code),
        "help": {"text": rule_summary(code), "markdown": rule_page(code, quote_findings=False)},
        "defaultConfiguration": {"level": level_of(code)},
    }


def _region(line: int, col: int, end_line: int, end_col: int) -> dict:
    return {
        "startLine": line,
        "startColumn": col,
        "endLine": max(end_line, line),
        "endColumn": end_col if (end_line, end_col) > (line, col) else col,
    }


def _notebook_region(d: Diagnostic) -> dict:
    """SARIF has no notebook cells, and a viewer shows the region in the artifact, the
    ``.ipynb`` JSON text: the region is the finding's place there (``Diagnostic.file_range``:
    the string of the cell's ``"source"`` that holds it), the cell and its own line and column
    are in the region's property bag and the message. (ruff 0.17 gives the line of the cells
    joined, which is neither.) Not known (a cache entry from an older version): 1:1, as ruff's
    GitHub annotations."""
    region = _region(*(d.file_range or (1, 1, 1, 1)))
    region["properties"] = {"cell": d.cell, "cellLine": d.line, "cellColumn": d.col}
    return region


def _replacement(edit: Edit) -> dict:
    return {
        "deletedRegion": _region(*edit.location, *edit.end_location),
        "insertedContent": {"text": edit.content},
    }


def _result(d: Diagnostic, index: dict[str, int]) -> dict:
    location = {"artifactLocation": artifact(d.path)}
    if d.cell is None:
        location["region"] = _region(d.line, d.col, d.end_line or d.line, d.end_col or d.col)
        message = d.message
    else:
        location["region"] = _notebook_region(d)
        message = f"cell {d.cell}:{d.line}:{d.col}: {d.message}"
    result: dict = {
        "ruleId": d.code,
        "level": level_of(d.code),
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    # A notebook's fix edits its cells' text, not the JSON text a SARIF replacement would be
    # applied to: left out (``tinker-lint --fix`` applies it).
    if d.fix is not None and d.fix.edits and d.cell is None:
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact(d.path),
                        "replacements": [_replacement(e) for e in d.fix.edits],
                    }
                ],
            }
        ]
    return result


# Engine codes that mean a file was not (wholly) checked: also a tool notification.
NOT_CHECKED = ("TNK002", "TNK003")


def _notifications(diagnostics: Sequence[Diagnostic], warnings: Sequence[str]) -> list[dict]:
    found: list[dict] = [
        {
            "level": "warning",
            "message": {"text": f"{d.path}: {d.message}"},
            "descriptor": {"id": d.code},
            "locations": [{"physicalLocation": {"artifactLocation": artifact(d.path)}}],
        }
        for d in diagnostics
        if d.code in NOT_CHECKED
    ]
    found += [{"level": "warning", "message": {"text": warning}} for warning in warnings]
    return found


def to_sarif(
    diagnostics: Sequence[Diagnostic],
    *,
    cwd: str | None = None,
    warnings: Sequence[str] = (),
) -> dict:
    codes = ALL_CODES
    index = {code: i for i, code in enumerate(codes)}
    root = root_uri(cwd)
    run = {
        "tool": {
            "driver": {
                "name": "tinker-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(code) for code in codes],
            }
        },
        # libcst columns count code points, not the UTF-16 units SARIF assumes by default.
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {SRCROOT: {"uri": root}},
        "invocations": [
            {
                "executionSuccessful": True,  # it ran to the end; what it left out is below
                "toolExecutionNotifications": _notifications(diagnostics, warnings),
            }
        ],
        "results": [_result(d, index) for d in diagnostics],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def write_sarif(
    diagnostics: Sequence[Diagnostic], out: TextIO, *, files: int, warnings: Sequence[str] = ()
) -> None:
    json.dump(to_sarif(diagnostics, warnings=warnings), out, indent=2)
    out.write("\n")
