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
