"""TNK4xx messages, word for word: where the step is, and the fix for the read's use. (Exact
diagnostics on fixtures/tnk4xx, from their ``# expect:`` comments: tests/test_fixtures.py.)"""

from __future__ import annotations

from tests.fixture_expectations import fixture_dir
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

FIXTURES = fixture_dir("TNK4")


def message_at(name: str, line: int, code: str, col: int | None = None) -> str:
    text = (FIXTURES / name).read_text()
    settings = Settings(select=("TNK4",), extend_select=("TNK403",))
    diagnostics = lint_text(text, name, settings).diagnostics
    [diagnostic] = [
        d
        for d in diagnostics
        if d.line == line and d.code == code and (col is None or d.col == col)
    ]
    return f"{diagnostic.message}\nhelp: {diagnostic.help}"


COST = "it waits for the GPU to finish and stops the CPU running ahead (4-18% of step time in public fixes)"


def test_a_logged_read_a_guard_and_a_timing_each_get_their_fix() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 16, "TNK401") == (
        "`loss.item()` waits for the GPU in the training loop on line 11\nhelp: It runs on every "
        "step of the training loop on line 11: it waits for the GPU to finish and stops the CPU "
        "running ahead (4-18% of step time in public fixes): accumulate on the device (`running "
        "+= loss.detach()`) and read it inside your logging cadence (`if step % log_every == "
        "0:`)"
    )
    assert message_at(name, 24, "TNK401") == (
        "`loss.item()` waits for the GPU in the training loop on line 21\nhelp: It runs on every "
        "step of the training loop on line 21: it waits for the GPU to finish and stops the CPU "
        "running ahead (4-18% of step time in public fixes): check it on the device "
        "(`torch.isfinite(loss)`) and read the flag every N steps"
    )
    assert message_at(name, 28, "TNK401") == (
        "`torch.cuda.synchronize()` waits for the GPU in the training loop on line 21\nhelp: It "
        "runs on every step of the training loop on line 21: it waits for the GPU to finish and "
        "stops the CPU running ahead (4-18% of step time in public fixes): time with "
        "`torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"
    )


def test_the_step_through_a_helper_and_in_a_hook() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 34, "TNK401", col=21).startswith(
        "`loss.item()` waits for the GPU in `metrics_helper()` (training loop on line 38)"
    )
    assert message_at(name, 51, "TNK401").startswith(
        "`loss.item()` waits for the GPU in `training_step()` (once per step)"
    )
    assert message_at("tnk406_empty_cache_in_step.py", 12, "TNK406") == (
        "`torch.cuda.empty_cache()` empties the allocator's cache in the training loop on line "
        "8\nhelp: It runs on every step of the training loop on line 8: it synchronises the "
        "device and makes the next allocations go back to `cudaMalloc`: remove it, or call it "
        "every N steps or between phases (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` "
        "for fragmentation)"
    )


def test_helpers_further_away_and_overrides_run_on_every_step() -> None:
    name = "tnk401_host_sync_in_step.py"
    # Two calls away from the loop (loop -> batch_metrics -> scalar).
    assert message_at(name, 146, "TNK401") == (
        "`t.item()` waits for the GPU in `scalar()` (training loop on line 154)\nhelp: It runs "
        "on every step of the training loop on line 154, in `scalar()`, which the loop calls: "
        "it waits for the GPU to finish and stops the CPU running ahead (4-18% of step time in "
        "public fixes): accumulate on the device (`running += loss.detach()`) and read it "
        "inside your logging cadence (`if step % log_every == 0:`)"
    )
    # compute_loss -> self._compute_loss -> a nested helper.
    assert message_at(name, 170, "TNK401") == (
        "`.item()` waits for the GPU in `compute_loss()` (once per step)\nhelp: It runs on every "
        "step of the training loop (`compute_loss()` runs once per step): it waits for the GPU "
        "to finish and stops the CPU running ahead (4-18% of step time in public fixes): "
        "accumulate on the device (`running += loss.detach()`) and read it inside your logging "
        "cadence (`if step % log_every == 0:`)"
    )
    assert message_at(name, 173, "TNK401").startswith(
        "`loss.item()` waits for the GPU in `compute_loss()` (once per step)"
    )
    # A subclass's override of the method the base class's loop calls.
    assert message_at(name, 192, "TNK401") == (
        "`.item()` waits for the GPU in `clip_gradient()` (training loop on line 179)\nhelp: It "
        "runs on every step of the training loop on line 179, in `clip_gradient()`, which the "
        "loop calls: it waits for the GPU to finish and stops the CPU running ahead (4-18% of "
        "step time in public fixes): accumulate on the device (`running += loss.detach()`) and "
        "read it inside your logging cadence (`if step % log_every == 0:`)"
    )


