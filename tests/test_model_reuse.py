"""Function summaries kept from one lint of a file to the next (``model/reuse.py``, the server's
lint on every edit): a summary is taken over only where a fresh lint makes the same one, so the
findings after each edit are a fresh lint's, to the line of the wait a message names."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.incremental import buffers
from tinker_lint.incremental.carry import BufferCarry, for_buffer
from tinker_lint.io.settings import Settings
from tinker_lint.model import reuse
from tinker_lint.model.analyses.summaries import LineOf
from tinker_lint.model.query import SemanticModel
from tinker_lint.project.index import ProjectIndex
from tinker_lint.run.engine import lint_text
from tinker_lint.syntax import parse

_keys = itertools.count()


pytestmark = pytest.mark.usefixtures("fresh_buffers")


PROGRAM = """\
import tinker

service_client = tinker.ServiceClient()
tc = service_client.create_lora_training_client(base_model="Qwen/Qwen3-8B").result()
adam = tinker.AdamParams(learning_rate=1e-4)


def log(metrics):
    print(metrics)


def fwd_bwd(batch):
    return tc.forward_backward(batch, loss_fn="cross_entropy").result()


def train(batches):
    for batch in batches:
        out = fwd_bwd(batch)
        tc.optim_step(adam)
        log(out)
"""
# What TNK101 says of ``train``'s call of ``fwd_bwd``, whose wait is at ``line``.
MESSAGE = (
    "Waiting for `fwd_bwd()` before submitting `optim_step`, which does not need it\n"
    "help: `fwd_bwd()` waits for `forward_backward` (line {line}). Submit `optim_step` first, "
    "then wait for both (requests run in submission order; `tinker_cookbook.supervised.train` "
    "pipelines this)"
)


def _findings(diagnostics: list[Diagnostic]) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.col, d.code, f"{d.message}\nhelp: {d.help}") for d in diagnostics]


def _lint_edits(
    texts: list[str], path: str, project: ProjectIndex | None = None
) -> list[list[tuple[int, int, str, str]]]:
    """Each text linted as the server lints an edited buffer (the parse and the summaries of the
    one before kept), checked against a fresh lint of it; the findings of each."""
    settings = Settings()
    found = []
    for text in texts:
        served = lint_text(text, path, settings, project=project)
        fresh_project = ProjectIndex() if project is not None else None
        fresh = lint_text(text, path, settings, project=fresh_project, reuse_parse=False)
        assert _findings(served.diagnostics) == _findings(fresh.diagnostics)
        found.append(_findings(served.diagnostics))
    return found


def _model(text: str, key: str) -> SemanticModel:
    """The model the engine makes of ``text`` under ``key``, its summaries settled."""
    model = SemanticModel(parse.parse_module(text, key=key), carry=for_buffer(key))
    model.helpers.summaries.settle()
    return model


def _summaries(model: SemanticModel) -> list[dict[str, object]]:
    return [model.summary_of(f).to_json() for f in model.functions]


def _fresh(text: str) -> list[dict[str, object]]:
    return _summaries(SemanticModel(parse.parse_module(text)))


def _path() -> str:
    return f"/reuse-test/{next(_keys)}/train.py"


def test_an_edit_of_one_function_takes_over_the_others_summaries() -> None:
    key = _path()
    assert _model(PROGRAM, key).helpers.summaries.taken_over == 0
    edited = PROGRAM.replace("    print(metrics)", "    print(metrics, flush=True)")
    model = _model(edited, key)
    # fwd_bwd and train: ``log``'s summary is the same as before, and ``train`` reads only that.
    assert model.helpers.summaries.taken_over == 2
    assert _summaries(model) == _fresh(edited)


def test_a_line_added_above_moves_the_wait_the_message_names() -> None:
    edited = PROGRAM.replace("    print(metrics)\n", "    # shown\n\n    print(metrics)\n")
    key = _path()
    _model(PROGRAM, key)
    model = _model(edited, key)
    assert model.helpers.summaries.taken_over == 2  # ``train``'s names ``fwd_bwd``'s wait
    assert model.summary_of(model.functions[2]).wait.line == 15  # type: ignore[union-attr]
    found = _lint_edits([PROGRAM, edited], _path())
    assert found == [
        [(18, 15, "TNK101", MESSAGE.format(line=13))],
        [(20, 15, "TNK101", MESSAGE.format(line=15))],
    ]


def test_a_helper_whose_wait_is_removed_is_no_wait_in_its_caller() -> None:
    no_wait = PROGRAM.replace('loss_fn="cross_entropy").result()', 'loss_fn="cross_entropy")')
    again = no_wait.replace("print(metrics)", "print(metrics, 2)")
    found = _lint_edits([PROGRAM, no_wait, PROGRAM, again], _path())
    finding = [(18, 15, "TNK101", MESSAGE.format(line=13))]
    assert found[0] == finding and found[2] == finding
    assert found[1] == [] and found[3] == []


def test_the_wait_moved_inside_the_helper_is_the_one_named() -> None:
    moved = PROGRAM.replace(
        '    return tc.forward_backward(batch, loss_fn="cross_entropy").result()',
        '    """Docs."""\n\n    return tc.forward_backward(batch, loss_fn="cross_entropy").result()',
    )
    key = _path()
    _model(PROGRAM, key)
    model = _model(moved, key)
    # ``log``, and ``train``, whose wait is ``fwd_bwd``'s: at the node that wait is at now.
    assert model.helpers.summaries.taken_over == 2
    assert model.summary_of(model.functions[2]).wait.line == 15  # type: ignore[union-attr]
    found = _lint_edits([PROGRAM, moved], _path())
    assert found[1] == [(20, 15, "TNK101", MESSAGE.format(line=15))]


RECURSIVE = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="Qwen/Qwen3-8B").result()
adam = tinker.AdamParams(learning_rate=1e-4)


def ping(batch, n):
    if n:
        return pong(batch, n - 1)
    return tc.forward_backward(batch, loss_fn="cross_entropy").result()


def pong(batch, n):
    return ping(batch, n)


def train(batches):
    for batch in batches:
        out = ping(batch, 3)
        tc.optim_step(adam)
        print(out)
"""


