"""The project index's store (``run.cache.IndexStore``), counted, not timed: a second flake8 run
(a new process each time: here a new index) over an unchanged project makes no sketch walk, parses
no module and builds no model of a helper module; an edit of a helper's text makes again exactly
what was made from it; a damaged store is a miss, never an error; and the findings are the same
with the store cold, warm, damaged or off (issue 30's plugin row: the editor's case)."""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.flake8_plugin import TinkerLintPlugin
from tinker_lint.io.settings import Settings
from tinker_lint.project import index as index_module
from tinker_lint.run.cache import INDEX_FORMAT, Cache
from tinker_lint.run.runner import run_paths

# A chain (loop -> util -> steps), a cycle through an interface (base <-> impl) and a module
# with a class whose ``__call__`` waits: every kind of answer the store keeps.
STEPS = """import tinker


def step(training_client: tinker.TrainingClient, batch):
    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()
"""
UTIL = """import tinker

from pkg.steps import step


def twice(training_client: tinker.TrainingClient, batch):
    first = step(training_client, batch)
    training_client.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
    return first, step(training_client, batch)
"""
UTIL_BY_OBJECT = """import tinker

from pkg.impl import Real


def twice(training_client: tinker.TrainingClient, batch):
    real = Real()
    return real(training_client, batch), real(training_client, batch)
"""
BASE = """from pkg import impl


class Sampler:
    def draw(self, client, prompt):
        raise NotImplementedError


def make():
    return impl.Real()
"""
IMPL = """from pkg.base import Sampler


class Real(Sampler):
    def draw(self, client, prompt):
        return client.sample(prompt=prompt, num_samples=1, sampling_params=None).result()

    def __call__(self, client, prompt):
        return self.draw(client, prompt)
"""
LOOP = """import tinker

from pkg.base import Sampler
from pkg.impl import Real
from pkg.steps import step
from pkg.util import twice


def train(training_client: tinker.TrainingClient, batches):
    for batch in batches:
        step(training_client, batch)
        twice(training_client, batch)


def sample_all(sampler: Sampler, client, prompts):
    for prompt in prompts:
        sampler.draw(client, prompt)


def sample_each(client, prompts):
    real = Real()
    return [real(client, p) for p in prompts]
"""
PROJECT = {
    "pyproject.toml": '[project]\nname = "p"\n\n[tool.tinker-lint]\ntinker-version = "0.38"\n',
    "pkg/__init__.py": "",
    "pkg/steps.py": STEPS,
    "pkg/util.py": UTIL,
    "pkg/base.py": BASE,
    "pkg/impl.py": IMPL,
    "pkg/loop.py": LOOP,
}
WORK = ("sketch walks", "trees", "models")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "p"
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    saved = index_module._SHARED, TinkerLintPlugin._options, TinkerLintPlugin._not_shown
    yield root
    index_module._SHARED = None
    index_module._SHARED, TinkerLintPlugin._options, TinkerLintPlugin._not_shown = saved


def _plugin(path: Path, *, no_cache: bool = False) -> tuple[list[tuple[int, int, str]], dict]:
    """flake8's run of the plugin on ``path`` in a new process (a new project index): its
    findings, and what the index did."""
    index_module._SHARED = None
    TinkerLintPlugin.parse_options(argparse.Namespace(tinker_no_cache=no_cache))
    text = path.read_text(encoding="utf-8")
    plugin = TinkerLintPlugin(ast.parse(text), str(path), text.splitlines(keepends=True))
    found = [(line, col, message.split()[0]) for line, col, message, _ in plugin.run()]
    return found, dict(index_module.project_index().counts)


def _made() -> dict[str, object]:
    """Everything the index of the last run made: each module's sketch, and its facts by budget
    (with the files each was made from), as plain data."""
    index = index_module.project_index()
    made: dict[str, object] = {}
    for path, (_, sketch) in index._sketches.items():
        made[f"sketch {path}"] = (
            index_module._sketch_to_json(sketch),
            sketch.aliases,
            sketch.depends,
        )
    for path, answers in index._facts.items():
        kept = {"complete": answers.complete, "needs": answers.needs, **answers.partial}
        made[f"facts {path}"] = {
            budget: None
            if facts is None or isinstance(facts, int)
            else (index_module._facts_to_json(facts, None), facts.depends)
            for budget, facts in kept.items()
        }
    return made


def _same_as_without_store(path: Path) -> tuple[list[tuple[int, int, str]], dict]:
    """The plugin's run on ``path`` with the store: its findings and everything its index made
    are those of a run without it."""
    found, counts = _plugin(path)
    made = _made()
    assert (found, made) == (_plugin(path, no_cache=True)[0], _made())
    return found, counts


def _work(counts: dict) -> dict[str, int]:
    return {name: counts.get(name, 0) for name in WORK}