def test_a_no_grad_block_inside_the_step_is_not_evaluation() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 94, "TNK401") == (
        "`.item()` waits for the GPU in the training loop on line 90\nhelp: It runs on every "
        "step of the training loop on line 90: it waits for the GPU to finish and stops the CPU "
        "running ahead (4-18% of step time in public fixes): accumulate on the device (`running "
        "+= loss.detach()`) and read it inside your logging cadence (`if step % log_every == "
        "0:`)"
    )


def test_aliased_syncs_and_a_bare_sync() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 197, "TNK401") == (
        "`synchronize()` waits for the GPU in the training loop on line 196\nhelp: It runs on "
        "every step of the training loop on line 196: it waits for the GPU to finish and stops "
        "the CPU running ahead (4-18% of step time in public fixes): time with "
        "`torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"
    )
    assert message_at(name, 201, "TNK401") == (
        "`th.cuda.synchronize()` waits for the GPU in the training loop on line 196\nhelp: It "
        "runs on every step of the training loop on line 196: it waits for the GPU to finish "
        "and stops the CPU running ahead (4-18% of step time in public fixes): time with "
        "`torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"
    )
    assert message_at(name, 255, "TNK401") == (
        "`torch.cuda.synchronize()` waits for the GPU in the training loop on line 252\nhelp: It "
        "runs on every step of the training loop on line 252: it waits for the GPU to finish "
        "and stops the CPU running ahead (4-18% of step time in public fixes): remove it, or "
        "synchronize only on the log step"
    )


def test_the_guard_around_the_optimizer_step_is_the_step_not_a_cadence() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 215, "TNK401") == (
        "`running.item()` waits for the GPU in the training loop on line 207\nhelp: It runs on "
        "every step of the training loop on line 207: it waits for the GPU to finish and stops "
        "the CPU running ahead (4-18% of step time in public fixes): accumulate on the device "
        "(`running += loss.detach()`) and read it inside your logging cadence (`if step % "
        "log_every == 0:`)"
    )
    assert message_at(name, 229, "TNK401") == (
        "`loss.item()` waits for the GPU in the training loop on line 223\nhelp: It runs on "
        "every step of the training loop on line 223: it waits for the GPU to finish and stops "
        "the CPU running ahead (4-18% of step time in public fixes): accumulate on the device "
        "(`running += loss.detach()`) and read it inside your logging cadence (`if step % "
        "log_every == 0:`)"
    )


def test_a_value_checked_for_nans_by_name_gets_the_guard_fix() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 235, "TNK401") == (
        "`loss.item()` waits for the GPU in the training loop on line 233\nhelp: It runs on "
        "every step of the training loop on line 233: it waits for the GPU to finish and stops "
        "the CPU running ahead (4-18% of step time in public fixes): check it on the device "
        "(`torch.isfinite(loss)`) and read the flag every N steps"
    )


def test_formatting_a_step_tensor_in_an_f_string_is_an_implicit_sync() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 381, "TNK401", col=37) == (
        "`{loss}` in an f-string waits for the GPU in the training loop on line 376\nhelp: It "
        "runs on every step of the training loop on line 376: formatting a tensor reads it on "
        "the host, and it waits for the GPU to finish and stops the CPU running ahead (4-18% of "
        "step time in public fixes): format `loss.item()` on the log step only (`if step % "
        "log_every == 0:`), or accumulate on the device"
    )


def test_mask_indexing_and_nonzero_are_reported_under_preview_only() -> None:
    name = "tnk401_host_sync_in_step.py"
    text = (FIXTURES / name).read_text()
    found = {
        (d.line, d.col): f"{d.message}\nhelp: {d.help}"
        for d in lint_text(text, name, Settings(select=("TNK4",), preview=True)).diagnostics
        if 383 < d.line < 414  # `masked_means` and `more_cadences`
    }
    assert found == {
        (393, 16): (
            "`logits[valid]` (boolean-mask indexing) waits for the GPU in the training loop on "
            "line 389\nhelp: It runs on every step of the training loop on line 389: the result's "
            f"size is decided on the GPU, so {COST}: keep the shape fixed "
            "(`torch.where(mask, x, 0)`, `(x * mask).sum() / mask.sum()`) where the code allows it"
        ),
        (396, 16): (
            "`labels.nonzero()` waits for the GPU in the training loop on line 389\nhelp: It runs "
            "on every step of the training loop on line 389: the result's size is decided on the "
            f"GPU, so {COST}: keep the shape fixed (`torch.where(mask, x, 0)`, "
            "`(x * mask).sum() / mask.sum()`) where the code allows it"
        ),
    }
    default = lint_text(text, name, Settings(select=("TNK4",))).diagnostics
    assert [d for d in default if 383 < d.line < 414] == []


