"""The pre-filters lose no finding, whatever the layout of the code: every rule's declaration
(``Rule.prefilter``) is tested on whitespace-perturbed fixtures and rule examples, and on generated
programs that hold every rule's vocabulary, TNK2xx calls included."""

from __future__ import annotations

import ast
import io
import os
import textwrap
import tokenize
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import example as explicit_example
from hypothesis import strategies as st
from packaging.version import Version

from tests.snippets import OWN_WAITS
from tinker_lint.codes import opt_in_codes
from tinker_lint.flake8_plugin import TinkerLintPlugin
from tinker_lint.io.settings import Settings
from tinker_lint.model.analyses import infer
from tinker_lint.model.facts import names as model_names
from tinker_lint.prefilter.mentions import (
    TINKER_EVIDENCE,
    TINKER_NAMES,
    TOKENIZER,
    TORCH_GATES,
    TORCH_STEP_RECEIVER,
    hot_loop_names,
    may_concern_tinker,
)
from tinker_lint.prefilter.needs import AnyOf, Needs, TextFacts, parts, words
from tinker_lint.prefilter.sketch import sketch
from tinker_lint.project.index import ProjectIndex
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.run.engine import lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIXTURE_FILES = sorted(
    [*FIXTURES.glob("tnk1xx/*.py"), *FIXTURES.glob("tnk2xx/*.py"), *FIXTURES.glob("tnk4xx/*.py")]
)
EXPLORE = "TINKER_LINT_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("TINKER_LINT_FUZZ_EXAMPLES", "60"))
# The opt-in rules too (selected by their codes): their pre-filters must be as sound.
SETTINGS = Settings(tinker_version=Version("0.38.0"), extend_select=opt_in_codes())
HOT_BY_NAME = Settings(tinker_version=Version("0.38.0"), hot_loop_calls=("train_step",))
HOT_BY_GLOB = Settings(tinker_version=Version("0.38.0"), hot_loop_calls=("*.step", "train_*"))


def found(text: str, lint_settings: Settings = SETTINGS, prefilter: bool = True):
    result = lint_text(text, "p.py", lint_settings, prefilter=prefilter)
    return [(d.code, d.line, d.col) for d in result.diagnostics]


# What the old text tests lost (``len(`` and ``\bopen\(`` patterns, ``async def`` with one space,
# ``.forward_backward`` right after the dot, a Tinker call for a loop made hot by name).
REGRESSIONS = [
    (
        'tokenizer = get_tokenizer("m")\nfor batch in batches:\n'
        "    datums = build(batch, vocab_size=len (tokenizer))\n"
        '    training_client.forward_backward(datums, loss_fn="cross_entropy")\n',
        SETTINGS,
        [("TNK202", 3, 38)],
    ),
    (
        'for batch in batches:\n    training_client.forward_backward(batch, loss_fn="ce")\n'
        '    with open ("config.txt") as f:\n        f.read()\n',
        SETTINGS,
        [("TNK205", 3, 10)],
    ),
    (
        'for batch in batches:\n    training_client . forward_backward(batch, loss_fn="ce")\n'
        '    with open("config.txt") as f:\n        f.read()\n',
        SETTINGS,
        [("TNK205", 3, 10)],
    ),
    (
        "async  def rollout(sampling_client, prompt, params):\n"
        "    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()\n",
        SETTINGS,
        [("TNK104", 2, 82)],
    ),
    (
        'for batch in batches:\n    train_step(batch)\n    with open("log.txt") as f:\n'
        "        f.read()\n",
        HOT_BY_NAME,
        [("TNK205", 3, 10)],
    ),
    (
        'for batch in batches:\n    train_step(batch)\n    with open("log.txt") as f:\n'
        "        f.read()\n",
        HOT_BY_GLOB,
        [("TNK205", 3, 10)],
    ),
    (
        'for batch in batches:\n    trainer . step (batch)\n    with open("log.txt") as f:\n'
        "        f.read()\n",
        HOT_BY_GLOB,
        [("TNK205", 3, 10)],
    ),
    # A torch step made by ``optimizer.step()`` alone, with no ``backward`` in the file: in a
    # loop, and in a per-step hook.
    (
        "for batch in loader:\n    out = model(batch)\n    optimizer.step()\n"
        "    losses.append(out.loss.item())\n",
        SETTINGS,
        [("TNK401", 4, 19)],
    ),
    (
        "class Agent:\n    def update(self, batch):\n        out = self.net(batch)\n"
        "        self.opt.step()\n        self.log(out.loss.item())\n",
        SETTINGS,
        [("TNK401", 5, 18)],
    ),
]


