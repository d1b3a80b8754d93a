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


LOGGING_FIX = (
    "accumulate on the device (`running += loss.detach()`) and read it inside your logging "
    "cadence (`if step % log_every == 0:`)"
)
TIMING_FIX = "time with `torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"


def test_helpers_further_away_and_overrides_run_on_every_step() -> None:
    name = "tnk401_host_sync_in_step.py"
    # Two calls away from the loop (loop -> batch_metrics -> scalar).
    assert message_at(name, 146, "TNK401") == (
        "`t.item()` on every step of the training loop on line 154, in `scalar()`, which the loop "
        f"calls: {COST}: {LOGGING_FIX}"
    )
    # compute_loss -> self._compute_loss -> a nested helper.
    assert message_at(name, 170, "TNK401") == (
        "`.item()` on every step of the training loop (`compute_loss()` runs once per step): "
        f"{COST}: {LOGGING_FIX}"
    )
    assert message_at(name, 173, "TNK401").startswith(
        "`loss.item()` on every step of the training loop (`compute_loss()` runs once per step): "
    )
    # A subclass's override of the method the base class's loop calls.
    assert message_at(name, 192, "TNK401") == (
        "`.item()` on every step of the training loop on line 179, in `clip_gradient()`, which "
        f"the loop calls: {COST}: {LOGGING_FIX}"
    )


def test_a_no_grad_block_inside_the_step_is_not_evaluation() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 94, "TNK401") == (
        f"`.item()` on every step of the training loop on line 90: {COST}: {LOGGING_FIX}"
    )


def test_aliased_syncs_and_a_bare_sync() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 197, "TNK401") == (
        f"`synchronize()` on every step of the training loop on line 196: {COST}: {TIMING_FIX}"
    )
    assert message_at(name, 201, "TNK401") == (
        f"`th.cuda.synchronize()` on every step of the training loop on line 196: {COST}: "
        f"{TIMING_FIX}"
    )
    assert message_at(name, 255, "TNK401") == (
        f"`torch.cuda.synchronize()` on every step of the training loop on line 252: {COST}: "
        "remove it, or synchronize only on the log step"
    )


def test_the_guard_around_the_optimizer_step_is_the_step_not_a_cadence() -> None:
    name = "tnk401_host_sync_in_step.py"
    assert message_at(name, 215, "TNK401") == (
        f"`running.item()` on every step of the training loop on line 207: {COST}: {LOGGING_FIX}"
    )
    assert message_at(name, 229, "TNK401") == (
        f"`loss.item()` on every step of the training loop on line 223: {COST}: {LOGGING_FIX}"
    )


def test_a_value_checked_for_nans_by_name_gets_the_guard_fix() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 235, "TNK401") == (
        f"`loss.item()` on every step of the training loop on line 233: {COST}: check it on the "
        "device (`torch.isfinite(loss)`) and read the flag every N steps"
    )


def test_formatting_a_step_tensor_in_an_f_string_is_an_implicit_sync() -> None:
    assert message_at("tnk401_host_sync_in_step.py", 381, "TNK401", col=37) == (
        "`{loss}` in an f-string on every step of the training loop on line 376: formatting a "
        f"tensor reads it on the host, and {COST}: format `loss.item()` on the log step only "
        "(`if step % log_every == 0:`), or accumulate on the device"
    )


def test_mask_indexing_and_nonzero_are_reported_under_preview_only() -> None:
    name = "tnk401_host_sync_in_step.py"
    text = (FIXTURES / name).read_text()
    found = {
        (d.line, d.col): d.message
        for d in lint_text(text, name, Settings(select=("TNK4",), preview=True)).diagnostics
        if 383 < d.line < 414  # `masked_means` and `more_cadences`
    }
    assert found == {
        (393, 16): (
            "`logits[valid]` (boolean-mask indexing) on every step of the training loop on line "
            f"389: the result's size is decided on the GPU, so {COST}: keep the shape fixed "
            "(`torch.where(mask, x, 0)`, `(x * mask).sum() / mask.sum()`) where the code allows it"
        ),
        (396, 16): (
            "`labels.nonzero()` on every step of the training loop on line 389: the result's size "
            f"is decided on the GPU, so {COST}: keep the shape fixed (`torch.where(mask, x, 0)`, "
            "`(x * mask).sum() / mask.sum()`) where the code allows it"
        ),
    }
    default = lint_text(text, name, Settings(select=("TNK4",))).diagnostics
    assert [d for d in default if 383 < d.line < 414] == []


TNK403_FIXTURE = "tnk403_blocking_batch_copy.py"
UNPINNED = (
    "; the `DataLoader` on line 7 does not pin its batches: add `pin_memory=True` so that the copy "
    "can overlap"
)


