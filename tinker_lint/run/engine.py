"""Lint one file: pre-filter, one libcst parse, one semantic model, every selected rule, noqa.

Positions are worked out only for files that have findings, and only for the nodes found
(``syntax/positions.py``). CPython's parser judges every file first, and the analysis runs on a
deep-stack thread (``tinker_lint.guard``): no file can crash the process or escape as a traceback.
"""

from __future__ import annotations

import ast
import gc
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange

from tinker_lint.codes import is_version_gated
from tinker_lint.diagnostics import UNSAFE, Diagnostic
from tinker_lint.fix.apply import LineIndex, plan_fix
from tinker_lint.fix.plan import FixPlan
from tinker_lint.guard import run_deep
from tinker_lint.incremental import buffers
from tinker_lint.incremental.buffers import BufferStore
from tinker_lint.incremental.carry import for_buffer
from tinker_lint.io.files import DecodeError, SourceFile, decode_source
from tinker_lint.io.settings import MAX_FILE_CHARS, Settings
from tinker_lint.model.query import SemanticModel
from tinker_lint.noqa import Suppression, directive_problems, file_exemptions, is_exempt
from tinker_lint.prefilter.mentions import hot_loop_names, may_concern_tinker
from tinker_lint.prefilter.needs import TextFacts
from tinker_lint.prefilter.sketch import sketch
from tinker_lint.project.index import FileView, ProjectIndex
from tinker_lint.rules import ALL_CODES, PYTHON_RULES
from tinker_lint.rules.base import Context, Finding, Rule, without_superseded
from tinker_lint.syntax import cpython
from tinker_lint.syntax.parse import parse_module
from tinker_lint.syntax.positions import NodePositions

# Larger files get a syntax check only, and TNK003 (``Settings.max_file_chars``, whose default this
# is; as semgrep's 1 MB): analysis costs about 20 s and 0.5 GB per million characters, and files that
# large are generated data, not training loops.
MAX_ANALYSED_CHARS = MAX_FILE_CHARS
# The rules that apply from some tinker version on: their fixes rewrite code for that SDK, and
# break it on older ones. When the target version is only assumed, those fixes are unsafe.
VERSION_GATED = frozenset(rule.code for rule in PYTHON_RULES if is_version_gated(rule.code))


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    source: SourceFile | None = None
    # Findings with their nodes, for fixers (not sent across processes).
    module: cst.Module | None = None
    # For stderr, each naming the file: why it was not analysed, a typo in a noqa comment.
    warnings: list[str] = field(default_factory=list)
    # The other project files its findings depend on (helpers it calls): path -> SHA-256.
    depends: dict[str, str] = field(default_factory=dict)


def lint_bytes(
    raw: bytes,
    path: str,
    settings: Settings,
    *,
    rules: Sequence[type[Rule]] | None = None,
    prefilter: bool = True,
    project: ProjectIndex | None = None,
    depends: bool = True,
) -> FileResult:
    try:
        source = decode_source(raw)
    except DecodeError as error:
        message = f"Cannot decode file: {error}"
        return FileResult(path, _engine(path, "TNK001", message, settings, error.line, error.col))
    result = lint_text(
        source.text,
        path,
        settings,
        rules=rules,
        prefilter=prefilter,
        project=project,
        depends=depends,
    )
    result.source = source
    return result


def lint_text(
    text: str,
    path: str,
    settings: Settings,
    *,
    rules: Sequence[type[Rule]] | None = None,
    prefilter: bool = True,
    tree: ast.Module | None = None,
    fixes: bool = True,
    facts: TextFacts | None = None,
    project: ProjectIndex | None = None,
    reuse_parse: bool = True,
    depends: bool = True,
) -> FileResult:
    """``facts``: the text's pre-filter facts, when the caller has worked them out already (the
    flake8 plugin's gate). ``rules`` replaces the registry (tests register a broken rule); ``prefilter=False`` runs the
    model and every rule even on files their text and tree tests rule out (the robustness sweep
    does). ``tree``: CPython's tree of ``text``, when the caller has it (flake8 gives its plugins
    one): the file then compiles, and is not parsed by CPython again. ``fixes=False``: no
    diagnostic carries its fix (flake8 shows none), so none is planned. ``project``: the project
    index, so that calls of the project's other modules are seen (their summaries).
    ``reuse_parse``: keep this parse for the next lint of ``path`` and reuse the previous one, where
    the text is the same (``syntax/parse.py``: an editor lints on every edit); a caller that lints
    each file once (flake8's plugin) says False, and no tree is held for nothing. ``depends``:
    work out the project files the findings depend on (``FileResult.depends``, a results cache's
    key); a caller that keeps no cache says False."""
    view = project.view(path) if project is not None else None
    parse_key = path if reuse_parse else None
    result = _lint_text(text, path, settings, rules, prefilter, tree, fixes, facts, view, parse_key)
    if view is not None and depends:
        # What its pre-filters and model read of the project, found or not: the cache's key.
        result.depends = view.dependencies()
    return result