@pytest.mark.parametrize(("text", "lint_settings", "expected"), REGRESSIONS)
def test_what_the_old_text_tests_lost(text, lint_settings, expected):
    assert found(text, lint_settings) == expected
    assert found(text, lint_settings, prefilter=False) == expected


def test_the_plugin_lints_a_loop_made_hot_by_name(tmp_path):
    """flake8's text gate asks for a Tinker call; a project naming its step functions needs none."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tinker-lint]\nhot-loop-calls = ["train_step"]\n'
    )
    text = REGRESSIONS[4][0]
    lines = text.splitlines(keepends=True)
    plugin = TinkerLintPlugin(None, str(tmp_path / "loop.py"), lines)
    assert [(line, col, m.split()[0]) for line, col, m, _ in plugin.run()] == [(3, 9, "TNK205")]
    # Without the name the project gives, no rule can find anything.
    other = TinkerLintPlugin(
        None, str(tmp_path / "other.py"), [line.replace("train_step", "log") for line in lines]
    )
    assert list(other.run()) == []


# What the old tree test lost: a wait before a submit made by calling a function of the module
# (TNK101 counted only SDK calls and other modules' helpers as submits), or an instance of a class
# of the module whose ``__call__`` submits, called by a plain name or through ``self``.
_STEPPING_POLICY = (
    "class Policy:\n    def __call__(self, training_client, batch):\n"
    '        return training_client.forward_backward(batch, loss_fn="cross_entropy")\n'
)
TREE_REGRESSIONS = [
    (
        "import tinker\n\n\ndef step(training_client, batch):\n"
        '    return training_client.forward_backward(batch, loss_fn="cross_entropy")\n\n\n'
        "def main(training_client: tinker.TrainingClient, batch, adam):\n"
        "    training_client.optim_step(adam).result()\n    step(training_client, batch)\n",
        [("TNK101", 9, 38)],
    ),
    (
        f"import tinker\n\n\n{_STEPPING_POLICY}\n\n"
        "def main(training_client: tinker.TrainingClient, batch, adam):\n"
        "    policy = Policy()\n    training_client.optim_step(adam).result()\n"
        "    policy(training_client, batch)\n",
        [("TNK101", 11, 38)],
    ),
    (
        f"import tinker\n\n\n{_STEPPING_POLICY}\n\nclass Agent:\n"
        "    def __init__(self):\n        self.policy = Policy()\n\n"
        "    def run(self, training_client: tinker.TrainingClient, batch, adam):\n"
        "        training_client.optim_step(adam).result()\n"
        "        self.policy(training_client, batch)\n",
        [("TNK101", 14, 42)],
    ),
]


@pytest.mark.parametrize(("text", "expected"), TREE_REGRESSIONS)
def test_what_the_old_tree_test_lost(text, expected):
    assert found(text) == expected
    assert found(text, prefilter=False) == expected


# A class of another module whose ``__call__`` samples and waits, and classes calling through
# ``self``: an instance of it (reported), a method of their own (the model takes the method: not
# the instance's ``__call__``, as tinker-cookbook 0.6.1's ``recipes/preference/shorter/env.py``),
# and one with no body of its own, which the model may take for an attribute called (admitted).
JUDGE = (
    "class Judge:\n    def __init__(self, sampling_client):\n"
    "        self.sampling_client = sampling_client\n\n    def __call__(self, prompt):\n"
    "        return self.sampling_client.sample(prompt, num_samples=1, sampling_params=None).result()\n"
)
_ENV = (
    "from .judge import Judge\n\n\nclass Env:\n    def __init__(self, sampling_client):\n"
    "        self.judge = Judge(sampling_client)\n\n"
)
SELF_CALLS = [
    (
        _ENV + "    def score(self, a, b):\n        first = self.judge(a)\n"
        "        second = self.judge(b)\n        return first, second\n",
        True,
        [("TNK101", 9, 17)],
    ),
    (
        _ENV + "    def _length(self, text):\n        return len(text)\n\n"
        "    def score(self, a, b):\n        return self._length(a) - self._length(b)\n",
        False,
        [],
    ),
    (
        _ENV + "    def _length(self, text):\n        raise NotImplementedError\n\n"
        "    def score(self, a, b):\n        return self._length(a) - self._length(b)\n",
        True,
        [],
    ),
]


@pytest.mark.parametrize(("text", "admitted", "expected"), SELF_CALLS)
def test_a_method_called_through_self_is_no_instance_called(tmp_path, text, admitted, expected):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "judge.py").write_text(JUDGE)
    path = str(package / "env.py")
    (package / "env.py").write_text(text)
    tree = ast.parse(text)
    helpers = ProjectIndex().view(path).helper_names(tree)
    assert helpers.steps_by("judge", as_object=True)  # the import gives a stepping ``__call__``
    tnk101 = next(rule for rule in PYTHON_RULES if rule.code == "TNK101")
    assert tnk101.needs().admits_tree(sketch(tree, None, helpers)) is admitted
    found = [
        [(d.code, d.line, d.col) for d in lint_text(text, path, SETTINGS, **how).diagnostics]
        for how in ({"project": ProjectIndex()}, {"project": ProjectIndex(), "prefilter": False})
    ]
    assert found[0] == found[1] == expected


# A file of the helpers fixture project (where tests/test_gate.py lints its crafted texts).
HELPER_FILE = str(FIXTURES / "tnk1xx" / "helpers_project" / "trainer" / "example.py")


@pytest.mark.parametrize(("text", "expected"), OWN_WAITS)
def test_a_calls_own_wait_comes_after_its_submit(text, expected):
    """TNK101's tree test admits the files it reports and no longer those whose only wait before
    a submit is that call's own (two of tinker-cookbook 0.6.1's were admitted that way); every
    rule finds the same with the pre-filters and without."""
    tree = ast.parse(text)
    helpers = ProjectIndex().view(HELPER_FILE).helper_names(tree)
    tnk101 = next(rule for rule in PYTHON_RULES if rule.code == "TNK101")
    assert tnk101.needs().admits_tree(sketch(tree, None, helpers)) is bool(expected)
    found = [
        [(d.code, d.line, d.col) for d in lint_text(text, HELPER_FILE, SETTINGS, **how).diagnostics]
        for how in ({"project": ProjectIndex()}, {"project": ProjectIndex(), "prefilter": False})
    ]
    assert found[0] == found[1]
    assert [finding for finding in found[0] if finding[0] == "TNK101"] == expected


# ---------------------------------------------------------------------------------------------
# Whitespace perturbations, made on the tokens so that the code stays valid Python.


def perturb(source: str, *, call_space: bool, split: bool, dots: bool) -> str:
    """``f(x)`` -> ``f (x)``; a new line after each ``(`` and each ``,`` inside brackets;
    ``a.b`` -> ``a . b``."""
    inserts: dict[tuple[int, int], str] = {}

    def add(at: tuple[int, int], what: str) -> None:
        inserts[at] = inserts.get(at, "") + what

    depth = 0
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.OP:
            if token.string in "([{":
                if (
                    call_space
                    and token.string == "("
                    and previous is not None
                    and previous.end[0] == token.start[0]  # a call, not a line's first token
                    and (previous.type == tokenize.NAME or previous.string in ")]")
                ):
                    add(token.start, " ")
                depth += 1
                if split and token.string == "(":
                    add(token.end, "\n")
            elif token.string in ")]}":
                depth -= 1
            elif token.string == "," and depth > 0 and split:
                add(token.end, "\n")
            elif token.string == "." and dots:
                add(token.start, " ")
                add(token.end, " ")
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = token
    lines = source.splitlines(keepends=True)
    for (row, col), what in sorted(inserts.items(), reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + what + line[col:]
    return "".join(lines)


PERTURBATIONS = {
    "call-space": {"call_space": True, "split": False, "dots": False},
    "split": {"call_space": False, "split": True, "dots": False},
    "dots": {"call_space": False, "split": False, "dots": True},
    "all": {"call_space": True, "split": True, "dots": True},
}


def test_the_perturbation():
    text = "x = tc.forward_backward(batch, loss_fn=f(a))\n"
    assert perturb(text, **PERTURBATIONS["call-space"]) == (
        "x = tc.forward_backward (batch, loss_fn=f (a))\n"
    )
    assert perturb(text, **PERTURBATIONS["split"]) == (
        "x = tc.forward_backward(\nbatch,\n loss_fn=f(\na))\n"
    )
    assert (
        perturb(text, **PERTURBATIONS["dots"]) == "x = tc . forward_backward(batch, loss_fn=f(a))\n"
    )


def _codes(diagnostics) -> Counter[str]:
    return Counter(code for code, _, _ in diagnostics)


@pytest.mark.parametrize("kind", sorted(PERTURBATIONS))
@pytest.mark.slow
def test_perturbed_fixtures_lose_no_finding(kind):
    """Every fixture file with every perturbation at once, and each perturbation alone on a third of
    them (in turn, so that the three cover every file): the findings with the pre-filters are those
    without, and the codes found are those of the file as written (so there was something to lose).
    """
    seen: Counter[str] = Counter()
    if kind == "all":
        paths = FIXTURE_FILES
    else:
        alone = sorted(k for k in PERTURBATIONS if k != "all")
        paths = FIXTURE_FILES[alone.index(kind) :: len(alone)]
    for path in paths:
        source = path.read_text()
        perturbed = perturb(source, **PERTURBATIONS[kind])
        compile(perturbed, str(path), "exec")
        with_filters = found(perturbed)
        assert with_filters == found(perturbed, prefilter=False), path.name
        assert _codes(with_filters) == _codes(found(source, prefilter=False)), path.name
        seen.update(_codes(with_filters))
    if kind == "all":
        assert {rule.code for rule in PYTHON_RULES} <= set(seen)
    else:
        assert seen, "a third of the fixtures with no finding: nothing to lose"


@pytest.mark.parametrize("kind", sorted(PERTURBATIONS))
@pytest.mark.slow
def test_perturbed_rule_examples_lose_no_finding(kind):
    for rule in PYTHON_RULES:
        for example in (*rule.VALID, *rule.INVALID):
            version = Version(example.tinker_version or "0.38.0")
            lint_settings = Settings(tinker_version=version, extend_select=opt_in_codes())
            perturbed = perturb(example.code, **PERTURBATIONS[kind])
            with_filters = found(perturbed, lint_settings)
            assert with_filters == found(perturbed, lint_settings, prefilter=False), perturbed
            original = found(example.code, lint_settings, prefilter=False)
            assert _codes(with_filters) == _codes(original), perturbed
            assert _codes(with_filters)[rule.code] == len(example.expect), perturbed


# ---------------------------------------------------------------------------------------------
# Generated programs: a training loop with every rule's vocabulary in it.

HEADER = """\
import asyncio
import concurrent.futures
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import tinker
import torch
import datasets
from tinker_cookbook.tokenizer_utils import get_tokenizer
from transformers import AutoTokenizer

service = tinker.ServiceClient()
tc = service.create_lora_training_client(base_model="m").result()
tokenizer = get_tokenizer("m")
tok = AutoTokenizer.from_pretrained("m")
"""

# Work a rule looks for (TNK2xx, TNK107, TNK105, TNK108, TNK104's waits), with the names of the
# loops' variables.
WORK = (
    "tokenizer.encode(text)",
    "tok(text)",
    "tok.apply_chat_template(messages)",
    "len(tokenizer)",
    "len(tok)",
    "json.dumps(batch)",
    "json.dump(datum, f)",
    "pickle.dumps(batch)",
    "datum.model_dump()",
    'open("log.txt", "a")',
    'Path("x").read_text()',
    'np.load("x.npy")',
    'torch.save(state, "x.pt")',
    'pd.read_csv("x.csv")',
    'datasets.load_dataset("x")',
    "np.array(datum)",
    "torch.tensor(datum)",
    "logits[0].item()",
    "torch.tensor(datum).tolist()",
    "[torch.tensor(t) for t in datum.tokens]",
    "[x.item() for x in logits.to_torch()]",
    "tok(batch, padding=True)",
    'service.create_sampling_client(model_path="p")',
    "tinker.ServiceClient()",
    'get_tokenizer("m")',
    "tc.get_info()",
    "asyncio.create_task(tc.forward_backward(batch, loss_fn='ce'))",
    "tc.forward_backward_async(batch, loss_fn='ce')",
    "fut.result()",
    "concurrent.futures.wait(futs)",
)
# What makes the loop hot (or not): a Tinker step, a step function named by ``hot-loop-calls``.
STEPS = (
    'fut = tc.forward_backward(batch, loss_fn="cross_entropy")',
    "sampler.sample(prompt, num_samples=1, sampling_params=params).result()",
    'fwd = tc.forward_backward(batch, loss_fn="cross_entropy"); print(fwd.result().loss)',
    "train_step(batch)",
    "log(batch)",
)


def _placed(work: str, where: str) -> list[str]:
    """One piece of work in the step: as a statement, once per element of the batch, under a
    cadence guard, or in a function of the module that the loop calls."""
    if where == "element":
        return [f"    out = [{work} for datum in batch]"]
    if where == "cadence":
        return ["    if step % 10 == 0:", f"        {work}"]
    if where == "helper":
        return ["    helper(batch, datum)"]
    return [f"    {work}"]


@st.composite
def programs(draw: st.DrawFn) -> str:
    step = draw(st.sampled_from(STEPS))
    chosen = draw(st.lists(st.sampled_from(WORK), min_size=1, max_size=4))
    places = [draw(st.sampled_from(("plain", "element", "cadence", "helper"))) for _ in chosen]
    loop = "async for" if draw(st.booleans()) else "for"
    body = [f"    {step}"]
    helpers = []
    for work, where in zip(chosen, places, strict=True):
        body += _placed(work, where)
        if where == "helper":
            helpers.append(f"    {work}")
    head = HEADER if draw(st.booleans()) else HEADER.replace(".result()\n", "\n")
    lines = [
        *(["def helper(batch, datum):", *helpers, ""] if helpers else []),
        "async def main(batches, futs, sampler, prompt, params, messages, text, state, logits):",
        *("    " + line for line in [f"{loop} step, batch in enumerate(batches):", *body]),
    ]
    program = head + "\n" + "\n".join(lines) + "\n"
    kind = draw(st.sampled_from(sorted(PERTURBATIONS)))
    return perturb(program, **PERTURBATIONS[kind])


@pytest.mark.parametrize(
    "lint_settings", [SETTINGS, HOT_BY_NAME, HOT_BY_GLOB], ids=["tinker", "by-name", "by-glob"]
)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not EXPLORE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(program=programs())
@pytest.mark.slow
def test_generated_programs_lose_no_finding(lint_settings, program):
    compile(program, "p.py", "exec")
    assert found(program, lint_settings) == found(program, lint_settings, prefilter=False), program


@pytest.mark.slow
def test_the_generated_programs_reach_every_rule():
    """The strategy is worth running: among a few of its programs, every rule finds something."""
    codes: set[str] = set()

    @settings(max_examples=150, derandomize=True, database=None, deadline=None)
    @given(program=programs())
    def collect(program: str) -> None:
        codes.update(code for code, _, _ in found(program, prefilter=False))

    collect()
    # The programs are Tinker loops: the PyTorch rules are reached by the fixtures above instead.
    assert {rule.code for rule in PYTHON_RULES if rule.needs_tinker} <= codes


# ---------------------------------------------------------------------------------------------
# Generated PyTorch programs: the TNK4xx rules' work, with a torch step (or a near miss) made in
# the loop, in a function it calls, in a per-step hook, or elsewhere; the tree pre-filter's
# ``torch_step`` and ``row_access`` facts are on trial.

TORCH_HEADER = """\
import random

import torch
from datasets import load_dataset
from PIL import Image
from torch.utils.data import DataLoader
from torch.utils.data import Dataset as TorchDataset
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2")
ds = load_dataset("imdb", split="train")


class Images(TorchDataset):
    def __getitem__(self, index):
        return Image.open(self.paths[index])


loader = DataLoader(Images(paths), batch_size=32)
"""

# Calls that end a torch step (``torch_steps.is_step_call``), and near misses.
TORCH_STEP_CALLS = (  # the first six are steps
    "loss.backward()",
    "accelerator.backward(loss)",
    "optimizer.step()",
    "self.optimizer.step()",
    "scaler.step(optimizer)",
    "model_engine.step()",
    "turtle.backward(10)",  # a step to the model: any ``backward``
    "scheduler.step()",
    "env.step(action)",
    "scaler.step()",
    "optimizers[0].step()",
    "make_optimizer().step()",
)
# What each TNK4xx rule looks for (lines, indented from the first).
TORCH_WORK = (
    ("losses.append(loss.item())",),
    ('print(f"loss {loss:.4f}")',),
    ("torch.cuda.synchronize()",),
    ("values = logits.cpu().numpy()",),
    ("inputs = batch.to(device)",),
    ('mask = torch.ones(len(batch)).to("cuda")',),
    ("torch.cuda.empty_cache()",),
    ("fn = torch.compile(model)",),
    (
        'mask = torch.zeros_like(batch["labels"], device="cuda")',
        'for i in range(len(batch["labels"])):',
        '    mask[i] = batch["labels"][i] != -100',
    ),
    ("rows = [ds[i] for i in random.sample(range(len(ds)), 32)]",),
    ("row = ds[step]",),
    ('lengths = [len(ds["input_ids"][i]) for i in range(8)]',),
    ("ds2 = ds.map(lambda row: model(**row))",),
    (
        "with torch.no_grad():",
        "    for start in range(0, len(ds), 32):",
        "        texts = [ds[i] for i in range(start, start + 32)]",
        "        out.append(model(texts).logits)",
    ),
)
# Where the step call is made: in the loop, in a function of the module the loop calls (at one or
# two calls' distance, or one it does not call), in a per-step hook of a class, in a ``def``
# inside the loop, outside the loop, or nowhere.
STEP_PLACES = ("loop", "helper", "helper2", "uncalled", "hook", "nested-def", "outside", "none")
HOOK_NAMES = ("training_step", "train_step", "run_step", "compute_loss", "update", "learn", "fit")


def _indented(lines: Iterable[str], depth: int) -> list[str]:
    return ["    " * depth + line for line in lines]


@st.composite
def torch_programs(draw: st.DrawFn) -> str:
    # Half the programs step in the loop itself, with a step call the model takes for one.
    step = draw(st.one_of(st.sampled_from(TORCH_STEP_CALLS[:6]), st.sampled_from(TORCH_STEP_CALLS)))
    step_place = draw(st.one_of(st.just("loop"), st.sampled_from(STEP_PLACES)))
    chosen = draw(st.lists(st.sampled_from(TORCH_WORK), min_size=1, max_size=4))
    in_function = draw(st.booleans())
    iterable = draw(st.sampled_from(("loader", "enumerate(loader)", "batches")))
    target = "step, batch" if iterable.startswith("enumerate") else "batch"
    defs: list[str] = []
    body: list[str] = []  # the loop's body, or the hook's
    after: list[str] = []  # after the loop
    if step_place == "loop":
        body.append(step)
    elif step_place in ("helper", "helper2", "uncalled"):
        if step_place == "helper2":
            defs += ["def inner(loss):", f"    {step}", "", "def step_fn(loss):", "    inner(loss)"]
        else:
            defs += ["def step_fn(loss):", f"    {step}"]
        body.append("other_fn(loss)" if step_place == "uncalled" else "step_fn(loss)")
    elif step_place == "nested-def":
        body += ["def later(loss):", f"    {step}"]
    elif step_place == "outside":
        after.append(step)
    for work in chosen:
        where = draw(st.sampled_from(("plain", "cadence", "helper", "outside")))
        if where == "plain":
            body += work
        elif where == "cadence":
            body += ["if step % 10 == 0:", *_indented(work, 1)]
        elif where == "helper":
            defs += ["def work_fn(batch):", *_indented(work, 1)]
            body.append("work_fn(batch)")
        else:
            after += work
    if step_place == "hook":
        hook = draw(st.sampled_from(HOOK_NAMES))
        with_step = draw(st.booleans())
        method = [*body, *([step] if with_step else [])] or ["pass"]
        main = ["class Module(LightningModule):", f"    def {hook}(self, batch):"]
        main += _indented(method, 2)
        main += after
    else:
        loop = [f"for {target} in {iterable}:", *_indented(body or ["pass"], 1), *after]
        main = ["def train(optimizer, batches):", *_indented(loop, 1)] if in_function else loop
    program = TORCH_HEADER + "\n" + "\n".join([*defs, "", *main]) + "\n"
    kind = draw(st.sampled_from(sorted(PERTURBATIONS)))
    return perturb(program, **PERTURBATIONS[kind])


TORCH_CODES = {rule.code for rule in PYTHON_RULES if not rule.needs_tinker}
TORCH_HOOK = TORCH_HEADER + textwrap.dedent(
    """
    class Module(LightningModule):
        def update(self, batch):
            losses.append(loss.item())
            self.optimizer.step()
    """
)
TORCH_HOOK_ALONE = TORCH_HEADER + textwrap.dedent(
    """
    class Module(LightningModule):
        def training_step(self, batch):
            loss = self.model(batch).loss
            self.log(loss.item())
            return loss
    """
)
TORCH_GENERATION = TORCH_HEADER + textwrap.dedent(
    """
    with torch.no_grad():
        for start in range(0, len(ds), 32):
            texts = [ds[i] for i in range(start, start + 32)]
            out.append(model(texts).logits)
    """
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not EXPLORE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(program=torch_programs())
@explicit_example(program=TORCH_HOOK)
@explicit_example(program=TORCH_HOOK_ALONE)
@explicit_example(program=TORCH_GENERATION)
@pytest.mark.slow
def test_generated_torch_programs_lose_no_finding(program):
    compile(program, "p.py", "exec")
    assert found(program) == found(program, prefilter=False), program


@pytest.mark.parametrize(
    ("program", "code"),
    [(TORCH_HOOK, "TNK401"), (TORCH_HOOK_ALONE, "TNK401"), (TORCH_GENERATION, "TNK402")],
)
def test_torch_programs_the_fuzzer_may_miss(program, code):
    """Per-step hooks with no loop, one that steps and one that is a step by itself; a
    data-generation loop, with no step."""
    assert [found_code for found_code, _, _ in found(program)] == [code]
    assert found(program) == found(program, prefilter=False)


@pytest.mark.slow
def test_the_generated_torch_programs_reach_every_torch_rule():
    """Among a few of its programs, every PyTorch rule finds something, and the tree pre-filter
    both admits and turns away programs whose text the PyTorch rules' declarations admit."""
    codes: set[str] = set()
    admitted = turned_away = 0

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(program=torch_programs())
    def collect(program: str) -> None:
        nonlocal admitted, turned_away
        codes.update(code for code, _, _ in found(program, prefilter=False))
        tree = sketch(ast.parse(program))
        for rule in PYTHON_RULES:
            if rule.code in TORCH_CODES and rule.applies_to(program):
                if rule.may_find(tree):
                    admitted += 1
                else:
                    turned_away += 1

    collect()
    assert codes >= TORCH_CODES
    assert admitted and turned_away


# ---------------------------------------------------------------------------------------------
# The declarations themselves.


def test_a_rules_declaration_is_its_only_prefilter():
    """The engine reads ``Rule.needs()``; a rule's own ``applies_to`` or ``may_find`` would be
    read by nothing but tests."""
    for rule in PYTHON_RULES:
        assert not {"applies_to", "may_find", "needs"} & set(vars(rule)), rule.code


def test_every_rule_needs_what_the_flake8_gate_asks():
    """The plugin turns away files without a Tinker name and its evidence: each rule's declaration
    must ask for both (a hot-loop rule through its step), or the plugin would lose its findings."""
    for rule in PYTHON_RULES:
        if not rule.needs_tinker:  # a PyTorch rule: the gate admits its torch step instead
            needs = rule.needs()
            assert any(all(map(needs.implies, gate)) for gate in TORCH_GATES), rule.code
            continue
        assert rule.needs().implies(TINKER_NAMES), rule.code
        assert rule.needs().implies(TINKER_EVIDENCE), rule.code


def test_the_gate_is_the_declarations():
    for text, expected in [
        ("sampler . sample (p)", True),
        ("def f(fut: 'APIFuture'):\n    fut.result()\n", True),
        ("import random\nrandom.sample(population, 2)\n", False),  # no evidence
        ("sampling_client = make()\n", False),  # evidence, no Tinker name
    ]:
        assert may_concern_tinker(text) is expected, text


def test_clauses():
    facts = TextFacts("vocab = len (self._Tokenizer)\n# open\n")
    assert facts.holds(words({"len"})) and facts.holds(words({"open"}))
    assert not facts.holds(words({"Tokenizer"}))  # a word is a whole identifier
    assert facts.holds(TOKENIZER)  # a part is matched in any case
    assert not facts.holds(words({"le", "vocabulary"}))
    assert Needs(text=(words({"len"}), TOKENIZER)).admits_text(facts)
    assert not Needs(text=(words({"len"}),), step=(words({"sample"}),)).admits_text(facts)
    assert Needs(text=(words({"len"}),), step=(words({"sample"}),)).admits_text(facts, True)
    # With ``hot-loop-calls`` naming plain names, one of them stands for the step.
    needs = Needs(text=(words({"len"}),), step=(words({"sample"}),))
    assert not needs.admits_text(facts, True, words({"train_step"}))
    assert needs.admits_text(TextFacts("train_step (len)"), True, words({"train_step"}))
    assert hot_loop_names(("train_step", "step")) == words({"train_step", "step"})
    assert hot_loop_names(("train_step", "*.step")) is None
    with pytest.raises(ValueError):
        words({"len("})
    with pytest.raises(ValueError):
        parts({"Tokenizer"})
    assert words({"sample_async"}).implies(parts({"sample"}))
    assert not parts({"sample"}).implies(words({"sample"}))
    assert (words({"a"}) | parts({"b"})).implies(AnyOf(frozenset({"a"}), frozenset({"b"})))


def test_every_tokenizer_source_of_the_model_holds_the_tokenizer_part():
    """``TOKENIZER`` stands for the model's ways to type a tokenizer: its factories, and the
    names of tokenizer classes in annotations."""
    (part,) = TOKENIZER.parts
    for name in (
        *model_names.TOKENIZER_FACTORIES,
        "PreTrainedTokenizer",
        "PreTrainedTokenizerFast",
        "PreTrainedTokenizerBase",
        "Tokenizer",
        "get_tokenizer",
    ):
        assert part in name.lower(), name
    assert infer._TOKENIZER_NAME.search("my_tokenizer")
    assert not infer._TOKENIZER_NAME.search("tok")


def test_every_torch_step_receiver_holds_a_receiver_part():
    """``TORCH_STEP_RECEIVER`` stands for the receivers whose ``.step(...)`` the model takes for a
    torch step (``names.torch_step_receiver``): each holds one of its parts, in some case."""
    taken = (
        "optim",
        "optimizer",
        "optimiser",
        "opt",
        "opts",
        "g_opt",
        "opt_d",
        "Optimizers",
        "disc_optimizer",
        "self_optimiser",
        "engine",
        "model_engine",
        "MODEL_ENGINES",
        "scaler",
        "grad_scaler",
        "GradScaler",
    )
    for name in taken:
        assert model_names.torch_step_receiver(name, False) or model_names.torch_step_receiver(
            name, True
        ), name
        assert any(part in name.lower() for part in TORCH_STEP_RECEIVER.parts), name
    for name in ("scheduler", "env", "lr_scheduler", "trainer", ""):
        assert not model_names.torch_step_receiver(name, False), name
        assert not model_names.torch_step_receiver(name, True), name


@pytest.mark.parametrize(
    "text",
    [
        textwrap.dedent(
            """\
            import numpy as np
            for batch in batches:
                training_client.forward_backward(batch, loss_fn="ce")
                rows = [np . array (t) for d in batch for t in d.tokens]
            """
        ),
    ],
)
def test_array_work_with_spaces(text):
    assert found(text) == [("TNK203", 4, 13)] == found(text, prefilter=False)
