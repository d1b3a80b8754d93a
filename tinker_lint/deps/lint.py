"""TNK301-TNK303 on dependency files: find the version decisions in a file (``Declared``), judge
them against ``known_bad.KNOWN_BAD``, honour ``# noqa`` on the reported line.

TNK303 needs evidence from the project's code (a Qwen VL model named in it). The project of a
dependency file is the nearest directory at or above it holding ``pyproject.toml``, ``setup.cfg``,
``setup.py`` or a ``requirements*.txt`` (``project_root``); its evidence is the first Python file of
the run under that directory that names a Qwen VL model (``QwenVlEvidence``), so that in a run over
several projects one project's code does not judge another's requirements.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from tinker_lint.codes import ALL_CODES
from tinker_lint.deps.declared import Declared
from tinker_lint.deps.kinds import dependency_kind, project_root
from tinker_lint.deps.known_bad import (
    KNOWN_BAD,
    KnownBad,
    first_admitted,
    help_template,
    is_exact_pin,
    message_template,
    names_prerelease,
)
from tinker_lint.deps.locks import locked_versions
from tinker_lint.deps.pyproject import pyproject_requirements
from tinker_lint.deps.requirements import read_requirements_tree
from tinker_lint.deps.setup_cfg import SetupCfgError, setup_cfg_requirements
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.io import toml as tomllib  # tomllib, nesting included
from tinker_lint.io.files import read_utf8
from tinker_lint.io.settings import Settings
from tinker_lint.noqa import directive_problems, is_suppressed, noqa_lines

# A file that does not mention a known-bad package cannot be flagged (requirements files can, by
# including one, so they are always read).
_MENTIONS = re.compile(r"pydantic|transformers", re.IGNORECASE)
# How a project's code names a Qwen VL model or its image processor: "Qwen/Qwen3-VL-30B-A3B-Instruct",
# "Qwen2.5-VL", "Qwen2VLImageProcessor", "Qwen2_5_VLForConditionalGeneration", cookbook renderer
# names "qwen3_vl" and "Qwen3VLRenderer".
QWEN_VL = re.compile(rb"qwen(?:2|2\.5|2_5|3)[-_]?vl", re.IGNORECASE)
_NAME_START = re.compile(rb"(?:[\w/-]|\.(?=\d))*")  # a dot only inside a version: "Qwen2.5"
_NAME_END = re.compile(rb"(?:[\w/-]|\.(?=\d))*\Z")


@dataclass(frozen=True)
class QwenVlUse:
    """Where the project's code first names a Qwen VL model: the evidence TNK303 quotes."""

    path: str
    line: int
    name: str


def find_qwen_vl(raw: bytes, path: str) -> QwenVlUse | None:
    match = QWEN_VL.search(raw)
    if match is None:
        return None
    line = raw.count(b"\n", 0, match.start()) + 1
    # Quote the whole name ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2VLImageProcessor"), within reason.
    before = _NAME_END.search(raw, max(0, match.start() - 80), match.start())
    after = _NAME_START.match(raw, match.end(), match.end() + 80)
    # Both patterns match the empty string, so both always match.
    assert before is not None and after is not None
    name = raw[before.start() : after.end()]
    return QwenVlUse(path, line, name.decode("utf-8", "replace"))


@dataclass
class QwenVlEvidence:
    """Where the run's Python files name a Qwen VL model (in discovery order): TNK303's evidence,
    looked up per project."""

    uses: Sequence[QwenVlUse] = ()
    _by_directory: dict[str, QwenVlUse | None] = field(default_factory=dict, repr=False)

    def for_file(self, path: str) -> QwenVlUse | None:
        """The first use in the project of the dependency file ``path`` (``project_root``)."""
        if not self.uses:
            return None
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in self._by_directory:  # a file's items all ask: look its project up once
            root = project_root(path)
            self._by_directory[directory] = next(
                (use for use in self.uses if _is_under(os.path.abspath(use.path), root)), None
            )
        return self._by_directory[directory]


def _is_under(path: str, directory: str) -> bool:
    return path.startswith(directory if directory.endswith(os.sep) else directory + os.sep)


@dataclass
class DependencyResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def lint_dependency_files(
    paths: Iterable[str], settings: Settings, qwen_vl: QwenVlEvidence | QwenVlUse | None
) -> DependencyResult:
    """Every dependency file in ``paths``; a file reached twice (named, and through ``-r``) is
    reported once. ``qwen_vl``: the run's evidence for TNK303, looked up per project (a single
    ``QwenVlUse`` is evidence for every file)."""
    result = DependencyResult()
    seen: set[Diagnostic] = set()
    for path in paths:
        display = os.path.normpath(path)
        try:
            text = read_utf8(path)
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8"
            result.warnings.append(f"{display}: cannot read: {reason or error}")
            continue
        one = lint_dependency_file(display, text, settings, qwen_vl)
        result.warnings.extend(one.warnings)
        for diagnostic in one.diagnostics:
            if diagnostic not in seen:
                seen.add(diagnostic)
                result.diagnostics.append(diagnostic)
    result.diagnostics.sort()
    result.warnings = list(dict.fromkeys(result.warnings))  # a file included twice warns once
    return result


