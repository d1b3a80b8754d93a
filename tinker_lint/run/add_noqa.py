"""``--add-noqa``: a ``# noqa: CODES`` on each line with a finding, as ``ruff check --add-noqa``.

The findings are the run's (``run.runner``): each file's own settings, the cache, the dependency
files. A line's codes go, sorted, into its directive (appended to a ``# noqa: X`` there; a blanket
``# noqa`` silences them already), else into a new ``  # noqa: CODES`` at the end of the line. A
finding on a line that a multi-line string or a backslash continuation carries on past gets its
directive where that ends, where ruff puts it and where both front ends read it
(``noqa.Suppression``).

A file is only written when the result is checked: the code's tokens are the same (only comments
changed), and the noqa reader silences every finding the edit is for; then it is written as
``--fix`` writes (``fix/write.py``: atomically, refused if the file changed meanwhile, its
encoding, BOM and line ends kept). A line whose directive cannot be put where it is read (a
``# noqa`` inside a string on that line) is left alone and named on stderr.

Engine findings (TNK0xx: syntax and I/O errors, a file not analysed) get none: no line directive
silences them. Notebooks are skipped (their cells are JSON strings: an editor adds the comment);
of the dependency files, requirements files and ``pyproject.toml`` get one (a comment there,
which ``deps/lint.py`` reads); ``setup.cfg`` (an inline comment is part of the value for
setuptools) and lock files (generated) are skipped, each with the reason. So is a symlink to a
file outside the paths given (``Run.outside_links``), as ``--fix`` leaves it.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from tinker_lint.codes import DEPENDENCY_CODES, PYTHON_CODES
from tinker_lint.deps.kinds import dependency_kind
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.fix.write import WriteError, write_atomic
from tinker_lint.io import toml as tomllib  # tomllib, nesting included
from tinker_lint.io.files import DecodeError, decode_source, is_notebook
from tinker_lint.io.terminal import printable
from tinker_lint.noqa import (
    Suppression,
    code_addition,
    continued_lines,
    is_suppressed,
    noqa_lines,
    parse_directive,
)
from tinker_lint.run.runner import Run, outside_link_reason

# A line with its end, split only where Python (and the noqa reader) ends lines.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# pip's comment (pip/_internal/req/req_file.py COMMENT_RE): the start of a line, or after space.
_PIP_COMMENT = re.compile(r"(^|\s+)#.*$")


@dataclass
class Added:
    directives: int = 0  # lines given a directive or more codes in theirs
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    text: str
    directives: int
    skipped: list[tuple[int, str]]  # lines left alone, each with the reason


def add_noqa_command(run: Run, err: TextIO) -> int:
    """The CLI's ``--add-noqa``: add the directives, say what was skipped, and how many were added
    (ruff's words; nothing when none was); exit 0, as ruff."""
    added = add_noqa(run)
    for warning in added.warnings:
        err.write(f"tinker-lint: warning: {printable(warning)}\n")  # it names a file
    if added.directives:
        noun = "directive" if added.directives == 1 else "directives"
        err.write(f"Added {added.directives} noqa {noun}.\n")
    return 0


def add_noqa(run: Run) -> Added:
    """Add the directives for ``run``'s findings to their files."""
    added = Added()
    by_path: dict[str, list[Diagnostic]] = {}
    for d in run.python_diagnostics:
        if d.code in PYTHON_CODES:
            by_path.setdefault(d.path, []).append(d)
    dependency: dict[str, list[Diagnostic]] = {}
    for d in run.dependency_diagnostics:
        if d.code in DEPENDENCY_CODES:
            dependency.setdefault(d.path, []).append(d)
    for path, found in by_path.items():
        if _outside_link(run, path, added):
            continue
        if is_notebook(path):
            added.warnings.append(
                f"{path}: skipped by --add-noqa: notebooks are not edited (add the comments "
                "in the notebook)"
            )
            continue
        _edit(path, found, _python, added)
    for path, found in dependency.items():
        if _outside_link(run, path, added):
            continue
        # A file included by ``-r`` may have any name: it is a requirements file all the same.
        kind = dependency_kind(path) or "requirements"
        if kind == "requirements":
            _edit(path, found, _requirements, added)
        elif kind == "pyproject":
            _edit(path, found, _pyproject, added)
        elif kind == "setup.cfg":
            added.warnings.append(
                f"{path}: skipped by --add-noqa: setuptools reads a comment after a requirement "
                "as part of it"
            )
        else:
            added.warnings.append(f"{path}: skipped by --add-noqa: a lock file is generated")
    return added


def _outside_link(run: Run, path: str, added: Added) -> bool:
    """Whether ``path`` is a symlink to a file outside the paths given (said, and not edited)."""
    target = run.outside_links.get(os.path.normpath(path))
    if target is None:
        return False
    added.warnings.append(f"{path}: not changed by --add-noqa: {outside_link_reason(target)}")
    return True


def _edit(
    path: str,
    found: list[Diagnostic],
    plan: Callable[[str, list[Diagnostic]], _Plan | str],
    added: Added,
) -> None:
    """Read ``path``, plan its directives, and write it back, or say why not."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        added.warnings.append(f"{path}: not changed by --add-noqa: {error.strerror or error}")
        return
    try:
        source = decode_source(raw)
    except DecodeError as error:
        added.warnings.append(f"{path}: not changed by --add-noqa: {error}")
        return
    try:
        same = source.text.encode(source.encoding) == raw  # 'utf-8-sig' puts the BOM back
    except (UnicodeEncodeError, LookupError):
        same = False
    if not same:
        added.warnings.append(
            f"{path}: not changed by --add-noqa: cannot write it back byte for byte in its "
            f"encoding ({source.encoding})"
        )
        return
    planned = plan(source.text, found)
    if isinstance(planned, str):
        added.warnings.append(f"{path}: not changed by --add-noqa: {planned}")
        return
    for line, reason in planned.skipped:
        added.warnings.append(f"{path}:{line}: no noqa directive added: {reason}")
    if planned.text == source.text:
        return
    try:
        new_raw = planned.text.encode(source.encoding)
        write_atomic(path, new_raw, expected=raw)
    except (UnicodeEncodeError, WriteError) as error:
        added.warnings.append(f"{path}: not changed by --add-noqa: {error}")
        return
    added.directives += planned.directives


def _targets(found: list[Diagnostic], where: Callable[[int], int]) -> dict[int, list[str]]:
    """The line each finding's directive goes on -> its codes, sorted."""
    targets: dict[int, set[str]] = {}
    for d in found:
        targets.setdefault(where(d.line), set()).add(d.code)
    return {line: sorted(codes) for line, codes in sorted(targets.items())}


# Where a line's directive is not a comment, the codes cannot be added to it.
_IN_STRING = "the noqa directive on that line is inside a string, not a comment"


def _apply(
    text: str, targets: dict[int, list[str]], allowed: Callable[[int, str, int], bool]
) -> tuple[str, int, list[tuple[int, str]]]:
    """``text`` with each target line's directive added; ``allowed(line, body, column)`` says
    whether an existing directive at ``column`` of that line is where a comment is."""
    lines = _LINES.findall(text)
    count: int = 0
    skipped: list[tuple[int, str]] = []
    for line, codes in targets.items():
        if not 1 <= line <= len(lines):
            continue
        whole = lines[line - 1]
        body = whole.rstrip("\r\n")
        addition = code_addition(body, codes)
        if addition is None:
            continue
        directive = parse_directive(body)
        if directive is not None and not allowed(line, body, directive.start):
            skipped.append((line, _IN_STRING))
            continue
        start, end, content = addition
        lines[line - 1] = body[:start] + content + body[end:] + whole[len(body) :]
        count += 1
    return "".join(lines), count, skipped


def _python(text: str, found: list[Diagnostic]) -> _Plan | str:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline="").readline))
    except (tokenize.TokenError, SyntaxError):
        return "it does not tokenize"
    comments: dict[int, list[tuple[int, int]]] = {}
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments.setdefault(token.start[0], []).append((token.start[1], token.end[1]))
    continued = continued_lines(text)
    targets = _targets(found, lambda line: continued.get(line, line))

    def in_comment(line: int, body: str, column: int) -> bool:
        return any(start <= column < end for start, end in comments.get(line, ()))

    new_text, count, skipped = _apply(text, targets, in_comment)
    # Checked, not assumed: only comments changed, and each finding is now silenced.
    try:
        new_tokens = list(tokenize.generate_tokens(io.StringIO(new_text, newline="").readline))
    except (tokenize.TokenError, SyntaxError):
        return "the directives would not tokenize (please report this)"
    if _code_tokens(new_tokens) != _code_tokens(tokens):
        return "the directives would change its code (please report this)"
    suppression = Suppression(new_text)
    missed = sorted(
        {
            continued.get(d.line, d.line)
            for d in found
            if continued.get(d.line, d.line) not in dict(skipped)
            and not suppression.silences(d.code, d.line)
        }
    )
    if missed:
        return f"the directives would not be read on line {missed[0]} (please report this)"
    return _Plan(new_text, count, skipped)


