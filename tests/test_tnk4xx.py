"""TNK4xx messages, word for word: where the step is, and the fix for the read's use. (Exact
diagnostics on fixtures/tnk4xx, from their ``# expect:`` comments: tests/test_fixtures.py.)"""

from __future__ import annotations

from tests.fixture_expectations import fixture_dir
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

FIXTURES = fixture_dir("TNK4")


def message_at(name: str, line: int, code: str, col: int | None = None) -> str:
    text = (FIXTURES / name).read_text()
    diagnostics = lint_text(text, name, Settings(select=("TNK4",))).diagnostics
    [diagnostic] = [
        d
        for d in diagnostics
        if d.line == line and d.code == code and (col is None or d.col == col)
    ]
    return diagnostic.message


COST = "it waits for the GPU to finish and stops the CPU running ahead (4-18% of step time in public fixes)"


def test_a_logged_read_a_guard_and_a_timing_each_get_their_fix() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 16, "TNK401") == (
        f"`loss.item()` on every step of the training loop on line 11: {COST}: accumulate on the "
        "device (`running += loss.detach()`) and read it inside your logging cadence "
        "(`if step % log_every == 0:`)"
    )
    assert message_at(name, 24, "TNK401") == (
        f"`loss.item()` on every step of the training loop on line 21: {COST}: check it on the "
        "device (`torch.isfinite(loss)`) and read the flag every N steps"
    )
    assert message_at(name, 28, "TNK401") == (
        f"`torch.cuda.synchronize()` on every step of the training loop on line 21: {COST}: time "
        "with `torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"
    )


def test_the_step_through_a_helper_and_in_a_hook() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 34, "TNK401", col=21).startswith(
        "`loss.item()` on every step of the training loop on line 38, in `metrics_helper()`, "
        "which the loop calls: "
    )
    assert message_at(name, 51, "TNK401").startswith(
        "`loss.item()` on every step of the training loop (`training_step()` runs once per step): "
    )
    assert message_at("tnk406_empty_cache_in_step.py", 12, "TNK406") == (
        "`torch.cuda.empty_cache()` on every step of the training loop on line 8: it synchronises "
        "the device and makes the next allocations go back to `cudaMalloc`: remove it, or call it "
        "every N steps or between phases (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` for "
        "fragmentation)"
    )


# --- TNK404 python-loop-over-tensor -----------------------------------------------------------

LOOP_COST = (
    "one Python-level torch call per element (5-20 us each on the CPU, a kernel launch each on a "
    "GPU; 19-2,000x the vectorized form, docs/torch-costs.md)"
)
LOOP_FIX = (
    "vectorize over the batch dimension; build the tensor once from a list "
    "(`torch.tensor(list)`), or use `scatter`/`bincount`/`index_put_`"
)
TNK404_FIXTURE = "tnk404_python_loop_over_tensor.py"


def codes_at(text: str, settings: Settings) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.col) for d in lint_text(text, "t.py", settings).diagnostics]


def test_tnk404_an_index_loop_and_a_row_loop_say_what_they_go_through() -> None:
    assert message_at(TNK404_FIXTURE, 12, "TNK404") == (
        "Python loop over `range(labels.size(0))` (line 12) indexes the tensor `mask` element by "
        f"element (`mask[i]`) on every step of the training loop on line 9: {LOOP_COST}: {LOOP_FIX}"
    )
    assert message_at(TNK404_FIXTURE, 46, "TNK404") == (
        "Python loop over the tensor `logits` (line 46) goes through its first dimension one row "
        f"or element at a time on every step of the training loop on line 43: {LOOP_COST}: "
        f"{LOOP_FIX}"
    )
    # A helper's parameter is a tensor when every call of the helper passes one.
    assert message_at(TNK404_FIXTURE, 55, "TNK404").startswith(
        "Python loop over the tensor `scores` (line 55) goes through its first dimension one row "
        "or element at a time on every step of the training loop on line 61, in "
        "`helper_called_per_step()`, which the loop calls: "
    )
    assert message_at(TNK404_FIXTURE, 87, "TNK404").startswith(
        "Python loop over `range(out.logits.shape[0])` (line 87) indexes the tensor `out.logits` "
        "element by element (`out.logits[i, 0]`) on every step of the training loop "
        "(`training_step()` runs once per step): "
    )


