"""``--fix`` for one file: lint, apply the fixes that do not overlap, lint again, until nothing is
left to fix (fixing one finding can reveal another) or ``MAX_PASSES`` passes.

A pass whose result does not compile is thrown away and fixing stops there, keeping the last good
text: a fix that broke the code would be a bug, and the user's file must never pay for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tinker_lint.diagnostics import Diagnostic, Fix
from tinker_lint.fix.apply import apply_fixes
from tinker_lint.fix.plan import is_applicable
from tinker_lint.io.files import DecodeError, decode_source
from tinker_lint.io.settings import Settings
from tinker_lint.project.index import project_index
from tinker_lint.run.engine import lint_bytes, lint_text

MAX_PASSES = 10


class FixGuard(Protocol):
    """What a text that is not a whole file (a notebook's joined cells) lets fixes touch."""

    def allows(self, fix: Fix) -> bool: ...

    def applied(self, fixes: Sequence[Fix]) -> None: ...


@dataclass
class FixResult:
    text: str
    fixed: list[Diagnostic]  # the findings whose fix was applied (positions of their pass)
    remaining: list[Diagnostic]  # the findings of the fixed text
    initial: list[Diagnostic]  # the findings of the original text
    passes: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the lint's, on the fixed text
    initial_warnings: list[str] = field(default_factory=list)  # the lint's, on the original


def compiles(text: str, path: str) -> bool:
    """Whether CPython compiles ``text`` (a fix is kept only if it still does)."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_text(
    text: str,
    path: str,
    settings: Settings,
    *,
    unsafe_fixes: bool = False,
    max_passes: int = MAX_PASSES,
    first: tuple[list[Diagnostic], list[str]] | None = None,
    guard: FixGuard | None = None,
) -> FixResult:
    """``first``: the diagnostics and warnings of ``text`` when the caller has them (the results
    cache), so that the first pass does not lint it again. ``guard``: which fixes the text may
    take, told of each pass applied (a notebook's cells: ``io.notebook.CellLayout``)."""
    if first is None:
        result = lint_text(text, path, settings, project=project_index())
        first = result.diagnostics, result.warnings
    diagnostics, warnings = first
    outcome = FixResult(
        text, [], diagnostics, diagnostics, warnings=warnings, initial_warnings=warnings
    )
    seen = {text}
    strict = None  # does the original compile? Then every pass must.
    for _ in range(max_passes):
        fixable = [
            d
            for d in outcome.remaining
            if d.fix is not None
            and is_applicable(d.fix.applicability, unsafe_fixes)
            and (guard is None or guard.allows(d.fix))
        ]
        if not fixable:
            return outcome
        new_text, applied = apply_fixes(outcome.text, [d.fix for d in fixable if d.fix])
        if not applied or new_text in seen:
            outcome.problems.append("fixes undo each other; stopped")
            return outcome
        if strict is None:
            strict = compiles(text, path)
        if strict and not compiles(new_text, path):
            codes = ", ".join(sorted({d.code for d in fixable}))
            outcome.problems.append(
                f"a {codes} fix produced code that does not compile; kept the code before it "
                "(please report this)"
            )
            return outcome
        if guard is not None:
            guard.applied(applied)
        applied_ids = {id(f) for f in applied}
        outcome.fixed.extend(d for d in fixable if id(d.fix) in applied_ids)
        outcome.text = new_text
        outcome.passes += 1
        seen.add(new_text)
        again = lint_text(new_text, path, settings, project=project_index())
        outcome.remaining, outcome.warnings = again.diagnostics, again.warnings
    if any(
        d.fix is not None
        and is_applicable(d.fix.applicability, unsafe_fixes)
        and (guard is None or guard.allows(d.fix))
        for d in outcome.remaining
    ):
        outcome.problems.append(f"fixes did not converge after {max_passes} passes")
    return outcome


@dataclass
class FileFix:
    result: FixResult | None  # None: the file could not be decoded
    new_raw: bytes | None  # the bytes to write; None: nothing to change
    diagnostics: list[Diagnostic]  # what remains (or, if nothing could be fixed, what was found)
    problems: list[str]
    warnings: list[str]  # the lint's warnings that go with ``diagnostics``
    # The lint of the bytes as they were read: what a lint run reports (and caches) for them.
    initial: list[Diagnostic]
    initial_warnings: list[str]


def fix_bytes(
    raw: bytes,
    path: str,
    settings: Settings,
    *,
    unsafe_fixes: bool = False,
    first: tuple[list[Diagnostic], list[str]] | None = None,
) -> FileFix:
    """Fix a file's bytes, writing them back in the same encoding, with the same BOM and line
    endings (libcst keeps every line ending it parsed; new lines get the file's own). ``first``:
    the lint of ``raw``, when the caller has it (``fix_text``)."""
    try:
        source = decode_source(raw)
    except DecodeError:
        if first is None:
            linted = lint_bytes(raw, path, settings, project=project_index())
            first = linted.diagnostics, linted.warnings
        return FileFix(None, None, first[0], [], first[1], first[0], first[1])
    result = fix_text(source.text, path, settings, unsafe_fixes=unsafe_fixes, first=first)
    initial, initial_warnings = result.initial, result.initial_warnings
    if result.text == source.text:
        return FileFix(
            result,
            None,
            result.remaining,
            result.problems,
            result.warnings,
            initial,
            initial_warnings,
        )
    try:
        same = source.text.encode(source.encoding) == raw  # 'utf-8-sig' puts the BOM back
        new_raw = result.text.encode(source.encoding)
    except (UnicodeEncodeError, LookupError):
        same, new_raw = False, b""
    if not same:
        problem = (
            f"not fixed: cannot write it back byte for byte in its encoding ({source.encoding})"
        )
        return FileFix(
            result, None, initial, [problem], initial_warnings, initial, initial_warnings
        )
    return FileFix(
        result,
        new_raw,
        result.remaining,
        result.problems,
        result.warnings,
        initial,
        initial_warnings,
    )