def _code_tokens(tokens: list[tokenize.TokenInfo]) -> list[tuple[int, str]]:
    return [(t.type, t.string) for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL)]


def _dependency_plan(
    text: str, found: list[Diagnostic], same_content: Callable[[str, str], bool]
) -> _Plan | str:
    # ``deps/lint.py`` reads the directive on the finding's own line.
    lines = _LINES.findall(text)

    def anywhere(line: int, body: str, column: int) -> bool:
        return True  # a ``#`` after white space starts a comment in both formats

    targets, skipped = {}, []
    for line, codes in _targets(found, lambda line: line).items():
        if 1 <= line <= len(lines) and lines[line - 1].rstrip("\r\n").endswith("\\"):
            # A comment would end the line the backslash carries on; the directive is read on
            # the finding's own line only.
            skipped.append((line, "the line goes on after a backslash"))
        else:
            targets[line] = codes
    new_text, count, more = _apply(text, targets, anywhere)
    if not same_content(text, new_text):
        return "the directives would change what it says (please report this)"
    silenced = noqa_lines(new_text)
    missed = [
        d.line for d in found if d.line in targets and not is_suppressed(d.code, d.line, silenced)
    ]
    if missed:
        return f"the directives would not be read on line {missed[0]} (please report this)"
    return _Plan(new_text, count, skipped + more)


def _requirements(text: str, found: list[Diagnostic]) -> _Plan | str:
    def same(old: str, new: str) -> bool:
        strip = [_PIP_COMMENT.sub("", line) for line in _LINES.findall(old)]
        return strip == [_PIP_COMMENT.sub("", line) for line in _LINES.findall(new)]

    return _dependency_plan(text, found, same)


def _pyproject(text: str, found: list[Diagnostic]) -> _Plan | str:
    def same(old: str, new: str) -> bool:
        try:
            return bool(tomllib.loads(old) == tomllib.loads(new))
        except tomllib.TOMLDecodeError:
            return False

    return _dependency_plan(text, found, same)
