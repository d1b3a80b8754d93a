"""What the server knows, without the protocol: open files linted as the CLI lints them, the
project index kept warm, and the code actions as edits.

- Each file has the settings the CLI would give it (``run.resolve``: the nearest configuration
  above it). The configuration files above a directory are stat'ed before each lint, so an edited,
  new or removed ``pyproject.toml`` is read again without the client's help; the client's file
  watcher (``reload``) catches the rest (a project's tinker pin).
- A Python buffer is linted from its text by the engine (``run.engine.lint_text``, the CLI's, with
  ``# noqa`` and the levels); a dependency file (``pyproject.toml``, requirements) by
  ``run.runner.run_source``, as ``tinker-lint -`` would. A file the configuration excludes gets
  nothing (as ``--force-exclude``: an editor names every file it opens).
- The project index is the process's (``project.index.project_index``, which the fixer uses too),
  fed the text of every open buffer (``ProjectIndex.set_buffer``): a caller sees its helper as the
  editor holds it. Each lint records the project files its findings depend on, so a change to one
  tells which open files to lint again (``dependents``).
- Fixes go through the CLI's fixer (``run.fixer.fix_text`` for "fix all"; one fix alone through
  ``fix.apply.apply_fixes``, kept only if the code still compiles, as the fixer keeps a pass).

Not thread-safe: the server calls it from one worker thread.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tinker_lint.deps.kinds import is_dependency_file
from tinker_lint.diagnostics import SAFE, Diagnostic, Edit
from tinker_lint.incremental import buffers
from tinker_lint.io.config import ConfigError
from tinker_lint.io.settings import Settings
from tinker_lint.noqa import code_addition, continued_lines, parse_directive
from tinker_lint.project.index import project_index
from tinker_lint.run.fixer import compiles
from tinker_lint.run.resolve import SettingsResolver
from tinker_lint.run.runner import VERSION_UNKNOWN_WARNING

PYTHON_SUFFIXES = (".py", ".pyi")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # Python's line ends (not str.splitlines's)
# A change to one of these makes the settings be resolved again (a project's configuration or pin).
CONFIG_NAMES = ("pyproject.toml", "setup.cfg", "uv.lock", "poetry.lock", "pylock.toml")
# The longest Python buffer the server analyses (`tinker-lint server --max-file-chars`), when the
# configuration's ``max-file-chars`` allows more: longer ones get the syntax check and TNK003. The
# server lints on open and on every edit, holding the parse: a 990,000-character file (under the
# command's 1,000,000) took 9 s and 420 MB to lint (libcst's tree is about 380 bytes a character),
# and a client that waits for its diagnostics waited that long on each edit.
SERVER_MAX_FILE_CHARS = 250_000


@dataclass
class Linted:
    """One lint of one buffer's text."""

    path: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    settings: Settings | None = None  # None: not linted (a configuration error, not Python)
    error: str | None = None  # the configuration error that kept it from being linted
    depends: frozenset[str] = frozenset()  # the other project files its findings depend on
    python: bool = True
    _compiles: bool | None = None

    def compiles(self) -> bool:
        if self._compiles is None:
            self._compiles = compiles(self.text, self.path)
        return self._compiles


