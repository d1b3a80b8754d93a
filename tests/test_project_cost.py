"""What the project index does in a run, counted (not timed): a project with no Tinker or torch
code makes no sketch and parses no module for one; a project with helpers sketches each module
once per run, however many files import it (issue 30). A regression here is a run that pays again
for what it already knows."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.io.files import is_listing_key, listing_directory
from tinker_lint.io.settings import Settings
from tinker_lint.project import index as index_module
from tinker_lint.run.runner import run_paths

SETTINGS = Settings(tinker_version=Version("0.38.0"))

# Words every old text test took for "may wait" (``result``, ``await``, ``asyncio``, ``sample``),
# imports in a cycle, a chain, and a module imported by every other: no Tinker anywhere.
NO_TINKER = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "pkg/__init__.py": "from .a import f\n",
    "pkg/a.py": (
        "import asyncio\n\nfrom pkg import b\n\n\nasync def f(x):\n"
        "    result = await asyncio.sleep(0, x)\n    return b.g(result)\n"
    ),
    "pkg/b.py": "import random\n\nfrom .a import f\n\n\ndef g(x):\n    return random.sample(x, 1)\n",
    "pkg/c.py": "from pkg.a import f\nfrom pkg.b import g\n\n\ndef h(x):\n    return g(f(x))\n",
    "pkg/d.py": "from . import c\n\n\ndef main():\n    for x in range(3):\n        c.h(x)\n",
}

STEPS = """import tinker


def step(training_client: tinker.TrainingClient, batch):
    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()
"""
UTIL = "from pkg.steps import step\n\n\ndef twice(training_client, batch):\n    step(training_client, batch)\n    return step(training_client, batch)\n"
LOOP = """import tinker

from pkg.steps import step
from pkg.util import twice


def train(training_client: tinker.TrainingClient, batches):
    for batch in batches:
        step(training_client, batch)
        twice(training_client, batch)
