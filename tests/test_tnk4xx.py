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
