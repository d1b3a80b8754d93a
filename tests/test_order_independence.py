"""A file's findings depend only on it and the project files it imports: never on the run's other
files, their order, the results cache or the jobs (issue 29).

The project index (``project/index.py``) summarises the modules a file calls into, at most
``MAX_DEPTH`` modules down. It used to keep an answer made while a recursion was cut (the depth
limit, an import cycle) and hand it to the next file that asked, from wherever that file stood: a
chain one module too deep for ``deep.py`` alone was followed to its wait when ``short.py`` (which
reaches the same modules from nearer) had been linted first in the process. Here a small project
with such a chain and an import cycle is linted alone, in both orders and after the others, each
time with exact expectations; ``test_seeded_cookbook_*`` does the same on tinker-cookbook with
Tinker snippets seeded into its functions (``bench/seed_snippets.py``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from tests.bench_scripts import load as load_bench_script
from tinker_lint.io.settings import Settings
from tinker_lint.project import index as index_module
from tinker_lint.run.cache import Cache
from tinker_lint.run.runner import run_paths

SETTINGS = Settings(tinker_version=Version("0.38.0"))
_SAVE = '\n\ndef save{n}(training_client: tinker.TrainingClient):\n    return training_client.save_state("{n}")\n'

# pkg.m1 -> m2 -> m3 -> m4 -> m5 (waits): five modules; pkg.a <-> pkg.b, an import cycle.
# (Each relay makes a request of its own: a module that makes none offers no summary.)
PROJECT: dict[str, str] = {
    "pyproject.toml": '[project]\nname = "p"\n',
    "pkg/__init__.py": "",
    **{
        f"pkg/m{i}.py": (
            f"import tinker\n\nfrom pkg.m{i + 1} import step{i + 1}\n\n\n"
            f"def step{i}(training_client: tinker.TrainingClient, batch):\n"
            f"    return step{i + 1}(training_client, batch)\n" + _SAVE.format(n=i)
        )
        for i in range(1, 5)
    },
    "pkg/m5.py": (
        "def step5(training_client, batch):\n"
        '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()\n'
    ),
    "pkg/a.py": (
        "import tinker\n\nfrom pkg.b import g\n\n\n"
        "def f(training_client: tinker.TrainingClient, batch):\n"
        "    return g(training_client, batch)\n\n\n"
        "def h(training_client: tinker.TrainingClient, batch):\n"
        '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()\n'
    ),
    "pkg/b.py": (
        "import tinker\n\nfrom pkg.a import h\n\n\n"
        "def g(training_client: tinker.TrainingClient, batch):\n"
        "    return h(training_client, batch)\n" + _SAVE.format(n="b")
    ),
    # Each of these calls into the project from an ``async def`` (line 6, column 5).
    "pkg/deep.py": "from pkg.m1 import step1 as helper\n",  # five modules down: beyond MAX_DEPTH
    "pkg/short.py": "from pkg.m4 import step4 as helper\n",  # two modules down
    "pkg/cyc.py": "from pkg.a import f as helper\n",  # round the cycle a -> b -> a
}
for _name in ("deep", "short", "cyc"):
    PROJECT[f"pkg/{_name}.py"] = (
        "import tinker\n"
        + PROJECT[f"pkg/{_name}.py"]
        + "\n\nasync def rollout(training_client: tinker.TrainingClient, batch):\n"
        "    helper(training_client, batch)\n"
    )

EXPECTED = {
    "deep.py": [],
    "short.py": [("TNK104", 6, 5)],
    "cyc.py": [("TNK104", 6, 5)],
}
CALLERS = ("deep.py", "short.py", "cyc.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def fresh_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A new process's project index (the tests' process keeps one otherwise)."""
    monkeypatch.setattr(index_module, "_SHARED", None)
    yield