"""
OTHER = "from pkg.util import twice\n\n\ndef run(client, batches):\n    return [twice(client, b) for b in batches]\n"
WITH_HELPERS = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "pkg/__init__.py": "",
    "pkg/steps.py": STEPS,
    "pkg/util.py": UTIL,
    "pkg/loop.py": LOOP,
    "pkg/other.py": OTHER,
}


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return sorted(root.rglob("*.py"))


@pytest.fixture
def fresh_index() -> Iterator[None]:
    saved = index_module._SHARED
    index_module._SHARED = None
    yield
    index_module._SHARED = saved


def _counts(paths: list[Path]) -> tuple[dict[str, int], list[tuple[str, str, int, int]]]:
    index_module._SHARED = None
    run = run_paths([str(p) for p in paths], SETTINGS, jobs=1)
    found = sorted((Path(d.path).name, d.code, d.line, d.col) for d in run.diagnostics)
    index = index_module.project_index()
    return dict(index.counts), found


def test_a_project_without_tinker_makes_no_sketch_and_parses_no_module(tmp_path, fresh_index):
    paths = _write(tmp_path, NO_TINKER)
    counts, found = _counts(paths)
    assert found == []
    assert counts == {}


def test_each_module_is_sketched_once_per_run_however_many_files_import_it(tmp_path, fresh_index):
    paths = _write(tmp_path, WITH_HELPERS)
    counts, found = _counts(paths)
    # steps.py and util.py are what the others import; each is parsed and walked once, though
    # loop.py, other.py and util.py all ask about steps.py.
    assert counts["sketch walks"] == 2
    assert counts["trees"] == 2
    assert found == [("loop.py", "TNK102", 9, 9), ("util.py", "TNK101", 5, 5)]
    # Linted alone, each file asks only what it imports: the same findings.
    for path in paths:
        alone = _counts([path])[1]
        assert alone == [f for f in found if f[0] == path.name]


def test_what_a_file_without_tinker_reaches_is_among_its_cached_dependencies(tmp_path, fresh_index):
    """A file that names no Tinker, whose imports name none either, is answered without its
    helpers; its cache entry depends on every module that answer read, so that one of them
    coming to wait on Tinker lints it again."""
    from tinker_lint.run.cache import Cache

    root = tmp_path / "p"
    paths = _write(
        root,
        {
            "pyproject.toml": '[project]\nname = "p"\n',
            "b.py": "def step(client, batch):\n    return batch\n",
            "a.py": "from b import step\n\n\nasync def go(client, batch):\n    step(client, batch)\n",
        },
    )

    def run() -> tuple[list[tuple[str, str, int, int]], int]:
        index_module._SHARED = None
        done = run_paths(
            [str(p) for p in paths], SETTINGS, jobs=1, cache=Cache(tmp_path / "c", SETTINGS)
        )
        return sorted(
            (Path(d.path).name, d.code, d.line, d.col) for d in done.diagnostics
        ), done.cached

    assert run() == ([], 0)
    assert run() == ([], 2)
    (root / "b.py").write_text(
        "def step(training_client, batch):\n"
        '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()\n',
        encoding="utf-8",
    )
    assert run() == ([("a.py", "TNK104", 5, 5)], 0)


@pytest.mark.parametrize("where", ["b.py", "b/__init__.py", "src/b.py"])
def test_a_module_that_appears_lints_the_files_that_import_it_again(tmp_path, fresh_index, where):
    """An import that named no module of the project when a file was cached is among what its
    entry depends on: the module appearing (beside it, as a package, under ``src/``) lints the file
    again, as a run without the cache would."""
    from tinker_lint.run.cache import Cache

    root = tmp_path / "p"
    paths = _write(
        root,
        {
            "pyproject.toml": '[project]\nname = "p"\n',
            "a.py": "from b import step\n\n\nasync def go(client, batch):\n    step(client, batch)\n",
        },
    )

    def run(cache: bool = True) -> tuple[list[tuple[str, str, int, int]], int]:
        index_module._SHARED = None
        done = run_paths(
            [str(p) for p in paths],
            SETTINGS,
            jobs=1,
            cache=Cache(tmp_path / "c", SETTINGS) if cache else None,
        )
        return sorted(
            (Path(d.path).name, d.code, d.line, d.col) for d in done.diagnostics
        ), done.cached

    assert run() == ([], 0)
    assert run() == ([], 1)
    _write(
        root,
        {
            where: "def step(training_client, batch):\n"
            '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()\n'
        },
    )
    assert run(cache=False) == ([("a.py", "TNK104", 5, 5)], 0)
    assert run() == ([("a.py", "TNK104", 5, 5)], 0)
    assert run() == ([("a.py", "TNK104", 5, 5)], 1)


def test_where_a_helpers_imports_were_looked_for_is_among_its_importers_dependencies(
    tmp_path, fresh_index
):
    """``a`` calls ``lib/b.py``'s helper, whose own import of ``c`` names no module yet: the
    listing of ``lib/`` (read only to look for ``b``'s imports) is among what ``a``'s entry
    depends on, through ``b``'s answers, so that ``lib/c.py`` appearing lints ``a`` again."""
    import json

    from tinker_lint.run.cache import Cache

    root = tmp_path / "p"
    helper = (
        "import tinker\n\nfrom c import step\n\n\n"
        "def go(training_client: tinker.TrainingClient, batch):\n"
        '    training_client.forward_backward(batch, loss_fn="cross_entropy").result()\n'
        "    return step(batch)\n"
    )
    user = "from lib.b import go\n\n\nasync def run(client, batch):\n    go(client, batch)\n"
    _write(
        root,
        {"pyproject.toml": '[project]\nname = "p"\n', "lib/b.py": helper, "a.py": user},
    )
    index_module._SHARED = None
    cache = Cache(tmp_path / "c", SETTINGS)
    done = run_paths([str(root / "a.py")], SETTINGS, jobs=1, cache=cache)
    assert [(d.code, d.line) for d in done.diagnostics] == [("TNK104", 5)]
    (entry,) = [json.loads(p.read_text()) for p in cache.directory.glob("*.json")]
    lib = str(root / "lib")
    assert entry["depends"][str(root / "lib" / "b.py")]  # the helper's bytes
    # Where its imports were looked for: ``lib/`` held neither ``c.py`` nor ``c/`` (one entry for
    # the directory, whatever was looked for in it).
    (key,) = [k for k in entry["depends"] if is_listing_key(k) and listing_directory(k) == lib]
    assert {"c.py", "c" + os.sep} <= set(key.split("\0")[1:])
    assert "c.py" not in entry["depends"][key]
    (root / "lib" / "c.py").write_text("def step(batch):\n    return batch\n")
    index_module._SHARED = None
    again = run_paths([str(root / "a.py")], SETTINGS, jobs=1, cache=Cache(tmp_path / "c", SETTINGS))
    assert again.cached == 0 and [(d.code, d.line) for d in again.diagnostics] == [("TNK104", 5)]
