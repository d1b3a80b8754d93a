"""Whether a file needs the engine at all, asked before the engine is imported (and libcst, the
rules and the semantic model with it: about 0.3 s of imports).

The engine analyses a file only when some rule's text test passes on it, or when it imports a
helper of its project that submits or waits (``engine._lint_text``; a file that names no Tinker
is asked that only when what it imports reaches a module that does, ``FileView.reaches_tinker``). Any other file gets from the
engine only what needs no rule: the warnings about its ``# noqa`` comments and CPython's verdict
on its syntax (TNK001). ``unanalysed`` asks the same questions, with the same functions, and
works those out, so that ``tinker-lint`` on files that never name Tinker (a pre-commit hook on the
files a commit changed, an editor's save) starts about as fast as flake8. The flake8 plugin asks
the same text question (``prefilter.mentions.may_concern``) before it imports the engine.
``tests/test_gate.py`` checks that what it gives is what the engine gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tinker_lint.codes import ALL_CODES, PYTHON_CODES, is_version_gated, sees_helpers
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io.files import DecodeError, decode_source
from tinker_lint.io.settings import Settings
from tinker_lint.noqa import directive_problems
from tinker_lint.prefilter.mentions import may_concern
from tinker_lint.prefilter.needs import TextFacts
from tinker_lint.syntax import cpython

if TYPE_CHECKING:
    from tinker_lint.project.index import ProjectIndex


@dataclass
class Unanalysed:
    """What the engine gives a file no rule reads (the fields of its ``FileResult`` that the runner
    keeps)."""

    diagnostics: list[Diagnostic]
    warnings: list[str]
    # The project files the answer depends on: those asked whether they hold helpers.
    depends: dict[str, str] = field(default_factory=dict)


def unanalysed(
    text: str,
    path: str,
    settings: Settings,
    project: ProjectIndex | None = None,
    depends: bool = True,
) -> Unanalysed | None:
    """What ``engine.lint_text(text, path, settings, project=project, depends=depends)`` gives
    when no rule can read the file; None when one may, and the engine must decide."""
    facts = TextFacts(text)
    if may_concern(facts, settings.hot_loop_calls):
        return None
    read: dict[str, str] = {}
    if project is not None:
        # The rules that see through the project's helpers (``Rule.sees_helpers``): the engine
        # lets those of them that are on through when the file imports a helper that submits or
        # waits. Unless the project sets ``hot-loop-calls``, it first asks whether anything the
        # file imports, however deep, names Tinker, and asks for helpers only then.
        helper_rules = [
            code for code in PYTHON_CODES if sees_helpers(code) and settings.is_enabled(code, path)
        ]
        if any(is_version_gated(code) for code in helper_rules):
            return None  # whether it applies at the version is its class's to say
        view = project.view(path)
        reaching = view.may_see_helpers(facts, bool(settings.hot_loop_calls))
        if reaching and helper_rules and view.imports_helpers(text, facts.identifiers):
            return None
        if depends:
            read = view.dependencies()
    warnings = [
        f"{path}:{line}: {problem}" for line, problem in directive_problems(text, ALL_CODES)
    ]
    if not settings.is_enabled("TNK001", path):
        return Unanalysed([], warnings, read)
    # As the engine judges it: a file's path is its parse key (``lint_text``'s ``reuse_parse``).
    problem = cpython.verdict(text, path, path)
    if problem is None:
        return Unanalysed([], warnings, read)
    line, col = problem.line, problem.col
    found = Diagnostic(path, line, col, "TNK001", problem.message, line, col)
    return Unanalysed([found], warnings, read)


def unanalysed_bytes(
    raw: bytes,
    path: str,
    settings: Settings,
    project: ProjectIndex | None = None,
    depends: bool = True,
) -> Unanalysed | None:
    """``unanalysed`` of a file's bytes (``engine.lint_bytes``); None also for bytes that cannot be
    decoded: the engine reports that (TNK001)."""
    try:
        source = decode_source(raw)
    except DecodeError:
        return None
    return unanalysed(source.text, path, settings, project, depends)
