"""Known-bad dependency versions (TNK301-TNK303) in dependency files, and the same table for
``tinker-lint doctor``. One module per file format; ``known_bad`` holds the knowledge.

The names below are imported on first use: telling a dependency file by its name
(``deps.kinds``) must not cost the import of every parser.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "DependencyResult": "lint",
    "QwenVlEvidence": "lint",
    "QwenVlUse": "lint",
    "find_qwen_vl": "lint",
    "is_dependency_file": "kinds",
    "lint_dependency_file": "lint",
    "lint_dependency_files": "lint",
    "project_root": "lint",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
