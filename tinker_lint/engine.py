"""Lint one file: pre-filter, one libcst parse, one semantic model, every selected rule, noqa.

Positions are worked out only for files that have findings, and only for the nodes found
(``model/positions.py``).
"""

from __future__ import annotations

import symtable
import traceback
import warnings
from dataclasses import dataclass

import libcst as cst

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io.files import DecodeError, SourceFile, decode_source
from tinker_lint.model.semantic import SemanticModel
from tinker_lint.noqa import is_suppressed, noqa_lines
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.rules.base import Context, Finding, Rule, mentions_tinker
from tinker_lint.settings import Settings


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    source: SourceFile | None = None
    # Findings with their nodes, for fixers (not sent across processes).
    module: cst.Module | None = None


def lint_bytes(raw: bytes, path: str, settings: Settings) -> FileResult:
    try:
        source = decode_source(raw)
    except DecodeError as error:
        return FileResult(path, _engine(path, "TNK001", f"Cannot decode file: {error}", settings))
    result = lint_text(source.text, path, settings)
    result.source = source
    return result


def lint_text(text: str, path: str, settings: Settings) -> FileResult:
    rules = [rule for rule in PYTHON_RULES if settings.is_enabled(rule.code, path)]
    rules = [rule for rule in rules if rule.applies_to(text)]
    if rules and not settings.hot_loop_calls and not mentions_tinker(text):
        rules = [rule for rule in rules if not rule.needs_hot_loop]
    if not rules:
        return FileResult(path, _syntax_only(text, path, settings))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        message = f"SyntaxError: {error.message}"
        return FileResult(
            path, _engine(path, "TNK001", message, settings, error.raw_line, error.raw_column + 1)
        )
    except (RecursionError, MemoryError, ValueError) as error:
        return FileResult(path, _engine(path, "TNK001", f"Cannot parse: {error!r}", settings))

    try:
        model = SemanticModel(
            module,
            cadence_names=settings.cadence_pattern,
            hot_loop_calls=settings.hot_loop_pattern,
        )
    except RecursionError:
        return FileResult(path, _engine(path, "TNK001", "Nesting too deep to analyse", settings))
    except Exception as error:
        return FileResult(path, _internal_error(path, "the semantic model", error, settings))
    ctx = Context(model, settings.tinker_version, path)
    found: list[tuple[type[Rule], Finding]] = []
    diagnostics: list[Diagnostic] = []
    for rule in rules:
        try:
            found.extend((rule, finding) for finding in rule().check(ctx))
        except Exception as error:
            diagnostics.extend(_internal_error(path, rule.code, error, settings))
    if found:
        positions = ctx.positions
        positions.want(finding.node for _, finding in found)
        seen: set[tuple[str, int, int]] = set()
        for rule, finding in found:
            where = positions[finding.node]
            key = (rule.code, where.start.line, where.start.column)
            if key in seen:
                continue
            seen.add(key)
            diagnostics.append(
                Diagnostic(
                    path,
                    where.start.line,
                    where.start.column + 1,
                    rule.code,
                    finding.message,
                    where.end.line,
                    where.end.column + 1,
                )
            )
    diagnostics = _apply_noqa(diagnostics, text)
    diagnostics.sort()
    return FileResult(path, diagnostics, module=module)


def _syntax_only(text: str, path: str, settings: Settings) -> list[Diagnostic]:
    """Files no rule could flag are not parsed by libcst, but a syntax error is still reported.

    ``symtable`` runs CPython's own parser (the same errors as ``ast.parse``, at the same places)
    without building Python objects for the tree: half the time of ``ast.parse`` on CPython's
    standard library. It also reports the few errors CPython finds just after parsing (a
    misplaced ``from __future__ import``), which importing the file would raise too."""
    if not settings.is_enabled("TNK001", path):
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours
            symtable.symtable(text, path, "exec")
    except SyntaxError as error:
        return _engine(
            path,
            "TNK001",
            f"SyntaxError: {error.msg}",
            settings,
            error.lineno or 1,
            error.offset or 1,
        )
    except (ValueError, RecursionError, MemoryError) as error:
        return _engine(path, "TNK001", f"Cannot parse: {error}", settings)
    return []


def _engine(
    path: str, code: str, message: str, settings: Settings, line: int = 1, col: int = 1
) -> list[Diagnostic]:
    if not settings.is_enabled(code, path):
        return []
    return [Diagnostic(path, line, col, code, message, line, col)]


def _internal_error(
    path: str, where: str, error: Exception, settings: Settings
) -> list[Diagnostic]:
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    message = (
        f"Internal error in {where} on this file ({type(error).__name__}: {error}{at}); "
        "please report it. Other rules and files were still checked."
    )
    return _engine(path, "TNK000", message, settings)


def _apply_noqa(diagnostics: list[Diagnostic], text: str) -> list[Diagnostic]:
    if not diagnostics:
        return diagnostics
    lines = noqa_lines(text)
    return [d for d in diagnostics if not is_suppressed(d.code, d.line, lines)]
