"""The messages of issue 14's one-module serial-wait patterns say what is true of each: two
clients are not ordered with each other, a coroutine starts only when awaited, a micro-batch's
wait keeps the next micro-batch waiting when ``optim_step`` needs the losses. (Which lines are
found is in the fixtures ``tnk101_two_clients_*``, ``tnk101_accumulation_*``,
``tnk103_coroutines_*``.)"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text


def _found(code: str, version: str = "0.38.0") -> list[tuple[str, int, int, str]]:
    settings = replace(Settings(), select=("TNK1", "TNK000"), tinker_version=Version(version))
    result = lint_text(code, "train.py", settings)
    return [(d.code, d.line, d.col, f"{d.message}\nhelp: {d.help}") for d in result.diagnostics]


def test_a_wait_on_the_reference_before_the_policy_submits_names_two_clients():
    code = """\
import tinker

def dpo_step(policy: tinker.TrainingClient, reference: tinker.SamplingClient, batch, pairs):
    ref = reference.compute_logprobs(pairs).result()
    policy.forward_backward(batch, "cross_entropy")
    return ref
"""
    assert _found(code) == [
        (
            "TNK101",
            4,
            45,
            "Waiting for `compute_logprobs` before submitting `forward_backward`, which does not "
            "need it\nhelp: Submit `forward_backward` first, then wait for both (`reference` and "
            "`policy` are separate clients: neither's requests wait for the other's)",
        )
    ]


def test_two_names_of_one_client_keep_the_submission_order_reason():
    code = """\
import tinker

def step(tc: tinker.TrainingClient, batch, adam):
    policy = tc
    out = tc.forward_backward(batch, "cross_entropy").result()
    policy.optim_step(adam)
    return out
"""
    assert _found(code) == [
        (
            "TNK101",
            5,
            55,
            "Waiting for `forward_backward` before submitting `optim_step`, which does not need "
            "it\nhelp: Submit `optim_step` first, then wait for both (requests run in submission "
            "order; `tinker_cookbook.supervised.train` pipelines this)",
        )
    ]


def test_a_micro_batch_wait_names_the_next_micro_batch_when_the_step_needs_the_losses():
    code = """\
import tinker

def step(tc: tinker.TrainingClient, micro_batches):
    total = 0.0
    for mb in micro_batches:
        total += tc.forward_backward(mb, "cross_entropy").result().metrics["loss:sum"]
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4 / max(total, 1.0)))
"""
    assert _found(code) == [
        (
            "TNK101",
            6,
            59,
            "Waiting for `forward_backward` before submitting `forward_backward`, which does not "
            "need it\nhelp: Submit `forward_backward` first, then wait for both (requests run in "
            "submission order; `tinker_cookbook.supervised.train` pipelines this)",
        )
    ]


def test_coroutines_awaited_one_by_one_say_they_start_only_when_awaited():
    code = """\
import tinker

async def rollout(sc: tinker.SamplingClient, prompt, params):
    return await sc.sample_async(prompt=prompt, num_samples=1, sampling_params=params)

async def rollouts(sc: tinker.SamplingClient, prompts, params):
    pending = [rollout(sc, p, params) for p in prompts]
    for coro in pending:
        print(await coro)
"""
    assert _found(code, "0.36.0") == [
        (
            "TNK103",
            9,
            15,
            "Sampling one request at a time: each `rollout()` coroutine starts only when "
            "awaited\nhelp: A coroutine starts its request only when awaited, so each waits for the "
            "previous one, though the iterations are independent: run them together with `await "
            "asyncio.gather(*coroutines)`",
        )
    ]


STALE_SAMPLER_LOOP = """\
import tinker

def train(tc: tinker.TrainingClient, sc: tinker.SamplingClient, batches, prompts, params, adam):
    for step, batch in enumerate(batches):
        tc.forward_backward(batch, "importance_sampling")
        tc.optim_step(adam).result()
        if step % 10 == 0:
            sc = tc.save_weights_and_get_sampling_client(name=str(step)).result()
        futures = [sc.sample(p, num_samples=1, sampling_params=params) for p in prompts]
        print([f.result() for f in futures])
"""


def test_a_wait_before_sampling_from_a_sampler_refreshed_every_n_steps_is_reported():
    assert _found(STALE_SAMPLER_LOOP) == [
        (
            "TNK101",
            6,
            29,
            "Waiting for `optim_step` before submitting `sample`, which does not need it\nhelp: "
            "Submit `sample` first, then wait for both (the sampler is refreshed only every few "
            "steps, at line 8: the other steps sample from the old weights)",
        )
    ]


def test_the_same_loop_refreshing_the_sampler_every_step_is_not_reported():
    every_step = STALE_SAMPLER_LOOP.replace("        if step % 10 == 0:\n    ", "    ")
    assert "if step" not in every_step
    assert _found(every_step) == []


def test_tnk102_says_the_sampler_is_refreshed_only_every_few_steps():
    code = """\
import tinker

def train(tc: tinker.TrainingClient, batches, prompts, build, params, adam, sync_every):
    sc = tc.save_weights_and_get_sampling_client(name="initial").result()
    for step, batch in enumerate(batches):
        futures = [sc.sample(p, num_samples=8, sampling_params=params) for p in prompts]
        tc.forward_backward(build(batch, [f.result() for f in futures]), "importance_sampling")
        tc.optim_step(adam).result()
        if step % sync_every == 0:
            sc = tc.save_weights_and_get_sampling_client(name=str(step)).result()
"""
    assert _found(code) == [
        (
            "TNK102",
            8,
            29,
            "Each step waits for its own results before the next is submitted\nhelp: The next step "
            "does not need them (the sampler is refreshed only every few steps, at line 10: the "
            "others sample from the old weights): submit step i+1, then wait for step i (as "
            "`tinker_cookbook.rl.train` does)",
        )
    ]


def test_an_occasional_save_no_longer_hides_a_wait_before_optim_step():
    """An evaluation sampler saved every few steps used to exempt the wait on every pass; on
    the other passes ``optim_step`` comes next and does not need the result. The stale-sampler
    reason is not given: what comes next is not sampling."""
    code = """\
import tinker

def train(tc: tinker.TrainingClient, batches, adam, eval_every):
    for step, batch in enumerate(batches):
        out = tc.forward_backward(batch, "cross_entropy").result()
        if step % eval_every == 0:
            eval_sc = tc.save_weights_and_get_sampling_client(name=str(step)).result()
            print(eval_sc)
        tc.optim_step(adam)
        print(out.metrics)
"""
    assert _found(code) == [
        (
            "TNK101",
            5,
            59,
            "Waiting for `forward_backward` before submitting `optim_step`, which does not need "
            "it\nhelp: Submit `optim_step` first, then wait for both (requests run in submission "
            "order; `tinker_cookbook.supervised.train` pipelines this)",
        )
    ]


def test_an_evaluation_sampler_every_few_steps_is_not_called_stale_in_a_loop_that_never_samples():
    code = """\
import tinker

def train(tc: tinker.TrainingClient, batches, adam, evaluate, eval_every):
    for step, batch in enumerate(batches):
        tc.forward_backward(batch, "cross_entropy")
        tc.optim_step(adam).result()
        if step % eval_every == 0:
            evaluate(tc.save_weights_and_get_sampling_client(name=str(step)).result())
"""
    assert _found(code) == [
        (
            "TNK102",
            6,
            29,
            "Each step waits for its own results before the next is submitted\nhelp: The next step "
            "does not need them: submit step i+1, then wait for step i (as "
            "`tinker_cookbook.supervised.train` does)",
        )
    ]
