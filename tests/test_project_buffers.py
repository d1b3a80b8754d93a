"""The project index fed from an editor (``ProjectIndex.set_buffer`` and ``forget``, for
``tinker-lint server``): a helper's unsaved text is what its callers see, and a change to a module
drops what was made from it in the modules that import it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tinker_programs import HELPER_LOOP as LOOP
from tests.tinker_programs import HELPER_SUBMITS as SUBMITS
from tests.tinker_programs import HELPER_WAITS as WAITS
from tinker_lint.io.settings import Settings
from tinker_lint.project.index import FileView, ProjectIndex
from tinker_lint.run.engine import lint_text

SETTINGS = Settings(select=("TNK101",))


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "loop.py").write_text(LOOP)
    (package / "steps.py").write_text(SUBMITS)
    return package


def _found(index: ProjectIndex, loop: Path) -> list[tuple[int, int, str]]:
    result = lint_text(LOOP, str(loop), SETTINGS, project=index)
    return [(d.line, d.col, d.code) for d in result.diagnostics]


def test_a_helpers_unsaved_text_is_what_its_callers_see(tmp_path: Path) -> None:
    package = _project(tmp_path)
    loop, steps = package / "loop.py", package / "steps.py"
    index = ProjectIndex()
    assert _found(index, loop) == []
    index.set_buffer(str(steps), WAITS.encode())
    assert _found(index, loop) == [(6, 15, "TNK101")]
    assert steps.read_text() == SUBMITS  # the disk is not touched
    index.set_buffer(str(steps), None)  # closed unsaved: the disk's text again
    assert _found(index, loop) == []


def test_forget_drops_what_other_modules_made_from_a_changed_one(tmp_path: Path) -> None:
    """``steps.step`` waits through ``inner.go``: its sketch is keyed by steps.py's own stat, so
    only ``forget(inner.py)`` tells it that go no longer waits."""
    package = _project(tmp_path)
    steps, inner = package / "steps.py", package / "inner.py"
    steps.write_text(
        "from .inner import go\n\n\ndef step(client, batch):\n    return go(client, batch)\n"
    )
    inner.write_text("def go(client, batch):\n    return client.forward_backward(batch).result()\n")
    index = ProjectIndex()
    view = index.view(str(package / "loop.py"))
    assert index.module_sketch(str(steps), view).helpers.waits == frozenset({"step"})
    inner.write_text("def go(client, batch):\n    return client.forward_backward(batch)\n")
    index.forget(str(inner))
    assert index.module_sketch(str(steps), view).helpers.waits == frozenset()
    assert index.module_sketch(str(steps), view).helpers.submits == frozenset({"step"})


def test_an_edit_looks_no_module_up_again_but_a_file_on_disk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a module's file is depends on the disk only: a buffer's new text keeps the answers
    (an editor's every keystroke), a file created on disk (``forget``) asks again."""
    package = _project(tmp_path)
    loop, steps = package / "loop.py", package / "steps.py"
    index = ProjectIndex()
    asked: list[str] = []
    find = FileView._find_module_file

    def counting(view: FileView, module: str) -> str | None:
        asked.append(module)
        return find(view, module)

    monkeypatch.setattr(FileView, "_find_module_file", counting)
    assert _found(index, loop) == []
    assert "pkg.steps" in asked
    asked.clear()
    index.set_buffer(str(loop), (LOOP + "\n").encode())
    index.set_buffer(str(steps), WAITS.encode())
    assert _found(index, loop) == [(6, 15, "TNK101")]
    assert asked == []
    (package / "extra.py").write_text("")
    index.forget(str(package / "extra.py"))
    assert _found(index, loop) == [(6, 15, "TNK101")]
    assert "pkg.steps" in asked
