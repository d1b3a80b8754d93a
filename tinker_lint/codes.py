"""Every code tinker-lint reports, known without importing a rule (nor libcst): name, family, kind,
where its rule class lives and whether it has a fix.

Config validation, ``# noqa`` warnings, reporters and docs read this, so that a run answered from
the cache stays cheap. It is derived from the file names, listed without importing them:
``rules/tnkNNN_kebab_name.py`` is rule TNKNNN named ``kebab-name``, and ``rules/fixes/tnkNNN.py``
is its fix planner. Adding a rule is adding its file; ``tests/test_registry.py`` checks that each
rule class declares the code and name its file name gives.
"""

from __future__ import annotations

import enum
import importlib.machinery
import os
import re
from dataclasses import dataclass


class Kind(enum.Enum):
    ENGINE = "engine"  # emitted by the engine itself (internal, syntax and I/O errors)
    PYTHON = "python"  # a rule on Python files, run by the engine on the semantic model
    DEPENDENCY = "dependency"  # a rule on dependency files, judged by ``tinker_lint.deps``


# A code's family is its first digit: TNK1xx, TNK2xx, TNK3xx.
FAMILIES: dict[str, tuple[str, Kind]] = {
    "0": ("engine", Kind.ENGINE),
    "1": ("pipelining", Kind.PYTHON),
    "2": ("hot-loop", Kind.PYTHON),
    "3": ("dependencies", Kind.DEPENDENCY),
}

# The engine's own codes have no rule file.
ENGINE_NAMES: dict[str, str] = {
    "TNK000": "internal-error",
    "TNK001": "syntax-error",
    "TNK002": "io-error",
    "TNK004": "config-error",
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
RULE_CODES: tuple[str, ...] = PYTHON_CODES + DEPENDENCY_CODES
FIXABLE_CODES: tuple[str, ...] = tuple(c for c, e in REGISTRY.items() if e.fixable)


def name_of(code: str) -> str:
    """The rule's name, or "" for a code tinker-lint does not know."""
    entry = REGISTRY.get(code)
    return entry.name if entry is not None else ""


def codes_of_family(family: str) -> tuple[str, ...]:
    return tuple(c for c, e in REGISTRY.items() if e.family == family)


def is_known_selector(selector: str) -> bool:
    """Whether a code or prefix (``TNK1``) names at least one code; ``ALL`` names them all."""
    return selector == "ALL" or any(code.startswith(selector) for code in ALL_CODES)