def _lint_text(
    text: str,
    path: str,
    settings: Settings,
    rules: Sequence[type[Rule]] | None,
    prefilter: bool,
    tree: ast.Module | None,
    fixes: bool,
    facts: TextFacts | None,
    view: FileView | None,
    parse_key: str | None = None,
) -> FileResult:
    candidates = PYTHON_RULES if rules is None else rules
    rules = [
        rule
        for rule in candidates
        if settings.is_enabled(rule.code, path) and rule.applies_at(settings.tinker_version)
    ]
    # The rules that see through the project's helpers (``Rule.sees_helpers``) may find what the
    # file's own text and tree do not show, when it imports a module of the project that submits
    # or waits: the pre-filters, which read only the file, then let them through.
    through_helpers: list[type[Rule]] = []
    if prefilter and view is not None:
        through_helpers = [rule for rule in rules if rule.sees_helpers]
    enabled = rules
    helper_view = view  # whose project the pre-filters look into for helpers
    needs = {rule: rule.needs() for rule in rules} if prefilter else {}
    if prefilter:
        # Each rule's declaration (``prefilter/needs.py``), tested against facts of the text
        # worked out once.
        facts = facts or _text_facts(text, parse_key)
        hot_loop_calls = bool(settings.hot_loop_calls)
        if not hot_loop_calls and not may_concern_tinker(facts):
            # What every Tinker rule's declaration asks (tests/test_prefilter_sound.py); the
            # PyTorch rules (TNK4xx) judge loops with no Tinker in them.
            rules = [rule for rule in rules if not rule.needs_tinker]
            rules = [rule for rule in rules if needs[rule].admits_text(facts, False, None)]
        else:
            # A loop made hot by ``hot-loop-calls`` needs no Tinker call, but the call it names.
            hot_names = hot_loop_names(settings.hot_loop_calls) if hot_loop_calls else None
            rules = [
                rule for rule in rules if needs[rule].admits_text(facts, hot_loop_calls, hot_names)
            ]
        if view is not None and not view.may_see_helpers(facts, hot_loop_calls):
            # Nothing it imports, however deep, names Tinker: no helper of it submits, so it
            # holds no Tinker future for a helper to wait on. Its imports need no sketch.
            through_helpers = []
            helper_view = None
        rules = _with_helper_rules(enabled, rules, through_helpers, helper_view, facts)
    warnings = _noqa_warnings(text, path)
    if not rules and not settings.is_enabled("TNK001", path):
        return FileResult(path, [], warnings=warnings)
    # CPython judges first: what it cannot compile is reported, and never reaches libcst. With a
    # ``parse_key`` (an editor's buffer), only the statements changed since its last compiling
    # text are compiled again where that gives the same verdict (``syntax/cpython.py``).
    problem = cpython.verdict(text, path, parse_key) if tree is None else None
    if problem is not None:
        diagnostics = _engine(path, "TNK001", problem.message, settings, problem.line, problem.col)
        return FileResult(path, diagnostics, warnings=warnings)
    if not rules:
        return FileResult(path, [], warnings=warnings)
    limit = settings.max_file_chars
    if limit and len(text) > limit:
        # Not a pass: a finding (TNK003, exit 1), unless deselected; then at least said on stderr.
        message = (
            f"Not analysed: {len(text):,} characters, more than the {limit:,} tinker-lint "
            "analyses (`--max-file-chars`); only its syntax was checked"
        )
        diagnostics = _engine(path, "TNK003", message, settings)
        if not diagnostics:
            warnings.append(f"{path}: not analysed: {message[len('Not analysed: ') :]}")
        return FileResult(path, diagnostics, warnings=warnings)
    if prefilter:
        # The second pre-filter, on CPython's tree: about a quarter of libcst's parse, and it rules
        # out most files that only use the SDK (``prefilter/sketch.py``). In the CLI this is CPython's
        # second parse of the file (``symtable`` above builds no tree to hand over, and catches
        # errors ``ast.parse`` does not); flake8 hands its plugins the tree it already built. With a
        # ``parse_key``, the verdict above may have put it together from the changed statements.
        if tree is None and view is not None and not buffers.keeps(parse_key):
            tree = view.index.kept_tree(view.file, text)  # the helper sketches' parse of it
        tree = tree or cpython.tree(text, parse_key)
        if tree is not None:
            # The project's helpers it may call count as the submits and waits they make.
            helpers = helper_view.helper_names(tree) if helper_view is not None else None
            # In an editor, the statements an edit kept are not walked again (``sketch``'s key).
            kept_for = parse_key if buffers.keeps(parse_key) else None
            found = sketch(tree, settings.hot_loop_pattern, helpers, key=kept_for)
            rules = [rule for rule in rules if needs[rule].admits_tree(found)]
        if not rules:
            return FileResult(path, [], warnings=warnings)
    # The collector is paused while one file is analysed: libcst's tree (about 380 bytes of objects
    # per byte of source) and the model stay alive until the analysis ends, so every collection
    # meanwhile would walk them again for nothing (about 15% of the parse).
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = run_deep(_analyse, text, path, settings, rules, tree, fixes, view, parse_key)
    except Exception as error:
        return FileResult(
            path, _internal_error(path, "the engine", error, settings), warnings=warnings
        )
    finally:
        if collecting:
            gc.enable()
    result.warnings[:0] = warnings
    return result


