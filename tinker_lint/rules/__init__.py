"""The rules: one module each (``tnkNNN_kebab_name.py``), found through the code registry
(``tinker_lint.codes``), in code order. Importing this package imports every rule (and libcst);
what only needs codes, names or families reads ``tinker_lint.codes`` instead."""

from __future__ import annotations

import importlib

from tinker_lint.codes import ALL_CODES as ALL_CODES
from tinker_lint.codes import DEPENDENCY_CODES, ENGINE_NAMES, PYTHON_CODES, REGISTRY

# Re-exported: the docs URL, defined beside Diagnostic.
from tinker_lint.diagnostics import DOCS_BASE_URL as DOCS_BASE_URL
from tinker_lint.diagnostics import docs_url as docs_url
from tinker_lint.rules.base import Rule


def rule_class(code: str) -> type[Rule]:
    """The rule class of ``code``: the one ``Rule`` subclass its module defines (as Fixit finds
    rules), imported now."""
    entry = REGISTRY[code]
    if entry.module is None:
        raise KeyError(f"{code} is the engine's code, it has no rule class")
    module = importlib.import_module(entry.module)
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Rule)
        and value.__module__ == module.__name__
    ]
    if len(classes) != 1:
        names = ", ".join(c.__name__ for c in classes) or "none"
        raise TypeError(f"{entry.module} must define exactly one Rule subclass ({names})")
    return classes[0]


# The engine's own codes (code -> name): they have docs pages but no rule class.
ENGINE_CODES: dict[str, str] = ENGINE_NAMES

PYTHON_RULES: tuple[type[Rule], ...] = tuple(rule_class(code) for code in PYTHON_CODES)
# Rules on dependency files (pyproject.toml, requirements*.txt, setup.cfg, lock files), judged by
# tinker_lint.deps, not by the Python engine.
DEPENDENCY_RULES: tuple[type[Rule], ...] = tuple(rule_class(code) for code in DEPENDENCY_CODES)

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in PYTHON_RULES}
DEPENDENCY_RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in DEPENDENCY_RULES}
# Every rule with a docs page, Python and dependency-file rules alike.
DOCUMENTED_RULES: dict[str, type[Rule]] = dict(
    sorted({**RULES_BY_CODE, **DEPENDENCY_RULES_BY_CODE}.items())
)