def _entries(root: Path) -> list[Path]:
    return sorted((root / ".tinker_lint_cache" / INDEX_FORMAT).rglob("*.json"))


def test_a_second_run_over_an_unchanged_project_makes_nothing_again(project):
    loop = project / "pkg" / "loop.py"
    off, off_counts = _plugin(loop, no_cache=True)
    assert off  # the helpers' waits are found at their calls
    assert not (project / ".tinker_lint_cache").exists()  # --tinker-no-cache writes nothing
    cold, cold_counts = _plugin(loop)
    made = _made()
    assert cold == off
    assert _work(cold_counts) == _work(off_counts)
    assert all(cold_counts[name] > 0 for name in WORK)
    assert cold_counts["stored"] == len(_entries(project)) > 0
    warm, warm_counts = _plugin(loop)
    assert warm == cold
    assert _made() == made  # what was read back is what was made
    assert _work(warm_counts) == {"sketch walks": 0, "trees": 0, "models": 0}
    assert "stored" not in warm_counts  # a warm run writes nothing
    assert warm_counts["stored facts read"] > 0 and warm_counts["stored sketches read"] > 0


def _walked(counts: dict) -> dict[str, int]:
    return {name: counts.get(name, 0) for name in (*WORK, "stored facts stale")}


def test_an_edited_helper_is_made_again_and_only_what_was_made_from_it(project):
    loop = project / "pkg" / "loop.py"
    cold, _ = _plugin(loop)
    steps = project / "pkg" / "steps.py"
    # New text, same answers: a function nobody calls, below the others (no line moves).
    steps.write_text(STEPS + "\n\ndef unused():\n    return 1\n", encoding="utf-8")
    found, counts = _same_as_without_store(loop)
    assert found == cold
    # steps.py alone: parsed, walked and modelled again; util.py's walk reads what steps.py's
    # sketch says (unchanged), its facts' questions get the same answers: both read back.
    assert _walked(counts) == {"sketch walks": 1, "trees": 1, "models": 1, "stored facts stale": 0}
    assert _plugin(loop)[1].get("sketch walks", 0) == 0

    # Now steps.step no longer waits: steps.py, and util.py (made from its answers), again.
    steps.write_text(STEPS.replace(".result()", ""), encoding="utf-8")
    found, counts = _same_as_without_store(loop)
    assert found != cold
    assert counts["sketch walks"] == 2 and counts["trees"] == 2  # each walked once, parsed once
    assert counts["models"] == 2 and counts["stored facts stale"] >= 1

    # In an import cycle (base.py <-> impl.py): base.py is parsed once and walked twice (the
    # cycle's fixpoint, as without the store); impl.py's walks read what they read before.
    base = project / "pkg" / "base.py"
    base.write_text(BASE.replace("raise NotImplementedError", "return None"), encoding="utf-8")
    found, counts = _same_as_without_store(loop)
    assert _walked(counts) == {"sketch walks": 2, "trees": 1, "models": 0, "stored facts stale": 0}

    # util.py imports another module of the project now: what its tree imports is read again.
    util = project / "pkg" / "util.py"
    util.write_text(UTIL_BY_OBJECT, encoding="utf-8")
    found, counts = _same_as_without_store(loop)
    assert counts["trees"] == 1 and counts["sketch walks"] == 1


# The same text in two places: what it imports, and the classes it names, are not the same.
IMPL_HERE = """from .base import Sampler


class Real(Sampler):
    def __call__(self, client, prompt):
        return client.sample(prompt=prompt, num_samples=1, sampling_params=None).result()
"""
LOCAL = """class Base:
    def go(self, client, prompt):
        return client.sample(prompt=prompt, num_samples=1, sampling_params=None).result()


class Real(Base):
    pass
"""
TWO = """import tinker

from pkg.a.impl import Real as A
from pkg.a.local import Real as LA
from pkg.b.impl import Real as B
from pkg.b.local import Real as LB


def sample_each(client: tinker.SamplingClient, prompts):
    a, b, la, lb = A(), B(), LA(), LB()
    for p in prompts:
        a(client, p)
        b(client, p)
        la.go(client, p)
        lb.go(client, p)
"""