class Linter:
    def __init__(self, max_file_chars: int = SERVER_MAX_FILE_CHARS) -> None:
        self.max_file_chars = max_file_chars  # 0: the configuration's limit only
        self.index = project_index()
        self._resolver = SettingsResolver()
        self._stamps: dict[str, tuple[tuple[str, int, int], ...]] = {}
        self.reloads = 0  # how many times the settings were resolved again
        self._buffers: dict[str, str] = {}  # absolute path -> the text the index reads for it

    # --- settings ----------------------------------------------------------------------------
    def settings_for(self, path: str) -> Settings:
        """Raises ``ConfigError`` (a configuration that is not valid) or ``OSError``."""
        directory = os.path.dirname(os.path.abspath(path))
        stamp = _config_stamp(directory)
        if self._stamps.get(directory, stamp) != stamp:
            self.reload()
        self._stamps[directory] = stamp
        return self._resolver.for_path(path)

    def reload(self) -> None:
        """Resolve every file's settings again (a configuration or a pin changed)."""
        self._resolver = SettingsResolver()
        self._stamps.clear()
        self.reloads += 1

    # --- the project -------------------------------------------------------------------------
    def set_buffer(self, path: str, text: str | None) -> bool:
        """The editor's text of a project file (None: closed, its disk's bytes again); whether
        what the index reads for it changed (then the files that depend on it are to be linted
        again): a file opened as it is on disk, or closed as saved, changes nothing."""
        absolute = os.path.abspath(path)
        before = self._buffers.get(absolute)
        if before == text:
            return False
        if text is None:
            del self._buffers[absolute]
            self.index.set_buffer(absolute, None)
        else:
            self._buffers[absolute] = text
            self.index.set_buffer(absolute, text.encode("utf-8", "surrogatepass"))
        return (before if before is not None else _disk_text(absolute)) != (
            text if text is not None else _disk_text(absolute)
        )

    def close(self, path: str) -> bool:
        """The editor closed the file: the index reads its disk's bytes again (``set_buffer``;
        whether that changed what it reads), and nothing kept for its next lint stays (the
        stages' per-buffer stores, ``incremental/buffers.py``)."""
        changed = self.set_buffer(path, None)
        buffers.forget(path)
        buffers.forget(os.path.abspath(path))
        return changed

    def disk_changed(self, path: str) -> None:
        """A file changed on disk (the client's watcher): what was made from it is made again,
        unless an open buffer stands for it."""
        absolute = os.path.abspath(path)
        if os.path.basename(absolute) in CONFIG_NAMES or _is_requirements(absolute):
            self.reload()
        if absolute not in self._buffers:
            self.index.forget(absolute)

    # --- linting -----------------------------------------------------------------------------
    def lint(self, path: str, text: str) -> Linted:
        """The findings the CLI would report for ``text`` as the file at ``path`` (whose helpers
        are read as ``set_buffer`` gave them: the caller feeds the index the open buffers)."""
        python = path.endswith(PYTHON_SUFFIXES)
        if not python and not is_dependency_file(path):
            return Linted(path, text, python=False)
        try:
            settings = self.settings_for(path)
        except ConfigError as error:
            return Linted(path, text, error=str(error), python=python)
        except OSError as error:  # a directory above it cannot be read: nothing to judge by
            return Linted(path, text, error=f"{path}: cannot be read ({error})", python=python)
        if settings.excludes(path):
            return Linted(path, text, settings=settings, python=python)
        limit = self.max_file_chars
        if python and limit and len(text) > limit and not 0 < settings.max_file_chars <= limit:
            settings = dataclasses.replace(settings, max_file_chars=limit)  # TNK003 for it
        if python:
            from tinker_lint.run.engine import lint_text

            self.index.look_again()  # no watcher need tell of a file created meanwhile
            result = lint_text(text, path, settings, project=self.index)
            depends = frozenset(result.depends)
            warnings = list(result.warnings)
            if settings.tinker_version_assumed:
                warnings.append(VERSION_UNKNOWN_WARNING)  # as the command says it, once a run
            return Linted(path, text, result.diagnostics, warnings, settings, None, depends)
        from tinker_lint.run.runner import run_source

        run = run_source(text.encode("utf-8", "surrogatepass"), path, settings)
        return Linted(path, text, run.diagnostics, run.warnings, settings, python=False)

    # --- fixes -------------------------------------------------------------------------------
    def fix_alone(self, linted: Linted, found: Diagnostic) -> tuple[Edit, ...] | None:
        """The edits of one finding's fix, if applying it alone keeps the code compiling (when it
        compiled): the fixer's rule for a pass."""
        from tinker_lint.fix.apply import apply_fixes

        if found.fix is None or not found.fix.edits:
            return None
        new_text, applied = apply_fixes(linted.text, [found.fix])
        if not applied or new_text == linted.text:
            return None
        if linted.compiles() and not compiles(new_text, linted.path):
            return None
        return found.fix.edits

    def fix_all(self, linted: Linted) -> Edit | None:
        """One edit that applies every safe fix, as ``tinker-lint --fix`` would (passes until
        nothing is left); None when there is nothing to fix."""
        from tinker_lint.fix.apply import text_edit
        from tinker_lint.run.fixer import fix_text

        if not linted.python or linted.settings is None or not has_safe_fix(linted.diagnostics):
            return None
        first = linted.diagnostics, linted.warnings
        fixed = fix_text(linted.text, linted.path, linted.settings, first=first)
        if fixed.text == linted.text:
            return None
        return text_edit(linted.text, fixed.text)