def test_a_recursive_pair_is_made_again_on_every_lint() -> None:
    key = _path()
    edited = RECURSIVE.replace("print(out)", "print(out, 1)")
    for text in (RECURSIVE, edited, RECURSIVE):
        model = _model(text, key)
        # A cut makes what is kept depend on the order things were asked in: nothing is kept.
        assert model.helpers.summaries.taken_over == 0
        assert _summaries(model) == _fresh(text)
    # ``pong`` is summarised inside ``ping`` (first in the file), which it calls back: it is cut
    # there, and waits for nothing; ``ping`` waits.
    moved = "# the pair\n" + edited.replace("n - 1", "n - 2")
    found = _lint_edits([RECURSIVE, edited, moved, edited], _path())
    assert [[(line, col, code) for line, col, code, _ in f] for f in found] == [
        [(19, 15, "TNK101")],
        [(19, 15, "TNK101")],
        [(20, 15, "TNK101")],
        [(19, 15, "TNK101")],
    ]
    assert "(line 11)" in found[2][0][3] and "(line 10)" in found[3][0][3]


CLASS = """\
import tinker

adam = tinker.AdamParams(learning_rate=1e-4)


class Trainer:
    def __init__(self):
        self.tc = tinker.ServiceClient().create_lora_training_client(base_model="Q").result()

    def fwd_bwd(self, batch):
        return self.tc.forward_backward(batch, loss_fn="cross_entropy").result()

    def other(self):
        return 1

    def train(self, batches):
        for batch in batches:
            out = self.fwd_bwd(batch)
            self.tc.optim_step(adam)
            print(out)


def main(batches):
    Trainer().train(batches)
"""


def test_a_method_edited_makes_its_class_again() -> None:
    key = _path()
    _model(CLASS, key)
    edited = CLASS.replace("return 1", "return 2")
    model = _model(edited, key)
    # The class is one statement: all its methods are made again; ``main``, which reads them,
    # is taken over once they are what they were.
    assert model.helpers.summaries.taken_over == 1
    assert _summaries(model) == _fresh(edited)
    no_wait = CLASS.replace('loss_fn="cross_entropy").result()', 'loss_fn="cross_entropy")')
    model = _model(no_wait, key)
    assert model.helpers.summaries.taken_over == 0
    assert _summaries(model) == _fresh(no_wait)
    found = _lint_edits([CLASS, edited, no_wait], _path())
    assert [len(f) for f in found] == [1, 1, 0]
    assert found[0][0][:3] == (18, 19, "TNK101") and found[1] == found[0]


