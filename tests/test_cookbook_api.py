"""The table of tinker-cookbook's API (``tinker_lint/model/facts/cookbook_api.py``) agrees with
the cookbook's source, as tinker-lint's own project model reads it.

The wheel of the newest checked release is downloaded once into ``.tinker_lint_cache/corpora/``
(``bench/corpora.py``, as the ``cookbook`` fixture gets it); offline, these tests are skipped and
say why. For each entry, the project model is made over the cookbook's checkout (the cookbook is
then the project) and the summary of the function it names must say what the entry says, field by
field. So a cookbook release that changes what one of them submits, waits for or returns fails
the suite until the table follows. Where the table says the model cannot follow the cookbook's
code (``through``), the model must still see nothing there (else ``through`` goes), each call on
the way must be in the source, and the last one's summary is compared instead.

The linter never imports the cookbook; neither does this test (it reads its files).
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from tests.bench_scripts import load as load_bench_script
from tests.conftest import CORPORA
from tinker_lint.model.analyses.summaries import Summary
from tinker_lint.model.facts import cookbook_api
from tinker_lint.model.facts.cookbook_api import CookbookCallable
from tinker_lint.project.index import ProjectIndex

pytestmark = [pytest.mark.slow, pytest.mark.network]  # about 20 s: the cookbook modelled

ENTRIES = sorted(cookbook_api.CALLABLES)

# Public functions and methods of the table's modules that submit or wait, by the model, and are
# no entry: each with why. A new one in a release fails ``test_no_public_callable_left_out``.
LEFT_OUT = {
    # rl/train.py's whole training loops and entry points: called once per run, not per step.
    "tinker_cookbook.rl.train.do_sync_training": "a whole training loop, called once",
    "tinker_cookbook.rl.train.do_sync_training_with_stream_minibatch": "a whole training loop",
    "tinker_cookbook.rl.train.do_async_training": "a whole training loop, called once",
    "tinker_cookbook.rl.train.main": "the entry point of a run",
    # checkpoint_utils.py's manager: new in 0.6, its saves are cadence-driven by design.
    "tinker_cookbook.checkpoint_utils.CheckpointManager.save_periodic": "new in 0.6.0",
    "tinker_cookbook.checkpoint_utils.CheckpointManager.save_periodic_async": "new in 0.6.0",
    "tinker_cookbook.checkpoint_utils.CheckpointManager.save_final": "new in 0.6.0; once per run",
    "tinker_cookbook.checkpoint_utils.CheckpointManager.save_final_async": "new in 0.6.0",
    "tinker_cookbook.rl.metrics.score_sequences": "new in 0.6.1",
    "tinker_cookbook.eval.custom_evaluators.main": "the entry point of a script",
    # Interfaces: the model answers with their overrides in the module (the cookbook's Tinker
    # one), but a user's annotation of the interface may stand for the user's own class.
    "tinker_cookbook.completers.TokenCompleter.__call__": "an interface",
    "tinker_cookbook.completers.MessageCompleter.__call__": "an interface",
    "tinker_cookbook.preference.types.PreferenceModel.__call__": "an interface",
}


@pytest.fixture(scope="module")
def release() -> Path:
    """The unpacked wheel of the newest release the table was checked against."""
    corpora = load_bench_script("corpora")
    requirement = f"tinker-cookbook=={cookbook_api.NEWEST_CHECKED}"
    try:
        return Path(corpora.unpacked(requirement, CORPORA))
    except corpora.DownloadError as error:
        pytest.skip(f"tinker-cookbook {cookbook_api.NEWEST_CHECKED} cannot be downloaded: {error}")


@pytest.fixture(scope="module")
def index() -> ProjectIndex:
    return ProjectIndex()


def module_file(release: Path, module: str) -> Path:
    base = release.joinpath(*module.split("."))
    found = base.with_suffix(".py")
    return found if found.is_file() else base / "__init__.py"


def definition(release: Path, qualified: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` of a module-level function or of a method of a module-level class."""
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = module_file(release, ".".join(parts[:cut]))
        if path.is_file():
            break
    else:
        return None
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    for name in parts[cut:]:
        found = next(
            (
                node
                for node in body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name
            ),
            None,
        )
        if found is None:
            return None
        if isinstance(found, ast.ClassDef):
            body = found.body
        else:
            return found
    return None


def summary_of(index: ProjectIndex, release: Path, qualified: str) -> Summary | None:
    """What the project model says of ``qualified``, asked as a module of the cookbook asks."""
    module, name = cookbook_api.split(qualified)
    view = index.view(str(module_file(release, module)))
    head, _, rest = name.partition(".")
    return view.method(f"{module}.{head}", rest) if rest else view.function(qualified)