def has_safe_fix(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(
        d.fix is not None and d.fix.applicability == SAFE and d.fix.edits for d in diagnostics
    )


def noqa_edit(text: str, line: int, code: str) -> Edit | None:
    """The edit that adds ``code`` to line ``line``'s ``# noqa: ...`` (or ``  # noqa: code`` at
    its end); None where the line's noqa silences every code already, or where the text added
    would not be a comment (the line goes on in a string, or after a backslash): the result is
    tokenized, and must read back as a comment on that line naming ``code``. A line that a
    multi-line string or a backslash carries on past gets it where that ends, where it is read
    (``noqa.Suppression``), as ``--add-noqa`` puts it."""
    lines = _LINE_BREAK.split(text)
    # Only a backslash or triple quotes carry a line on: tokenized only when the text has one.
    if any(mark in text for mark in ("\\", '"""', "'''")):
        line = continued_lines(text).get(line, line)
    if not 1 <= line <= len(lines):
        return None
    current = lines[line - 1]
    addition = code_addition(current, [code])
    if addition is None:
        return None  # a bare noqa comment (or one naming the code): silenced already
    start, end, content = addition
    if content.startswith("  #") and current[:start].endswith("\\"):
        return None  # the line goes on: a comment cannot follow the backslash
    if not _reads_as_noqa(text, line, start, end, content, code):
        return None
    return Edit(content, (line, start + 1), (line, end + 1))


def _reads_as_noqa(text: str, line: int, start: int, end: int, content: str, code: str) -> bool:
    """Whether ``text`` with ``content`` put between columns ``start`` and ``end`` (0-based) of
    line ``line`` has, there, a comment that the noqa pattern reads as naming ``code``."""
    from tinker_lint.fix.apply import LineIndex

    line_start = LineIndex(text).offset(line, 1)
    new_text = text[: line_start + start] + content + text[line_start + end :]
    code_column = start + len(content) - len(code)
    readline = io.StringIO(new_text, newline="").readline
    try:
        for token in tokenize.generate_tokens(readline):
            if token.start[0] > line:
                break
            if (
                token.type == tokenize.COMMENT
                and token.start[0] == line
                and token.start[1] <= code_column < token.end[1]
            ):
                found = parse_directive(token.string)
                return found is not None and found.codes is not None and code in found.codes
    except (tokenize.TokenError, SyntaxError):
        return False
    return False


def _disk_text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _is_requirements(path: str) -> bool:
    name = os.path.basename(path)
    return name.startswith("requirements") and name.endswith(".txt")


def _config_stamp(directory: str) -> tuple[tuple[str, int, int], ...]:
    """The ``pyproject.toml`` files at and above ``directory``, with their (mtime, size): what
    decides its configuration (``io.config.find_pyproject`` takes the nearest with our table)."""
    stamp = []
    for folder in (Path(directory), *Path(directory).parents):
        candidate = folder / "pyproject.toml"
        try:
            found = os.stat(candidate)
        except OSError:
            continue
        stamp.append((str(candidate), found.st_mtime_ns, found.st_size))
    return tuple(stamp)