# The last text facts of each editor buffer (``parse_key``): the next edit's are worked out from
# them where the edit leaves them true (``TextFacts(text, previous)``).
_FACTS: BufferStore[TextFacts] = BufferStore()


def _text_facts(text: str, key: str | None) -> TextFacts:
    if key is None or not buffers.keeps(key):
        return TextFacts(text)
    facts = TextFacts(text, _FACTS.get(key))
    _FACTS.put(key, facts)
    return facts


def _with_helper_rules(
    before: Sequence[type[Rule]],
    admitted: list[type[Rule]],
    through_helpers: Sequence[type[Rule]],
    view: FileView | None,
    facts: TextFacts,
) -> list[type[Rule]]:
    """``admitted``, and back the rules of ``through_helpers`` the text pre-filter dropped, when
    the file imports a helper module that submits or waits (asked only then: it reads those
    modules' trees). The tree pre-filter then judges them with the helpers in view."""
    dropped = [rule for rule in through_helpers if rule in before and rule not in admitted]
    if not dropped or view is None or not view.imports_helpers(facts.text, facts.identifiers):
        return admitted
    return [rule for rule in before if rule in admitted or rule in dropped]


def _analyse(
    text: str,
    path: str,
    settings: Settings,
    rules: Sequence[type[Rule]],
    tree: ast.Module | None = None,
    fixes: bool = True,
    view: FileView | None = None,
    parse_key: str | None = None,
) -> FileResult:
    """Parse, model, rules, positions, noqa (on a deep-stack thread: ``guard.run_deep``).
    ``tree``, CPython's tree of the same text if there is one, tells where each statement starts
    when positions are needed (a file with findings), so that they are worked out statement by
    statement."""
    # A helper module whose facts were made from the same text has libcst's tree already.
    kept = None
    if view is not None and not buffers.keeps(parse_key):
        kept = view.index.kept_module(view.file, text)
    try:
        module = kept if kept is not None else parse_module(text, key=parse_key)
    except cst.ParserSyntaxError as error:
        # CPython compiled this text: libcst's grammar (or its parser's limits) is the one lagging.
        where = f"{error.raw_line}:{error.raw_column + 1}"
        detail = error.message.strip().splitlines()[0] if error.message.strip() else "no reason"
        return _not_analysed(
            path,
            settings,
            "libcst cannot parse it, though Python can",
            f"libcst's parser stops at {where}: {detail[:MAX_REASON_CHARS]}",
        )
    except RecursionError:
        return _not_analysed(path, settings, "nested too deeply for libcst's parser")
    except MemoryError:
        return _not_analysed(path, settings, "out of memory while parsing it")

    try:
        model = SemanticModel(
            module,
            cadence_names=settings.cadence_pattern,
            hot_loop_calls=settings.hot_loop_pattern,
            project=view,
            module_name=view.module_name if view is not None else "",
            carry=for_buffer(parse_key),
        )
    except RecursionError:
        return _not_analysed(path, settings, "nested too deeply to analyse")
    except Exception as error:
        return FileResult(path, _internal_error(path, "the semantic model", error, settings))
    ctx = Context(model, settings.tinker_version, path, preview=settings.preview, python_tree=tree)
    found: list[tuple[type[Rule], Finding]] = []
    diagnostics: list[Diagnostic] = []
    for rule in rules:
        try:
            found.extend((rule, finding) for finding in rule().check(ctx))
        except Exception as error:
            where = f"rule {rule.code} ({getattr(rule, 'name', rule.__name__)})"
            diagnostics.extend(_internal_error(path, where, error, settings))
    found = without_superseded(found)  # one finding per wait: the most specific
    plans: dict[Diagnostic, FixPlan | Callable[[], FixPlan | None]] = {}
    if found:
        try:
            positions = ctx.positions
            positions.want(finding.node for _, finding in found)
        except Exception as error:
            return FileResult(path, _internal_error(path, "positions", error, settings))
        seen: set[tuple[str, int, int]] = set()
        for rule, finding in found:
            span = positions[finding.node]
            key = (rule.code, span.start.line, span.start.column)
            if key in seen:
                continue
            seen.add(key)
            diagnostic = Diagnostic(
                path,
                span.start.line,
                span.start.column + 1,
                rule.code,
                finding.message,
                span.end.line,
                span.end.column + 1,
                help=finding.help,
            )
            diagnostics.append(diagnostic)
            if fixes and (isinstance(finding.fix, FixPlan) or callable(finding.fix)):
                plans[diagnostic] = finding.fix
    diagnostics = _apply_noqa(diagnostics, text)
    if plans:
        diagnostics = _with_fixes(
            diagnostics, plans, text, module, model, positions, path, settings
        )
    diagnostics.sort()
    return FileResult(path, diagnostics, module=module)