def test_the_same_text_in_two_modules_is_two_sketches(project):
    for package in ("a", "b"):
        (project / "pkg" / package).mkdir()
        (project / "pkg" / package / "__init__.py").write_text("")
        (project / "pkg" / package / "impl.py").write_text(IMPL_HERE)
        (project / "pkg" / package / "local.py").write_text(LOCAL)
    (project / "pkg" / "a" / "base.py").write_text(BASE)  # pkg.b has none: no alias there
    two = project / "pkg" / "two.py"
    two.write_text(TWO)
    cold, _ = _same_as_without_store(two)
    assert cold
    assert _same_as_without_store(two)[0] == cold
    # A new file: pkg.b.impl's text is the same, but its import now names a module of the
    # project (its base class is qualified).
    (project / "pkg" / "b" / "base.py").write_text(BASE)
    _, counts = _same_as_without_store(two)
    assert counts["sketch walks"] >= 1


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{",
        b"\xff\xfe not json",
        b"[]",
        b"null",
        b'{"helpers": [[], [], []], "classes": [], "callable": []}',
        b'{"functions": [["f", {"name": "f"}]], "classes": [], "asked": null}',
        b'{"functions": [], "classes": [], "asked": [["open", ["/etc/passwd"], null]]}',
        b'[["pkg.steps", [["step", "\\u001b[31mstep"]]]]',
        b"9" * 100_000,
        b"[" * 100_000,
        "truncated",
        "another entry's",
        "a value of another shape",
    ],
)
def test_a_damaged_store_is_a_miss_never_an_error(project, damage):
    loop = project / "pkg" / "loop.py"
    cold, cold_counts = _plugin(loop)
    entries = _entries(project)
    first = entries[0].read_bytes()
    for entry in entries:
        if damage == "truncated":
            entry.write_bytes(entry.read_bytes()[:-1])
        elif damage == "another entry's":
            entry.write_bytes(first if entry != entries[0] else entries[1].read_bytes())
        elif damage == "a value of another shape":  # well made, but not what the index wrote
            body = json.dumps([entry.stem, {"not": "ours"}]).encode()
            entry.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        else:
            entry.write_bytes(damage)
    found, counts = _same_as_without_store(loop)
    assert found == cold
    assert _work(counts) == _work(cold_counts)  # everything made again...
    assert counts["stored"] == len(entries)  # ...and stored again
    assert _work(_plugin(loop)[1]) == {"sketch walks": 0, "trees": 0, "models": 0}


def test_an_entry_that_is_not_a_regular_file_is_a_miss(project):
    loop = project / "pkg" / "loop.py"
    cold, cold_counts = _plugin(loop)
    for number, entry in enumerate(_entries(project)):
        elsewhere = project.parent / f"elsewhere-{number}.json"
        elsewhere.write_bytes(entry.read_bytes())  # the entry itself, outside the cache
        entry.unlink()
        if number % 2:
            entry.mkdir()
        else:
            entry.symlink_to(elsewhere)  # never followed: a miss
    found, counts = _same_as_without_store(loop)
    assert found == cold
    assert _work(counts) == _work(cold_counts)


def test_a_store_that_cannot_be_written_is_no_error(project):
    loop = project / "pkg" / "loop.py"
    (project / ".tinker_lint_cache").write_text("a file, not a directory\n")
    _, counts = _same_as_without_store(loop)
    assert counts["stored"] > 0  # asked to store, it could not: the run went on


def test_the_cli_keeps_the_store_beside_its_results_cache_and_no_cache_keeps_neither(
    project, tmp_path
):
    settings = Settings(tinker_version=Version("0.38.0"))
    paths = [str(p) for p in sorted(project.rglob("*.py"))]

    def run(cache: Cache | None) -> tuple[list[tuple[str, str, int, int]], dict[str, int]]:
        index_module._SHARED = None
        done = run_paths(paths, settings, jobs=1, cache=cache)
        found = sorted((Path(d.path).name, d.code, d.line, d.col) for d in done.diagnostics)
        counts = dict(index_module.project_index().counts)
        assert index_module.project_index().store is None  # only for the run's own files
        return found, counts

    plain, _ = run(None)
    assert plain
    cache_dir = tmp_path / "cache"
    assert not cache_dir.exists()
    cold, _ = run(Cache(cache_dir, settings))
    assert cold == plain
    assert list((cache_dir / INDEX_FORMAT).rglob("*.json"))
    # util.py changes: it and loop.py are linted again (the results cache), from the store's
    # sketches and facts of everything else; util.py's own text is walked and modelled again.
    util = project / "pkg" / "util.py"
    util.write_text(UTIL + "\n\ndef unused():\n    return 2\n", encoding="utf-8")
    found, counts = run(Cache(cache_dir, settings))
    assert found == plain
    assert counts["sketch walks"] == 1 and counts["models"] == 1
    assert run(None)[0] == plain


def test_what_is_stored_is_plain_json_under_the_cache_tag(project):
    _plugin(project / "pkg" / "loop.py")
    cache = project / ".tinker_lint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: ")
    assert (cache / ".gitignore").is_file()
    for entry in _entries(project):
        _, body = entry.read_text(encoding="ascii").split("\n")
        assert json.loads(body)[0] == entry.stem
        assert not any(name.endswith(".tmp") for name in os.listdir(entry.parent))