def _findings(paths: list[Path], *, fresh: bool = True, jobs: int = 1, cache: Cache | None = None):
    if fresh:
        index_module._SHARED = None
    run = run_paths([str(p) for p in paths], SETTINGS, jobs=jobs, cache=cache)
    found: dict[str, list[tuple[str, int, int]]] = {}
    for d in run.diagnostics:
        found.setdefault(os.path.basename(d.path), []).append((d.code, d.line, d.col))
    return {name: sorted(items) for name, items in sorted(found.items())}


def test_a_chain_and_a_cycle_give_the_same_findings_alone_and_in_any_order(project, fresh_index):
    callers = [project / "pkg" / name for name in CALLERS]
    for name in CALLERS:
        alone = _findings([project / "pkg" / name])
        assert alone.get(name, []) == EXPECTED[name], name
    for order in itertools.permutations(callers):
        found = _findings(list(order))
        assert {n: found.get(n, []) for n in CALLERS} == EXPECTED, [p.name for p in order]
    # One process for all: what earlier runs left in the index changes nothing.
    index_module._SHARED = None
    for order in itertools.permutations(callers):
        found = _findings(list(order), fresh=False)
        assert {n: found.get(n, []) for n in CALLERS} == EXPECTED, [p.name for p in order]


def test_every_module_of_the_project_alone_equals_the_whole_run(project, fresh_index):
    files = sorted((project / "pkg").glob("*.py"))
    whole = _findings(files)
    assert _findings(list(reversed(files))) == whole
    for path in files:
        alone = _findings([path])
        assert alone.get(path.name, []) == whole.get(path.name, []), path.name


# --- tinker-cookbook with seeded snippets (bench/seed_snippets.py) ---------------------------
def _rows(run) -> list[tuple[str, int, int, str, str]]:
    return sorted((d.path, d.line, d.col, d.code, d.message) for d in run.diagnostics)


@pytest.mark.slow
@pytest.mark.network
def test_seeded_cookbook_findings_depend_on_no_other_file(cookbook, tmp_path, fresh_index):
    package = load_bench_script("seed_snippets").seed_tree(cookbook, tmp_path / "seeded")
    files = sorted(str(p) for p in package.rglob("*.py"))

    def run(paths, **options):
        index_module._SHARED = None  # a new process
        return _rows(run_paths(paths, SETTINGS, **options))

    # A quarter of the files (every 4th, sorted) make the run: the index reads the rest as they
    # are imported, and the test keeps to about a minute on two cores.
    files = files[::4]
    whole = run(files, jobs=1)
    assert len(whole) > 200, len(whole)  # the seeds give findings
    # Reversed with two processes (each differs from the first run in both; a minute to keep to).
    assert run(list(reversed(files)), jobs=2) == whole
    # Warm after a cache filled by a subset of the files (every 7th), forward and one process.
    cache_dir = tmp_path / "cache"
    subset = files[::7]
    assert run(subset, jobs=1, cache=Cache(cache_dir, SETTINGS)) == [
        r for r in whole if r[0] in set(subset)
    ]
    assert run(files, jobs=1, cache=Cache(cache_dir, SETTINGS)) == whole
    # Each file alone (every 15th of the run's).
    by_file: dict[str, list[tuple[str, int, int, str, str]]] = {}
    for row in whole:
        by_file.setdefault(row[0], []).append(row)
    for path in files[::15]:
        assert run([path], jobs=1) == by_file.get(path, []), path


def test_the_seeded_tree_is_deterministic_and_parses(project, tmp_path):
    seed = load_bench_script("seed_snippets").seed_tree

    def texts(out: Path) -> dict[str, str]:
        package = seed(project / "pkg", out)
        return {p.relative_to(package).as_posix(): p.read_text() for p in package.rglob("*.py")}

    first, second = texts(tmp_path / "one"), texts(tmp_path / "two")
    assert first == second
    assert any("_tl_chain_" in text for text in first.values())
    for text in first.values():
        compile(text, "<seeded>", "exec")
