"""The fix plans of a file's findings share what they work out of the whole module (issue 29: a
file with a thousand TNK101 findings took minutes, each plan resolving every call of the module
again, and walking every occurrence of ``result``): the work grows with the file, not with its
size times its findings."""

from __future__ import annotations

import pytest

from tests.snippets import TRAIN_FUNCTION
from tinker_lint.io.settings import Settings
from tinker_lint.model.query import SemanticModel
from tinker_lint.rules.fixes import names
from tinker_lint.run.engine import lint_text

LOOP = TRAIN_FUNCTION


def _counted(monkeypatch: pytest.MonkeyPatch, functions: int) -> tuple[int, int, int]:
    """Calls of ``resolve_function`` and of the name index's ``is_local`` (``same_variable``'s
    scoping walk), and the fixable findings, for a file of ``functions`` loops with one TNK101
    each."""
    resolved, asked = [0], [0]
    resolve, is_local = SemanticModel.resolve_function, names.NameIndex.is_local

    def counting(self: SemanticModel, *args: object, **kwargs: object) -> object:
        resolved[0] += 1
        return resolve(self, *args, **kwargs)  # type: ignore[arg-type]

    def counting_locals(self: names.NameIndex, name: str, owner: names.Owner) -> bool:
        asked[0] += 1
        return is_local(self, name, owner)

    monkeypatch.setattr(SemanticModel, "resolve_function", counting)
    monkeypatch.setattr(names.NameIndex, "is_local", counting_locals)
    text = "import tinker\n\n\n" + "".join(LOOP.format(i=i) for i in range(functions))
    result = lint_text(text, "scale.py", Settings(), reuse_parse=False)
    fixed = [d for d in result.diagnostics if d.code == "TNK101" and d.fix is not None]
    return resolved[0], asked[0], len(fixed)


def test_the_plans_work_grows_with_the_file_not_with_file_times_findings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, small_asked, small_fixed = _counted(monkeypatch, 50)
    large, large_asked, large_fixed = _counted(monkeypatch, 200)
    assert (small_fixed, large_fixed) == (50, 200)
    # Four times the file and the findings: about four times the work (sixteen, when each plan
    # resolved the module's every call, and walked every ``result`` of the module).
    assert large < 6 * small, (small, large)
    assert large_asked < 6 * small_asked, (small_asked, large_asked)