def lint_dependency_file(
    path: str, text: str, settings: Settings, qwen_vl: QwenVlEvidence | QwenVlUse | None = None
) -> DependencyResult:
    """TNK3xx diagnostics for one dependency file (and the files its ``-r``/``-c`` lines include,
    reported at their own paths, each judged with the evidence of its own project)."""
    evidence = _evidence(qwen_vl)
    result = DependencyResult()
    kind = dependency_kind(path)
    if kind is None or not any(settings.is_enabled(e.code, path) for e in KNOWN_BAD):
        return result
    texts = {path: text}
    if kind == "requirements":
        tree = read_requirements_tree(path, text)
        declared: list[Declared] = tree.declared
        texts.update(tree.texts)
        result.warnings.extend(tree.warnings)
    elif not _MENTIONS.search(text):
        return result
    else:
        try:
            declared = list(_declared(kind, path, text))
        except (tomllib.TOMLDecodeError, SetupCfgError) as error:
            result.warnings.append(f"{path}: cannot parse, skipped: {error}")
            return result
        except Exception as error:  # a bug here must not stop the run; report it as the engine does
            if settings.is_enabled("TNK000", path):
                message = (
                    f"Internal error reading this dependency file ({type(error).__name__}: "
                    f"{error}); please report it. Other files were still checked."
                )
                result.diagnostics.append(Diagnostic(path, 1, 1, "TNK000", message, 1, 1))
            return result
    found = [
        d
        for item in declared
        for d in _judge(item, evidence(item.path))
        if settings.is_enabled(d.code, d.path)
    ]
    noqa = {p: noqa_lines(t) for p, t in texts.items()}
    # A typo in a noqa directive here silences nothing either, and is said as for a Python file.
    result.warnings.extend(
        f"{p}:{line}: {problem}"
        for p, t in texts.items()
        for line, problem in directive_problems(t, ALL_CODES)
    )
    result.diagnostics = sorted(
        d for d in set(found) if not is_suppressed(d.code, d.line, noqa.get(d.path, {}))
    )
    return result


def _evidence(
    qwen_vl: QwenVlEvidence | QwenVlUse | None,
) -> Callable[[str], QwenVlUse | None]:
    """The evidence for a dependency file, by its path."""
    if isinstance(qwen_vl, QwenVlEvidence):
        return qwen_vl.for_file
    return lambda _path: qwen_vl


def _declared(kind: str, path: str, text: str) -> Iterator[Declared]:
    if kind == "setup.cfg":
        yield from setup_cfg_requirements(text, path)
    elif kind == "pyproject":
        yield from pyproject_requirements(tomllib.loads(text), text, path)
    else:
        yield from locked_versions(text, path, kind)


def _judge(item: Declared, qwen_vl: QwenVlUse | None) -> Iterator[Diagnostic]:
    if item.version is not None:
        for entry in KNOWN_BAD:
            if (
                entry.package == item.name
                and entry.is_bad(item.version)
                and _applies(entry, qwen_vl)
            ):
                what = f"{item.name} {item.version} is locked"
                yield _diagnostic(item, entry, what, qwen_vl, then=", then lock again")
        return
    allowed_by = item.prereleases_allowed_by
    for entry, version in first_admitted(item.name, item.specifiers, bool(allowed_by)):
        if not _applies(entry, qwen_vl):
            continue
        verb = "pins" if any(is_exact_pin(s) for s in item.specifiers) else "admits"
        what = f"`{item.text}` {verb} {item.name} {version}"
        if allowed_by and version.is_prerelease and not any(map(names_prerelease, item.specifiers)):
            what += f" under {allowed_by}"
        yield _diagnostic(item, entry, what, qwen_vl)


def _applies(entry: KnownBad, qwen_vl: QwenVlUse | None) -> bool:
    return qwen_vl is not None or not entry.needs_qwen_vl


def _diagnostic(
    item: Declared, entry: KnownBad, what: str, qwen_vl: QwenVlUse | None, then: str = ""
) -> Diagnostic:
    evidence = ""
    if entry.needs_qwen_vl and qwen_vl is not None:
        evidence = f" (the project names `{qwen_vl.name}` in {qwen_vl.path}:{qwen_vl.line})"
    fields = {"what": what, "evidence": evidence, "then": then}
    return Diagnostic(
        item.path,
        item.line,
        item.col,
        entry.code,
        message_template(entry.code).format(**fields),
        item.line,
        item.col + item.span,
        help=help_template(entry.code).format(**fields),
    )