TNK403_FIXTURE = "tnk403_blocking_batch_copy.py"


def test_tnk403_messages_name_the_copy_the_step_and_an_unpinned_loader() -> None:
    assert message_at(TNK403_FIXTURE, 13, "TNK403") == (
        "`inputs.to(device)` copies a batch to the device, blocking, in the training loop on "
        "line 12\nhelp: It runs on every step of the training loop on line 12: each copy waits "
        "for the previous step's work on the device: pass `non_blocking=True`; the `DataLoader` "
        "on line 7 does not pin its batches: add `pin_memory=True` so that the copy can overlap"
    )
    assert message_at(TNK403_FIXTURE, 14, "TNK403") == (
        "`labels.cuda()` copies a batch to the device, blocking, in the training loop on line "
        "12\nhelp: It runs on every step of the training loop on line 12: each copy waits for "
        "the previous step's work on the device: pass `non_blocking=True`; the `DataLoader` on "
        "line 7 does not pin its batches: add `pin_memory=True` so that the copy can overlap"
    )
    # The loader pins (``pin_memory=True``): the message does not ask for it.
    assert message_at(TNK403_FIXTURE, 21, "TNK403") == (
        "`v.to(device)` copies a batch to the device, blocking, in the training loop on line "
        "20\nhelp: It runs on every step of the training loop on line 20: each copy waits for "
        "the previous step's work on the device: pass `non_blocking=True`"
    )
    # ``next(train_iter)`` of ``iter(loader)``: the loader is found through the iterator.
    assert message_at(TNK403_FIXTURE, 41, "TNK403") == (
        "`x.to(device)` copies a batch to the device, blocking, in the training loop on line "
        "38\nhelp: It runs on every step of the training loop on line 38: each copy waits for "
        "the previous step's work on the device: pass `non_blocking=True`; the `DataLoader` on "
        "line 7 does not pin its batches: add `pin_memory=True` so that the copy can overlap"
    )
    assert message_at(TNK403_FIXTURE, 54, "TNK403") == (
        "`torch.as_tensor(tokens, device=device)` copies a batch to the device, blocking, in "
        "the training loop on line 53\nhelp: It runs on every step of the training loop on line "
        "53: each copy waits for the previous step's work on the device: use "
        "`torch.as_tensor(x).to(device, non_blocking=True)`"
    )
    assert message_at(TNK403_FIXTURE, 60, "TNK403") == (
        '`batch["input_ids"].to(device)` copies a batch to the device, blocking, in `step_on()` '
        "(training loop on line 67)\nhelp: It runs on every step of the training loop on line "
        "67, in `step_on()`, which the loop calls: each copy waits for the previous step's work "
        "on the device: pass `non_blocking=True`"
    )


def test_tnk403_is_off_unless_its_code_is_selected() -> None:
    text = (FIXTURES / TNK403_FIXTURE).read_text()
    for select in (("TNK",), ("TNK4",), ("ALL",)):
        found = lint_text(text, TNK403_FIXTURE, Settings(select=select)).diagnostics
        assert "TNK403" not in {d.code for d in found}, select
    found = lint_text(text, TNK403_FIXTURE, Settings(extend_select=("TNK403",))).diagnostics
    assert [d.line for d in found if d.code == "TNK403"] == [13, 14, 21, 31, 41, 54, 60, 163, 164]


