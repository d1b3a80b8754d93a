"""Every code tinker-lint reports, known without importing a rule (nor libcst): name, family, kind,
where its rule class lives, whether it has a fix, and its level.

Config validation, ``# noqa`` warnings, reporters and docs read this, so that a run answered from
the cache stays cheap. It is derived from the file names, listed without importing them:
``rules/tnkNNN_kebab_name.py`` is rule TNKNNN named ``kebab-name``, and ``rules/fixes/tnkNNN.py``
is its fix planner. Adding a rule is adding its file; ``tests/test_registry.py`` checks that each
rule class declares the code and name its file name gives.

A rule's level (``error``, ``warning``, ``note``) is declared once, on the rule class
(``level = "warning"``), and read here from that line of the rule's file, only when a reporter asks
for it (``level_of``); ``tests/test_levels.py`` checks that it is the class attribute. A rule that
is off by default (ruff's explicit-preview-rules convention, bugbear's B9xx) says so the same way,
with one line ``opt_in = True`` (``is_opt_in``): it runs only when a selector names its code exactly.
So are a rule's ``min_tinker_version`` (``is_version_gated``) and ``sees_helpers = True``
(``sees_helpers``, which the runner asks before it imports the engine: ``run/gate.py``).
"""

from __future__ import annotations

import enum
import functools
import importlib.machinery
import os
import re
from dataclasses import dataclass
from typing import Literal, cast

# How serious a finding is, in SARIF's words (``level``); GitHub says ``::error``, ``::warning``,
# ``::notice``. Every finding still fails the run (exit 1), as in ruff: the level is how it is shown.
Level = Literal["error", "warning", "note"]
LEVELS: tuple[Level, ...] = ("error", "warning", "note")


class Kind(enum.Enum):
    ENGINE = "engine"  # emitted by the engine itself (internal, syntax and I/O errors)
    PYTHON = "python"  # a rule on Python files, run by the engine on the semantic model
    DEPENDENCY = "dependency"  # a rule on dependency files, judged by ``tinker_lint.deps``


# A code's family is its first digit: TNK1xx, TNK2xx, TNK3xx, TNK4xx.
FAMILIES: dict[str, tuple[str, Kind]] = {
    "0": ("engine", Kind.ENGINE),
    "1": ("pipelining", Kind.PYTHON),
    "2": ("hot-loop", Kind.PYTHON),
    "3": ("dependencies", Kind.DEPENDENCY),
    "4": ("pytorch", Kind.PYTHON),
}

# The engine's own codes have no rule file.
ENGINE_NAMES: dict[str, str] = {
    "TNK000": "internal-error",
    "TNK001": "syntax-error",
    "TNK002": "io-error",
    "TNK003": "file-not-analysed",
    "TNK004": "config-error",
}
ENGINE_LEVELS: dict[str, Level] = {
    "TNK000": "error",
    "TNK001": "error",
    "TNK002": "error",
    # A file left out (too large): the rest of the run is sound, this file was not checked.
    "TNK003": "warning",
    # The configuration is invalid: nothing in the file was checked.
    "TNK004": "error",
}

RULES_PACKAGE = "tinker_lint.rules"
_RULE_MODULE = re.compile(r"tnk(\d{3})_([a-z0-9_]+)")
_FIX_MODULE = re.compile(r"tnk(\d{3})")


@dataclass(frozen=True)
class Code:
    code: str  # "TNK101"
    name: str  # "wait-before-submit"
    family: str  # "pipelining"
    kind: Kind
    # The module that defines the rule class (its one ``Rule`` subclass), imported only when
    # asked (``tinker_lint.rules.rule_class``); None for the engine's codes.
    module: str | None
    # Whether the rule has a fix planner (``rules/fixes/tnkNNN.py``), i.e. ``--fix`` may fix it.
    fixable: bool = False

    @property
    def fix_module(self) -> str | None:
        return f"{RULES_PACKAGE}.fixes.{self.code.lower()}" if self.fixable else None


def _modules(*parts: str) -> list[str]:
    """The module names in a folder of this package, listed, never imported. A plain directory
    listing (pkgutil's imports ``inspect``, 5 ms of a 250 ms cached run); pkgutil only when the
    package is not a directory (a zip archive)."""
    directory = os.path.join(os.path.dirname(__file__), *parts)
    try:
        names = os.listdir(directory)
    except NotADirectoryError:
        import pkgutil

        return sorted(info.name for info in pkgutil.iter_modules([directory]))
    suffixes = tuple(importlib.machinery.all_suffixes())
    return sorted({name.partition(".")[0] for name in names if name.endswith(suffixes)})


def _family(code: str) -> tuple[str, Kind]:
    family = FAMILIES.get(code[3])
    if family is None:
        raise RuntimeError(f"{code}: no family for TNK{code[3]}xx in tinker_lint/codes.py FAMILIES")
    return family


def _registry() -> dict[str, Code]:
    fixed = {m.upper() for m in _modules("rules", "fixes") if _FIX_MODULE.fullmatch(m)}
    found: dict[str, Code] = {}
    for code, name in ENGINE_NAMES.items():
        found[code] = Code(code, name, *_family(code), module=None)
    for module in _modules("rules"):
        match = _RULE_MODULE.fullmatch(module)
        if match is None:
            continue  # base.py, hotloop.py, ...
        code = f"TNK{match[1]}"
        if code in found:
            raise RuntimeError(f"{code}: two rule modules ({found[code].module}, {module})")
        found[code] = Code(
            code,
            match[2].replace("_", "-"),
            *_family(code),
            module=f"{RULES_PACKAGE}.{module}",
            fixable=code in fixed,
        )
    if len(found) == len(ENGINE_NAMES):
        raise RuntimeError(f"no rule modules found beside {__file__}")
    return dict(sorted(found.items()))