def as_table(summary: Summary | None) -> dict[str, object]:
    """The fields of a summary the table holds."""
    if summary is None:
        return {"none": True}

    def ref(site: object) -> tuple[str, str] | None:
        request = getattr(site, "request", site)
        return None if request is None else (request.client.value, request.name)

    return {
        "submits": sorted(r.value for r in summary.submits),
        "first_submit": ref(summary.submit),
        "waits": sorted(r.value for r in summary.waits),
        "first_wait": ref(summary.wait),
        "last_wait": ref(summary.last_wait),
        "blocks": summary.blocks,
        "waits_in_loop": summary.waits_in_loop,
        "returns_futures": [r.name for r in summary.returns],
        "returns_clients": sorted(c.value for c in summary.returns_clients),
        "makes_clients": summary.makes_clients,
        "refreshes_sampler": summary.refreshes_sampler,
        "mutates_self": summary.mutates_self,
        "waits_params": list(summary.waits_params),
    }


def entry_as_table(entry: CookbookCallable) -> dict[str, object]:
    def ref(request: tuple[cookbook_api.Client, str] | None) -> tuple[str, str] | None:
        return None if request is None else (request[0].value, request[1])

    return {
        "submits": sorted(r.value for r in entry.submits),
        "first_submit": ref(entry.first_submit),
        "waits": sorted(r.value for r in entry.waits),
        "first_wait": ref(entry.first_wait),
        "last_wait": ref(entry.last_wait or entry.first_wait),
        "blocks": entry.blocks,
        "waits_in_loop": entry.waits_in_loop,
        "returns_futures": [],  # no entry hands back a future
        "returns_clients": sorted(c.value for c in entry.returns_clients),
        "makes_clients": False,
        "refreshes_sampler": entry.refreshes_sampler,
        "mutates_self": False,
        "waits_params": [],
    }


def test_the_release_is_the_one_the_table_names(release: Path) -> None:
    version = release / "tinker_cookbook" / "_version.py"
    assert f"'{cookbook_api.NEWEST_CHECKED}'" in version.read_text(encoding="utf-8")


@pytest.mark.parametrize("qualified", ENTRIES)
def test_each_entry_is_what_the_model_says_of_the_source(
    qualified: str, release: Path, index: ProjectIndex
) -> None:
    entry = cookbook_api.CALLABLES[qualified]
    node = definition(release, qualified)
    assert node is not None, f"{qualified} is not defined in tinker-cookbook"
    assert isinstance(node, ast.AsyncFunctionDef) == entry.is_async, qualified
    found = summary_of(index, release, qualified)
    if not entry.through:
        assert as_table(found) == entry_as_table(entry), qualified
        return
    # The model does not follow this one (a strategy object, gathered coroutines): if it now
    # does, the entry's ``through`` is no longer needed and its own summary is the evidence.
    assert found is None or not (found.submits or found.waits), (
        f"the model now sees what {qualified} does: drop its `through`"
    )
    path = [qualified, *entry.through]
    for caller, callee in itertools.pairwise(path):
        caller_def = definition(release, caller)
        assert caller_def is not None, f"{caller} is not defined in tinker-cookbook"
        last = callee.rsplit(".", 1)[1]
        assert last in _called_names(caller_def), f"{caller} no longer calls {last}"
    assert as_table(summary_of(index, release, path[-1])) == entry_as_table(entry), qualified


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute):
                names.add(func.attr)
            elif isinstance(func, ast.Name):
                names.add(func.id)
    return names


@pytest.mark.parametrize("alias", sorted(cookbook_api.ALIASES))
def test_each_reexport_is_imported_from_the_module_defining_it(alias: str, release: Path) -> None:
    module, _, name = alias.rpartition(".")
    target = cookbook_api.ALIASES[alias]
    tree = ast.parse(module_file(release, module).read_text(encoding="utf-8"))
    assert any(
        isinstance(node, ast.ImportFrom)
        and node.module == target.rpartition(".")[0]
        and any(a.name == name and a.asname in (None, name) for a in node.names)
        for node in tree.body
    ), f"{module} does not import {name} from {target.rpartition('.')[0]}"


def test_no_public_callable_left_out(release: Path, index: ProjectIndex) -> None:
    """Every public function and public class's method of the table's modules that submits or
    waits, by the model, is an entry or is left out with a reason (``LEFT_OUT``)."""
    missing = []
    for module in sorted(cookbook_api.MODULES):
        tree = ast.parse(module_file(release, module).read_text(encoding="utf-8"))
        names = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.append(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                names += [
                    f"{module}.{node.name}.{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
        for qualified in names:
            if qualified.rsplit(".", 1)[1].startswith("_") and not qualified.endswith("__call__"):
                continue
            if qualified in cookbook_api.CALLABLES or qualified in LEFT_OUT:
                continue
            found = summary_of(index, release, qualified)
            if found is not None and (found.submits or found.waits):
                missing.append(qualified)
    assert missing == []