def test_per_row_reads_in_a_training_step_a_helper_and_a_generation_loop() -> None:
    name = "tnk402_per_row_dataset_access.py"
    assert message_at(name, 20, "TNK402") == (
        "`ds[i]` reads one dataset row at a time in the training loop on line 18\nhelp: It runs "
        "on every step of the training loop on line 18: each read converts one row from Arrow "
        "(0.15-0.4 ms a row measured, 3-28x a batched read): read the batch at once "
        '(`ds[indices]`, a slice `ds[i:i + n]`), use `with_format("torch")` with a '
        "`DataLoader`, or pull the needed columns into lists once before the loop"
    )
    assert message_at(name, 35, "TNK402") == (
        "`ds[start + k]` reads one dataset row at a time in `get_batch()` (training loop on "
        "line 39)\nhelp: It runs on every step of the training loop on line 39, in "
        "`get_batch()`, which the loop calls: each read converts one row from Arrow (0.15-0.4 "
        "ms a row measured, 3-28x a batched read): read the batch at once (`ds[indices]`, a "
        'slice `ds[i:i + n]`), use `with_format("torch")` with a `DataLoader`, or pull the '
        "needed columns into lists once before the loop"
    )
    assert message_at(name, 58, "TNK402") == (
        "`ds[i]` reads one dataset row at a time in the generation loop on line 57\nhelp: The "
        "loop runs the model under `torch.no_grad()` on every iteration, and each read converts "
        "one row from Arrow (0.15-0.4 ms a row measured, 3-28x a batched read): read the batch "
        'at once (`ds[indices]`, a slice `ds[i:i + n]`), use `with_format("torch")` with a '
        "`DataLoader`, or pull the needed columns into lists once before the loop"
    )


def test_column_then_row_and_map_calling_a_model() -> None:
    name = "tnk402_per_row_dataset_access.py"
    assert message_at(name, 48, "TNK402") == (
        '`ds["input_ids"][i]` reads the column `ds["input_ids"]` for one row in the loop on '
        "line 47\nhelp: In `datasets` < 4.0 that materializes the whole column on every access "
        "(36 ms an access on 1000 rows, measured), and it still costs ~0.5-1.5 ms a row after: "
        'read the rows at once (`ds[indices]["input_ids"]`) or pull the column into a list once '
        "before the loop"
    )
    assert message_at(name, 70, "TNK402") == (
        "`ds.map(embed)` calls `model()` on one row at a time\nhelp: `batched=False` (the "
        "default) runs the model on one example per forward pass: pass `batched=True` (and a "
        "`batch_size`) with a function that takes a batch of rows"
    )