REGISTRY: dict[str, Code] = _registry()
ALL_CODES: tuple[str, ...] = tuple(REGISTRY)
ENGINE_CODES: tuple[str, ...] = tuple(c for c, e in REGISTRY.items() if e.kind is Kind.ENGINE)
PYTHON_CODES: tuple[str, ...] = tuple(c for c, e in REGISTRY.items() if e.kind is Kind.PYTHON)
DEPENDENCY_CODES: tuple[str, ...] = tuple(
    c for c, e in REGISTRY.items() if e.kind is Kind.DEPENDENCY
)
RULE_CODES: tuple[str, ...] = tuple(sorted(PYTHON_CODES + DEPENDENCY_CODES))
FIXABLE_CODES: tuple[str, ...] = tuple(c for c, e in REGISTRY.items() if e.fixable)


def name_of(code: str) -> str:
    """The rule's name, or "" for a code tinker-lint does not know."""
    entry = REGISTRY.get(code)
    return entry.name if entry is not None else ""


# A rule class's own level line: ``    level = "warning"`` (the class body, four spaces in).
_LEVEL_LINE = re.compile(r'^    level(?:: [^=]+)? = "([a-z]+)"$', re.MULTILINE)


@functools.cache
def level_of(code: str) -> Level:
    """A code's level: the engine's from ``ENGINE_LEVELS``, a rule's from its class's ``level``
    line (read from the file, not imported); "error" for a code tinker-lint does not know."""
    entry = REGISTRY.get(code)
    if entry is None:
        return "error"
    if entry.module is None:
        return ENGINE_LEVELS[code]
    module = entry.module.rpartition(".")[2]
    return _level_in(code, _rule_source(module))


def _rule_source(module: str) -> str:
    """A rule module's text, read as a file (importlib.resources only when the package is not a
    directory: a zip archive)."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "rules", f"{module}.py"), "rb") as f:
            return f.read().decode("utf-8")
    except OSError:
        import importlib.resources

        # This package, not ``tinker_lint.rules``: that one would be imported (and libcst with it).
        package = importlib.resources.files(__package__ or "tinker_lint")
        return (package / "rules" / f"{module}.py").read_text(encoding="utf-8")


def _level_in(code: str, text: str) -> Level:
    found = _LEVEL_LINE.findall(text)
    if len(found) != 1 or found[0] not in LEVELS:
        raise RuntimeError(
            f'{code}: its rule class must declare its level once, as `level = "warning"` '
            f"(one of {', '.join(LEVELS)}); found {found or 'none'}"
        )
    return cast("Level", found[0])


# A rule class's own opt-in line: ``    opt_in = True`` (absent: the rule is on by default).
_OPT_IN_LINE = re.compile(r"^    opt_in(?:: [^=]+)? = (True|False)$", re.MULTILINE)


@functools.cache
def is_opt_in(code: str) -> bool:
    """Whether a rule is off by default: on only when ``select``/``extend-select`` (or flake8's
    ``--tinker-enable``) names its code exactly, as ruff's preview rules; ``TNK``, ``TNK4`` or
    ``ALL`` do not turn it on. Read from the rule's class line, not imported; False for the
    engine's codes and for codes tinker-lint does not know."""
    return _class_flag(code, _OPT_IN_LINE, "opt_in")


# A rule that applies from some tinker version on declares it in one line of its class body.
_MIN_VERSION_LINE = re.compile(r"^    min_tinker_version(?:: [^=]+)? = (?!None$)\S", re.MULTILINE)


@functools.cache
def is_version_gated(code: str) -> bool:
    """Whether a rule's findings (and so its fixes) depend on the tinker version the project
    targets (``min_tinker_version`` on its class): then a run that only assumed the version says
    so. Read from the rule's file, not imported; False for the engine's and unknown codes."""
    entry = REGISTRY.get(code)
    if entry is None or entry.module is None:
        return False
    return bool(_MIN_VERSION_LINE.search(_rule_source(entry.module.rpartition(".")[2])))


# A rule that sees through the project's helpers says so in one line of its class body.
_SEES_HELPERS_LINE = re.compile(r"^    sees_helpers(?:: [^=]+)? = (True|False)$", re.MULTILINE)


@functools.cache
def sees_helpers(code: str) -> bool:
    """Whether a rule judges calls of the project's helpers by what they do (``sees_helpers`` on
    its class): a file that imports such a helper may hold its findings whatever its own text
    says. Read from the rule's file, not imported; False for the engine's and unknown codes."""
    return _class_flag(code, _SEES_HELPERS_LINE, "sees_helpers")


def _class_flag(code: str, line: re.Pattern[str], name: str) -> bool:
    """A boolean its rule class sets in one line of its body (``line``), read from the rule's
    file; False for the engine's and unknown codes."""
    entry = REGISTRY.get(code)
    if entry is None or entry.module is None:
        return False
    found = line.findall(_rule_source(entry.module.rpartition(".")[2]))
    if len(found) > 1:
        raise RuntimeError(f"{code}: its rule class declares `{name}` more than once")
    return found == ["True"]


def opt_in_codes() -> tuple[str, ...]:
    """The rules that are off by default, in code order."""
    return tuple(code for code in RULE_CODES if is_opt_in(code))


def codes_of_family(family: str) -> tuple[str, ...]:
    return tuple(c for c, e in REGISTRY.items() if e.family == family)


def is_known_selector(selector: str) -> bool:
    """Whether a code or prefix (``TNK1``) names at least one code; ``ALL`` names them all."""
    return selector == "ALL" or any(code.startswith(selector) for code in ALL_CODES)