def test_tnk404_a_host_read_per_element_is_reported_once_at_the_read_instead_of_tnk401() -> None:
    assert message_at(TNK404_FIXTURE, 38, "TNK404") == (
        "`x.item()` once per element of the tensor `per_token` (line 38) on every step of the "
        "training loop on line 34: a host sync and a Python object per element (62-226x one "
        "`.tolist()` on the CPU, docs/torch-costs.md): read the tensor once with `.tolist()`, or "
        "vectorize"
    )
    text = (FIXTURES / TNK404_FIXTURE).read_text()
    found = codes_at(text, Settings(select=("TNK4",)))
    assert [f for f in found if f[1] == 38] == [("TNK404", 38, 14)]
    # With TNK404 not selected, TNK401 reports the read itself.
    alone = codes_at(text, Settings(select=("TNK401",)))
    assert [f for f in alone if f[1] == 38] == [("TNK401", 38, 14)]


def test_tnk404_per_row_log_softmax_gets_the_memory_wording() -> None:
    assert message_at(TNK404_FIXTURE, 73, "TNK404") == (
        'Python loop over `zip(logits, batch["labels"])` (line 73) computes `log_softmax` one row '
        "of `logits` at a time on every step of the training loop on line 70: if it is there to "
        "save memory, keep it; otherwise gather the targets' logits and subtract "
        "`torch.logsumexp(logits, -1)` over the whole batch (a fused gather - logsumexp)"
    )


def test_tnk404_per_parameter_updates_only_in_preview() -> None:
    text = (FIXTURES / TNK404_FIXTURE).read_text()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "zip(ema_model.parameters()" in s)
    default = lint_text(text, TNK404_FIXTURE, Settings(select=("TNK404",))).diagnostics
    assert [d for d in default if d.line == line] == []
    preview = lint_text(text, TNK404_FIXTURE, Settings(select=("TNK404",), preview=True))
    [diagnostic] = [d for d in preview.diagnostics if d.line == line]
    assert (diagnostic.col, diagnostic.message) == (
        29,
        "Python loop over `zip(ema_model.parameters(), model.par...` (line 109) updates one "
        "parameter tensor per iteration (`.add_()`) on every step of the training loop on line "
        "105: 2-3 kernel launches per parameter tensor, hundreds per step for a large model: use "
        "`torch._foreach_mul_/_foreach_add_` (or `torch._foreach_lerp_`)",
    )
    # The foreach form, and nothing else in the fixture, is new under preview.
    assert len(preview.diagnostics) == len(default) + 1


def test_tnk404_leaves_a_per_row_tolist_after_generate_alone() -> None:
    # One conversion per row (once per example), of what must leave the device anyway: the
    # false finding trl's online_dpo_trainer.py:1200 gave before.
    text = """\
import torch

def step(model, prompts, optimizer, reward_fn):
    for prompt_ids in prompts:
        completion_ids = torch.cat([prompt_ids, model.generate(prompt_ids)], dim=1)
        lists = [completion_ids[i].tolist() for i in range(completion_ids.shape[0])]
        loss = model.loss(reward_fn(lists))
        loss.backward()
        optimizer.step()
        print(loss.item())
"""
    assert codes_at(text, Settings(select=("TNK404",))) == []
    per_element = text.replace("completion_ids[i].tolist()", "completion_ids[i, 0].item()")
    assert codes_at(per_element, Settings(select=("TNK404",))) == [("TNK404", 6, 18)]


def test_tnk404_a_later_rebinding_does_not_make_a_name_a_tensor_earlier() -> None:
    # trl 0.19's ddpo_trainer.py: ``rewards`` is a tuple of tensors when indexed, a tensor only
    # after ``rewards = torch.cat(rewards)`` below the loop.
    text = """\
import torch

def step(model, loader, optimizer):
    for batch in loader:
        rewards = model.rewards_per_sample(batch)
        for i in range(len(rewards)):
            rewards[i] = rewards[i] * 2
        rewards = torch.cat(rewards)
        model.loss(rewards).backward()
        optimizer.step()
"""
    assert codes_at(text, Settings(select=("TNK404",))) == []


def test_tnk404_an_ema_under_no_grad_inside_the_training_loop_runs_every_step() -> None:
    text = """\
import torch

def train(model, ema, loader, optimizer):
    for batch in loader:
        model(batch).loss.backward()
        optimizer.step()
        with torch.no_grad():
            for e, p in zip(ema.parameters(), model.parameters()):
                e.lerp_(p, 0.001)
"""
    assert codes_at(text, Settings(select=("TNK404",), preview=True)) == [("TNK404", 8, 25)]
    in_eval = text.replace("        model(batch).loss.backward()\n", "").replace(
        "        optimizer.step()\n", ""
    )
    assert codes_at(in_eval, Settings(select=("TNK404",), preview=True)) == []