def test_synchronous_dataloader_says_what_the_dataset_does_and_when_to_pin() -> None:
    name = "tnk405_synchronous_dataloader.py"
    assert message_at(name, 68, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers` defaults "
        "to 0)\nhelp: `ImageDataset.__getitem__` calls `Image.open()` (line 25), and the "
        "training loop on line 69 waits for it: pass `num_workers=min(8, os.cpu_count())` (tune "
        "it), `pin_memory=True` (the loop copies each batch to the device on line 70), and "
        "`persistent_workers=True` if epochs are short or workers start with `spawn`"
    )
    # ``pin_memory=True`` already: no second part.
    assert message_at(name, 208, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers=0`)\nhelp: "
        "`ImageDataset.__getitem__` calls `Image.open()` (line 25), and the training loop on "
        "line 209 waits for it: pass `num_workers=min(8, os.cpu_count())` (tune it), and "
        "`persistent_workers=True` if epochs are short or workers start with `spawn`"
    )
    assert message_at(name, 93, "TNK405") == (
        "`DataLoader(...)` loads every sample in a single worker process "
        "(`num_workers=1`)\nhelp: `ArrowRows.__getitem__` reads a row of a `datasets.Dataset` "
        "(line 52), and the training loop on line 87 waits for it: pass `num_workers=min(8, "
        "os.cpu_count())` (tune it), and `persistent_workers=True` if epochs are short or "
        "workers start with `spawn`"
    )
    assert message_at(name, 100, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers` defaults "
        "to 0)\nhelp: `ImageFolder` opens and decodes an image file per sample (line 99), and "
        "the training loop on line 101 waits for it: pass `num_workers=min(8, os.cpu_count())` "
        "(tune it), `pin_memory=True` (the loop copies each batch to the device on line 103), "
        "and `persistent_workers=True` if epochs are short or workers start with `spawn`"
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
        "Loop on line 12 indexes the tensor `mask` per element in the training loop on line "
        "9\nhelp: It runs on every step of the training loop on line 9: `mask[i]` is one "
        "Python-level torch call per element (5-20 us each on the CPU, a kernel launch each on "
        "a GPU; 19-2,000x the vectorized form, docs/torch-costs.md): vectorize over the batch "
        "dimension; build the tensor once from a list (`torch.tensor(list)`), or use "
        "`scatter`/`bincount`/`index_put_`"
    )
    assert message_at(TNK404_FIXTURE, 46, "TNK404") == (
        "Loop on line 46 goes through the tensor `logits` one row at a time in the training "
        "loop on line 43\nhelp: It runs on every step of the training loop on line 43: one "
        "Python-level torch call per element (5-20 us each on the CPU, a kernel launch each on "
        "a GPU; 19-2,000x the vectorized form, docs/torch-costs.md): vectorize over the batch "
        "dimension; build the tensor once from a list (`torch.tensor(list)`), or use "
        "`scatter`/`bincount`/`index_put_`"
    )
    # A helper's parameter is a tensor when every call of the helper passes one.
    assert message_at(TNK404_FIXTURE, 55, "TNK404").startswith(
        "Loop on line 55 goes through the tensor `scores` one row at a time in "
        "`helper_called_per_step()` (training loop on line 61)"
    )
    assert message_at(TNK404_FIXTURE, 87, "TNK404").startswith(
        "Loop on line 87 indexes the tensor `out.logits` per element in `training_step()` (once "
        "per step)"
    )


def test_tnk404_a_host_read_per_element_is_reported_once_at_the_read_instead_of_tnk401() -> None:
    assert message_at(TNK404_FIXTURE, 38, "TNK404") == (
        "`x.item()` per element of the tensor `per_token` (loop on line 38) in the training "
        "loop on line 34\nhelp: It runs on every step of the training loop on line 34: a host "
        "sync and a Python object per element (62-226x one `.tolist()` on the CPU, "
        "docs/torch-costs.md): read the tensor once with `.tolist()`, or vectorize"
    )
    text = (FIXTURES / TNK404_FIXTURE).read_text()
    found = codes_at(text, Settings(select=("TNK4",)))
    assert [f for f in found if f[1] == 38] == [("TNK404", 38, 14)]
    # With TNK404 not selected, TNK401 reports the read itself.
    alone = codes_at(text, Settings(select=("TNK401",)))
    assert [f for f in alone if f[1] == 38] == [("TNK401", 38, 14)]


def test_tnk404_per_row_log_softmax_gets_the_memory_wording() -> None:
    assert message_at(TNK404_FIXTURE, 73, "TNK404") == (
        "Loop on line 73 computes `log_softmax` one row of `logits` at a time in the training "
        "loop on line 70\nhelp: It runs on every step of the training loop on line 70: the "
        'Python loop over `zip(logits, batch["labels"])` makes one `log_softmax` per row: if it '
        "is there to save memory, keep it; otherwise gather the targets' logits and subtract "
        "`torch.logsumexp(logits, -1)` over the whole batch (a fused gather - logsumexp)"
    )


def test_tnk404_per_parameter_updates_only_in_preview() -> None:
    text = (FIXTURES / TNK404_FIXTURE).read_text()
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "zip(ema_model.parameters()" in s)
    default = lint_text(text, TNK404_FIXTURE, Settings(select=("TNK404",))).diagnostics
    assert [d for d in default if d.line == line] == []
    preview = lint_text(text, TNK404_FIXTURE, Settings(select=("TNK404",), preview=True))
    [diagnostic] = [d for d in preview.diagnostics if d.line == line]
    assert (diagnostic.col, diagnostic.message, diagnostic.help) == (
        29,
        "Loop on line 109 updates one parameter tensor per iteration in the training loop on "
        "line 105",
        "It runs on every step of the training loop on line 105: `.add_()` per parameter tensor "
        "is 2-3 kernel launches, hundreds per step for a large model: use "
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


HOOK_ONLY = """\
import torch


class Module(LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self.model(batch).mean()
        self.log("loss", loss.item())
        return loss
"""


def test_a_hook_is_a_step_in_a_module_with_no_step_call() -> None:
    # Lightning steps for the module: no backward or optimizer step anywhere in it.
    diagnostics = lint_text(HOOK_ONLY, "m.py", Settings(select=("TNK4",))).diagnostics
    assert [(d.code, d.line, d.col) for d in diagnostics] == [("TNK401", 7, 26)]
    assert (
        diagnostics[0].message
        == "`loss.item()` waits for the GPU in `training_step()` (once per step)"
    )
    assert diagnostics[0].help.startswith(
        "It runs on every step of the training loop (`training_step()` runs once per step): "
    )


def test_a_module_with_no_torch_step_is_not_searched_for_one() -> None:
    from pathlib import Path

    from tinker_lint.model.query import SemanticModel
    from tinker_lint.syntax.parse import parse_module

    tinker_loop = Path(__file__).parent.parent / "fixtures" / "tnk1xx" / "tnk101_bad.py"
    model = SemanticModel(parse_module(tinker_loop.read_text(encoding="utf-8")))
    assert model.torch_steps.may_step is False
    assert all(model.torch_steps.step_of(site) is None for site in model.calls)
    hooked = SemanticModel(parse_module(HOOK_ONLY))
    assert hooked.torch_steps.may_step is True