def _with_fixes(
    diagnostics: list[Diagnostic],
    plans: dict[Diagnostic, FixPlan | Callable[[], FixPlan | None]],
    text: str,
    module: cst.Module,
    model: SemanticModel,
    positions: NodePositions,
    path: str,
    settings: Settings,
) -> list[Diagnostic]:
    """Attach to each fixable diagnostic the edit its plan makes (noqa'd ones are gone already)."""
    index = LineIndex(text)
    result = []
    failed: set[str] = set()
    for diagnostic in diagnostics:
        plan = plans.get(diagnostic)
        if plan is not None:
            try:
                if not isinstance(plan, FixPlan):
                    plan = plan()
                if plan is not None:
                    # ``NodePositions`` answers the lookups a plan makes (``[]``, ``get``) without
                    # being a whole ``Mapping`` (it cannot list its nodes cheaply).
                    lookups = cast("Mapping[cst.CSTNode, CodeRange]", positions)
                    fix = plan_fix(text, module, plan, model.parent_of, lookups, index)
                    if (
                        fix is not None
                        and settings.tinker_version_assumed
                        and diagnostic.code in VERSION_GATED
                    ):
                        fix = replace(fix, applicability=UNSAFE)
                    diagnostic = replace(diagnostic, fix=fix)
            except Exception as error:  # a broken fix must not hide the finding
                if diagnostic.code not in failed:
                    failed.add(diagnostic.code)
                    where = f"the {diagnostic.code} fix"
                    result.extend(_internal_error(path, where, error, settings))
        result.append(diagnostic)
    return result


def io_error(path: str, error: OSError, settings: Settings) -> list[Diagnostic]:
    """TNK002 for a file found but not readable (permission denied, I/O error, gone meanwhile)."""
    return _engine(path, "TNK002", f"Cannot read file: {error.strerror or error}", settings)


# libcst's reason, in the finding's help, is cut there (its parser may quote a long line).
MAX_REASON_CHARS = 200


def _not_analysed(path: str, settings: Settings, reason: str, detail: str = "") -> FileResult:
    """Valid Python tinker-lint could not analyse: a finding (TNK003, exit 1), not a pass; when
    TNK003 is deselected, at least said on stderr."""
    message = f"Not analysed: {reason}; only its syntax was checked"
    diagnostics = [replace(d, help=detail) for d in _engine(path, "TNK003", message, settings)]
    if diagnostics:
        return FileResult(path, diagnostics)
    said = f"{reason} ({detail})" if detail else reason
    return FileResult(path, [], warnings=[f"{path}: not analysed: {said}"])


def _noqa_warnings(text: str, path: str) -> list[str]:
    """A ``# noqa`` that silences less than it seems to: an unknown code, a malformed one."""
    return [f"{path}:{line}: {problem}" for line, problem in directive_problems(text, ALL_CODES)]


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
    """``# noqa`` on the finding's line (or where its multi-line string or continuation ends), and
    ``# ruff: noqa`` / ``# flake8: noqa`` for the file."""
    if not diagnostics:
        return diagnostics
    suppression = Suppression(text)
    exempt = file_exemptions(text)
    return [
        d
        for d in diagnostics
        if not suppression.silences(d.code, d.line) and not is_exempt(d.code, exempt)
    ]
