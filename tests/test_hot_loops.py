"""One owner for "runs every step" (model/analyses/steps.py): TNK107 and TNK201-TNK205 agree on epoch-level
work, and TNK201 sees calls of the tokenizer held in ``self.tokenizer``."""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from tinker_lint.io.settings import Settings
from tinker_lint.model.analyses.steps import StepContext
from tinker_lint.model.query import SemanticModel
from tinker_lint.run.engine import lint_text

HOT_RULES = Settings(select=("TNK107", "TNK2"))

EPOCH_AND_STEP = textwrap.dedent(
    """\
    import tinker
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    def train(tc: tinker.TrainingClient, epochs, batches, texts, adam):
        for epoch in range(epochs):
            tokenizer = get_tokenizer("Qwen/Qwen3-8B")
            data = [tokenizer.encode(text) for text in texts]
            rows = open("rows.txt").read()
            for batch in batches:
                tok = get_tokenizer("Qwen/Qwen3-8B")  # the cookbook caches it: no TNK107
                more = [tok.encode(text) for text in texts]
                sampler = tc.create_sampling_client(model_path="tinker://run/weights/base")
                lines = open("rows.txt").read()
                tc.forward_backward(data + more + batch, loss_fn="cross_entropy")
                tc.optim_step(adam)
    """
)


def findings(text: str, settings: Settings = HOT_RULES) -> set[tuple[str, int, int]]:
    return {(d.code, d.line, d.col) for d in lint_text(text, "t.py", settings).diagnostics}


def test_epoch_level_work_is_reported_by_no_rule_and_step_work_by_each() -> None:
    # Regression: TNK107 used to report the epoch-level ``get_tokenizer()`` (line 6) that
    # TNK201/TNK205 left alone in the same loop.
    assert findings(EPOCH_AND_STEP) == {
        ("TNK201", 11, 21),
        ("TNK107", 12, 23),
        ("TNK205", 13, 21),
    }


