"""Calls of tinker-cookbook's API in a user's project are judged by its table
(``model/facts/cookbook_api.py``, checked against the cookbook by tests/test_cookbook_api.py), as
calls of a project helper are judged by its summary; where the project holds a ``tinker_cookbook``
package of its own (the cookbook's checkout), that code answers instead."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tinker_lint.io.settings import Settings
from tinker_lint.model.analyses.summaries import Summary
from tinker_lint.model.query import SemanticModel
from tinker_lint.project.index import ProjectIndex
from tinker_lint.run.runner import lint_paths
from tinker_lint.syntax.parse import parse_module

EVAL = """\
from tinker_cookbook.completers import TinkerMessageCompleter


async def eval_rows(completer: TinkerMessageCompleter, rows, grade):
    ok = 0
    for row in rows:
        reply = await completer([{"role": "user", "content": row["q"]}])
        ok += grade(reply, row["a"])
    return ok
"""

# A project's own ``tinker_cookbook`` whose completer samples nothing.
OWN_COMPLETERS = """\
class TinkerMessageCompleter:
    async def __call__(self, messages):
        return {"role": "assistant", "content": messages[-1]["content"]}
"""


def _lint(path: Path) -> list[tuple[int, int, str, str]]:
    diagnostics, _, warnings = lint_paths([str(path)], replace(Settings(), select=("TNK",)))
    assert warnings == []
    return [(d.line, d.col, d.code, d.message) for d in diagnostics]


def _project(root: Path, *, own_cookbook: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'evals'\n")
    if own_cookbook:
        package = root / "tinker_cookbook"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "completers.py").write_text(OWN_COMPLETERS)
    path = root / "eval_rows.py"
    path.write_text(EVAL)
    return path


def test_a_completer_called_per_row_samples_and_waits(tmp_path: Path) -> None:
    (found,) = _lint(_project(tmp_path, own_cookbook=False))
    assert found[:3] == (7, 17, "TNK103")
    assert "each `TinkerMessageCompleter.__call__()` call is waited for" in found[3]


def test_the_help_names_the_cookbook_module(tmp_path: Path) -> None:
    path = _project(tmp_path, own_cookbook=False)
    diagnostics, _, _ = lint_paths([str(path)], replace(Settings(), select=("TNK",)))
    (found,) = diagnostics
    assert found.help.startswith(
        "`TinkerMessageCompleter.__call__()` waits for `sample` (tinker_cookbook.completers). "
    )


def test_a_project_holding_the_cookbook_answers_for_itself(tmp_path: Path) -> None:
    """Linted inside a checkout whose ``tinker_cookbook`` is its own: its code answers."""
    assert _lint(_project(tmp_path, own_cookbook=True)) == []


def test_a_helper_module_calling_the_cookbook_is_seen_from_its_caller(tmp_path: Path) -> None:
    """``ask`` in ``judge.py`` samples through the cookbook; ``train.py`` calls it per row."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'evals'\n")
    (tmp_path / "judge.py").write_text(
        "from tinker_cookbook.completers import TinkerMessageCompleter\n\n\n"
        "async def ask(completer: TinkerMessageCompleter, question):\n"
        '    reply = await completer([{"role": "user", "content": question}])\n'
        '    return reply["content"]\n'
    )
    caller = tmp_path / "score.py"
    caller.write_text(
        "from judge import ask\n\n\n"
        "async def score(completer, rows):\n"
        "    return [await ask(completer, row) for row in rows]\n"
    )
    (found,) = _lint(caller)
    assert found[:3] == (5, 13, "TNK103")
    assert "`ask()`" in found[3]


def _completer_call_summary(path: Path) -> Summary | None:
    """What the model says the ``completer(...)`` call of ``path`` runs (the pre-filters aside)."""
    view = ProjectIndex().view(str(path))
    model = SemanticModel(parse_module(path.read_text()), project=view, module_name="eval_rows")
    (site,) = [s for s in model.calls if getattr(s.node.func, "value", None) == "completer"]
    return model.helper_of(site.node, site.scope)


def test_the_model_asks_the_table_only_for_a_cookbook_the_project_does_not_hold(
    tmp_path: Path,
) -> None:
    table = _completer_call_summary(_project(tmp_path / "user", own_cookbook=False))
    assert table is not None and table.waits and table.name == "TinkerMessageCompleter.__call__"
    # The project's own class: its ``__call__`` neither submits nor waits (the project's
    # answer is "nothing to see"), and the table is not asked.
    own = _completer_call_summary(_project(tmp_path / "checkout", own_cookbook=True))
    assert own is None or not (own.submits or own.waits)
