"""Known-bad dependency versions (TNK301-TNK303) in dependency files, and the same table for
``tinker-lint doctor``. One module per file format; ``known_bad`` holds the knowledge."""

from tinker_lint.deps.lint import (
    DependencyResult,
    QwenVlUse,
    find_qwen_vl,
    is_dependency_file,
    lint_dependency_file,
    lint_dependency_files,
)

__all__ = [
    "DependencyResult",
    "QwenVlUse",
    "find_qwen_vl",
    "is_dependency_file",
    "lint_dependency_file",
    "lint_dependency_files",
]