def test_the_owner_answers_for_every_call_site() -> None:
    wrapper = cst.MetadataWrapper(cst.parse_module(EPOCH_AND_STEP), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    model = SemanticModel(wrapper.module)
    lines = {site.node: positions[site.node].start.line for site in model.calls}
    step_loop = next(
        loop for loop in model.loops if isinstance(loop.node, cst.For) and loop.parent is not None
    )
    epoch_loop = step_loop.parent
    assert epoch_loop is not None
    assert model.steps.is_epoch_loop(epoch_loop)
    assert not model.steps.is_epoch_loop(step_loop)
    for site in model.calls:
        context = model.steps.step_of(site)
        if lines[site.node] in (6, 7, 8):
            assert context is None, model.module.code_for_node(site.node)
        elif lines[site.node] in (10, 11, 12):
            assert context is not None and context.loop is step_loop
            assert model.module.code_for_node(context.submit.node).startswith("tc.forward_backward")


def test_step_context_is_frozen() -> None:
    assert dataclasses.is_dataclass(StepContext)
    model = SemanticModel(cst.parse_module(EPOCH_AND_STEP))
    context = next(c for c in map(model.steps.step_of, model.calls) if c is not None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.via = ()  # type: ignore[misc]


SELF_TOKENIZER = textwrap.dedent(
    """\
    from transformers import AutoTokenizer

    class Trainer:
        def __init__(self, training_client, texts):
            self.tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen3-8B")
            self.training_client = training_client
            self.texts = texts

        def get_tokenizer(self):
            return self.tokenizer

        def train(self, steps):
            before = self.tokenizer(self.texts)
            for step in range(steps):
                encoded = self.tokenizer(self.texts, padding=True)
                tok = self.get_tokenizer()
                self.training_client.forward_backward(encoded, loss_fn="cross_entropy")
    """
)


def test_calling_self_tokenizer_in_the_step_loop_is_tokenizing() -> None:
    # Regression: ``self.tokenizer(text)`` (the tokenizer's ``__call__``) was not recognised;
    # the call before the loop and the method that gives the tokenizer are not findings.
    assert findings(SELF_TOKENIZER, Settings(select=("TNK201",))) == {("TNK201", 15, 23)}


RUN_LOOP = textwrap.dedent(
    """\
    import tinker
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    def run(tc: tinker.TrainingClient, config, batches):
        tokenizer = get_tokenizer(config.model)
        rows = open("rows.txt").read()
        for batch in batches:
            extra = open("extra.txt").read()
            tc.forward_backward(batch, loss_fn="cross_entropy")
        return tokenizer, rows, extra

    def main(tc, configs, batches):
        for config in configs:
            run(tc, config, batches)
            summary = open("summary.txt").read()
    """
)


def test_a_loop_over_runs_is_not_a_step_loop() -> None:
    # Regression (issue 15, false pattern 8): ``main`` loops over configs, and ``run`` submits
    # only from its own loop; TNK107 and TNK205 used to report ``run``'s setup (lines 5, 6) and
    # the per-run read in ``main`` (line 15) as per-step work. Only the step loop's read stays.
    assert findings(RUN_LOOP) == {("TNK205", 8, 17)}


STEP_FUNCTION = textwrap.dedent(
    """\
    import tinker

    def step(tc: tinker.TrainingClient, sc: tinker.SamplingClient, prompts, params):
        futures = []
        for prompt in prompts:
            futures.append(sc.sample(prompt, num_samples=4, sampling_params=params))
        tc.forward_backward(collect(futures), loss_fn="cross_entropy")

    def loop(tc, sc, steps, prompts, params):
        for i in range(steps):
            step(tc, sc, prompts, params)
            config = open("config.json").read()
    """
)


def test_a_step_function_that_samples_in_a_loop_is_still_one_step() -> None:
    # ``step`` samples from its loop but trains at its own level: one step, so ``loop`` is the
    # step loop and the read in it runs every step (the run-loop test must not take it).
    assert findings(STEP_FUNCTION) == {("TNK205", 12, 18)}


RETRY_LOOP = textwrap.dedent(
    """\
    import tinker

    def train_step(tc: tinker.TrainingClient, batch):
        for attempt in range(3):
            try:
                return tc.forward_backward(batch, loss_fn="cross_entropy").result()
            except TimeoutError:
                continue

    def train(tc, batches):
        for batch in batches:
            train_step(tc, batch)
            config = open("config.json").read()
    """
)


def test_a_retry_loop_does_not_make_its_function_a_run() -> None:
    # ``train_step`` submits from a loop, but one that returns on success: one step per call,
    # so ``train``'s loop stays the step loop.
    assert findings(RETRY_LOOP) == {("TNK205", 13, 18)}


HELPERS_OVER_THE_STEPS_DATA = textwrap.dedent(
    """\
    import tinker

    def collect(sc: tinker.SamplingClient, prompts, params):
        futures = []
        for prompt in prompts:
            futures.append(sc.sample(prompt, num_samples=4, sampling_params=params))
        return [f.result() for f in futures]

    def train(tc: tinker.TrainingClient, rollouts, adam):
        for minibatch in split(rollouts):
            tc.forward_backward(minibatch, loss_fn="importance_sampling")
            tc.optim_step(adam)

    def loop(tc, sc, dataset, steps, params, adam):
        for step in range(steps):
            prompts = dataset.batch(step)
            rollouts = collect(sc, prompts, params)
            train(tc, rollouts, adam)
            config = open("config.json").read()
    """
)


def test_helpers_that_loop_over_this_steps_data_keep_the_step_loop() -> None:
    # ``collect`` and ``train`` submit only from their own loops, but those loops iterate what
    # ``loop`` binds afresh each step (``prompts``, ``rollouts``): ``loop`` is the step loop, not
    # a loop over runs, so the read in it runs every step.
    assert findings(HELPERS_OVER_THE_STEPS_DATA) == {("TNK205", 19, 18)}