WAITS_BY_IMPORT = PROGRAM.replace(
    '    return tc.forward_backward(batch, loss_fn="cross_entropy").result()',
    '    fut = tc.forward_backward(batch, loss_fn="cross_entropy")\n'
    "    futures.wait([fut])\n"
    "    return fut.result()",
).replace("fut.result()", "fut")


def test_an_import_added_anywhere_changes_what_every_function_mentioning_it_sees() -> None:
    # ``futures.wait`` waits once ``futures`` is imported, and an import in any function imports
    # it for the whole module (the model's import map is the module's).
    inside = WAITS_BY_IMPORT.replace(
        "def log(metrics):\n", "def log(metrics):\n    from concurrent import futures\n\n"
    )
    on_top = "from concurrent import futures\n" + WAITS_BY_IMPORT
    key = _path()
    for text in (WAITS_BY_IMPORT, inside, WAITS_BY_IMPORT, on_top):
        assert _summaries(_model(text, key)) == _fresh(text)
    found = _lint_edits([WAITS_BY_IMPORT, inside, WAITS_BY_IMPORT, on_top], _path())
    assert [[(line, code) for line, _, code, _ in f] for f in found] == [
        [],
        [(22, "TNK101")],
        [],
        [(21, "TNK101")],
    ]


STEPS = """\
def forward_backward_and_wait(training_client, batch):
    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()
"""
CALLER = """\
import tinker

from pkg.steps import forward_backward_and_wait

ADAM = tinker.AdamParams(learning_rate=1e-4)


def step(training_client, batch):
    return forward_backward_and_wait(training_client, batch)


def train(training_client: tinker.TrainingClient, batches):
    for batch in batches:
        result = step(training_client, batch)
        training_client.optim_step(ADAM)
        print(result)
"""


def test_a_helper_module_edited_elsewhere_is_seen_without_an_edit_here(tmp_path: Path) -> None:
    # The same text twice: every statement is the one kept; ``step``'s summary is the helper's,
    # which an edit of the other module's buffer changed meanwhile.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    steps = package / "steps.py"
    steps.write_text(STEPS)
    train = package / "train.py"
    train.write_text(CALLER)
    index = ProjectIndex()
    # Twice, so that the second lint takes ``step`` over from the first: its questions to the
    # project are still asked again after the next.
    before = _lint_edits([CALLER, CALLER], str(train), index)
    moved = ('"""Steps."""\n\n' + STEPS).encode()  # its wait two lines down
    index.set_buffer(str(steps), moved)
    served = lint_text(CALLER, str(train), Settings(), project=index)
    fresh_index = ProjectIndex()
    fresh_index.set_buffer(str(steps), moved)
    fresh = lint_text(CALLER, str(train), Settings(), project=fresh_index, reuse_parse=False)
    message = (
        "Waiting for `step()` before submitting `optim_step`, which does not need it\n"
        "help: `step()` waits for `forward_backward` (steps.py:{line}). Submit `optim_step` "
        "first, then wait for both (requests run in submission order; "
        "`tinker_cookbook.supervised.train` pipelines this)"
    )
    assert before == [[(14, 18, "TNK101", message.format(line=2))]] * 2
    assert _findings(served.diagnostics) == _findings(fresh.diagnostics)
    assert _findings(fresh.diagnostics) == [(14, 18, "TNK101", message.format(line=4))]
    assert served.depends == fresh.depends and str(steps) in served.depends


def test_nothing_is_kept_without_a_key_or_in_a_batch_run() -> None:
    key = _path()
    SemanticModel(parse.parse_module(PROGRAM, key=key)).helpers.summaries.settle()
    assert reuse.take(BufferCarry(key)) is None
    with buffers.parses_kept(0):
        _model(PROGRAM, key)
    assert reuse.take(BufferCarry(key)) is None


def test_what_is_kept_holds_no_model() -> None:
    key = _path()
    _model(PROGRAM, key)
    kept = reuse.take(BufferCarry(key))
    assert kept is not None
    sites = [
        site
        for _, summary in kept.summaries.values()
        for site in (summary.wait, summary.last_wait)
        if site is not None
    ]
    assert len(sites) == 4  # fwd_bwd's and train's first and last wait
    assert all(isinstance(s.at, LineOf) and s.at.model is None for s in sites)