def test_tnk403_messages_name_the_copy_the_step_and_an_unpinned_loader() -> None:
    assert message_at(TNK403_FIXTURE, 13, "TNK403") == (
        "`inputs.to(device)` copies a batch to the device on every step of the training loop on "
        f"line 12, blocking: pass `non_blocking=True`{UNPINNED}"
    )
    assert message_at(TNK403_FIXTURE, 14, "TNK403") == (
        "`labels.cuda()` copies a batch to the device on every step of the training loop on "
        f"line 12, blocking: pass `non_blocking=True`{UNPINNED}"
    )
    # The loader pins (``pin_memory=True``): the message does not ask for it.
    assert message_at(TNK403_FIXTURE, 21, "TNK403") == (
        "`v.to(device)` copies a batch to the device on every step of the training loop on "
        "line 20, blocking: pass `non_blocking=True`"
    )
    # ``next(train_iter)`` of ``iter(loader)``: the loader is found through the iterator.
    assert message_at(TNK403_FIXTURE, 41, "TNK403") == (
        "`x.to(device)` copies a batch to the device on every step of the training loop on "
        f"line 38, blocking: pass `non_blocking=True`{UNPINNED}"
    )
    assert message_at(TNK403_FIXTURE, 54, "TNK403") == (
        "`torch.as_tensor(tokens, device=device)` copies a batch to the device on every step of "
        "the training loop on line 53, blocking: use `torch.as_tensor(x).to(device, "
        "non_blocking=True)`"
    )
    assert message_at(TNK403_FIXTURE, 60, "TNK403") == (
        '`batch["input_ids"].to(device)` copies a batch to the device on every step of the '
        "training loop on line 67, in `step_on()`, which the loop calls, blocking: pass "
        "`non_blocking=True`"
    )


def test_tnk403_is_off_unless_its_code_is_selected() -> None:
    text = (FIXTURES / TNK403_FIXTURE).read_text()
    for select in (("TNK",), ("TNK4",), ("ALL",)):
        found = lint_text(text, TNK403_FIXTURE, Settings(select=select)).diagnostics
        assert "TNK403" not in {d.code for d in found}, select
    found = lint_text(text, TNK403_FIXTURE, Settings(extend_select=("TNK403",))).diagnostics
    assert [d.line for d in found if d.code == "TNK403"] == [13, 14, 21, 31, 41, 54, 60]


ROW_FIX = (
    "read the batch at once (`ds[indices]`, a slice `ds[i:i + n]`), use "
    '`with_format("torch")` with a `DataLoader`, or pull the needed columns into lists once '
    "before the loop"
)
ROW_COST = (
    "each read converts one row from Arrow (0.15-0.4 ms a row measured, 3-28x a batched read)"
)


def test_per_row_reads_in_a_training_step_a_helper_and_a_generation_loop() -> None:
    name = "tnk402_per_row_dataset_access.py"
    assert message_at(name, 20, "TNK402") == (
        "`ds[i]` reads one row of a `datasets.Dataset` at a time on every step of the training "
        f"loop on line 18: {ROW_COST}: {ROW_FIX}"
    )
    assert message_at(name, 35, "TNK402") == (
        "`ds[start + k]` reads one row of a `datasets.Dataset` at a time on every step of the "
        "training loop on line 39, in `get_batch()`, which the loop calls: "
        f"{ROW_COST}: {ROW_FIX}"
    )
    assert message_at(name, 58, "TNK402") == (
        "`ds[i]` reads one row of a `datasets.Dataset` at a time in the loop on line 57, which "
        f"runs the model under `torch.no_grad()` on every iteration: {ROW_COST}: {ROW_FIX}"
    )


def test_column_then_row_and_map_calling_a_model() -> None:
    name = "tnk402_per_row_dataset_access.py"
    assert message_at(name, 48, "TNK402") == (
        '`ds["input_ids"][i]` in the loop on line 47 reads the column `ds["input_ids"]` to take '
        "one row: in `datasets` < 4.0 that materializes the whole column on every access (36 ms "
        "an access on 1000 rows, measured), and it still costs ~0.5-1.5 ms a row after: read the "
        'rows at once (`ds[indices]["input_ids"]`) or pull the column into a list once before '
        "the loop"
    )
    assert message_at(name, 70, "TNK402") == (
        "`ds.map(embed)` calls `model()` on one row at a time (`batched=False`, the default): "
        "the model runs one example per forward pass: pass `batched=True` (and a `batch_size`) "
        "with a function that takes a batch of rows"
    )


WORKERS_FIX = "pass `num_workers=min(8, os.cpu_count())` (tune it)"
PERSISTENT = "and `persistent_workers=True` if epochs are short or workers start with `spawn`"


def test_synchronous_dataloader_says_what_the_dataset_does_and_when_to_pin() -> None:
    name = "tnk405_synchronous_dataloader.py"
    assert message_at(name, 68, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers` defaults to "
        "0): `ImageDataset.__getitem__` calls `Image.open()` (line 25), and the training loop on "
        f"line 69 waits for it: {WORKERS_FIX}, `pin_memory=True` (the loop copies each batch to "
        f"the device on line 70), {PERSISTENT}"
    )
    # ``pin_memory=True`` already: no second part.
    assert message_at(name, 79, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers=0`): "
        "`TokenizedLines.__getitem__` calls a tokenizer (line 41), and the training loop on line "
        f"80 waits for it: {WORKERS_FIX}, {PERSISTENT}"
    )
    assert message_at(name, 93, "TNK405") == (
        "`DataLoader(...)` loads every sample in a single worker process (`num_workers=1`): "
        "`ArrowRows.__getitem__` reads a row of a `datasets.Dataset` (line 52), and the training "
        f"loop on line 87 waits for it: {WORKERS_FIX}, {PERSISTENT}"
    )
    assert message_at(name, 100, "TNK405") == (
        "`DataLoader(...)` loads every sample in the training process (`num_workers` defaults to "
        "0): `ImageFolder` opens and decodes an image file per sample (line 99), and the training "
        f"loop on line 101 waits for it: {WORKERS_FIX}, `pin_memory=True` (the loop copies each "
        f"batch to the device on line 103), {PERSISTENT}"
    )
