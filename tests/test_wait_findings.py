"""Where the pipelining rules report a wait, and what: at the wait's token, once per wait (the most
specific rule, ``Rule.supersedes``), with a message true for the requests involved."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tinker_lint.fix.apply import apply_fixes
from tinker_lint.io.settings import Settings
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.rules.tnk101_wait_before_submit import (
    CONCURRENT,
    IN_ORDER,
    TWO_CLIENTS,
)
from tinker_lint.rules.tnk104_blocking_wait_in_async import FREEZES, SDK_WARNS, SETUP
from tinker_lint.run.engine import lint_text

ROOT = Path(__file__).resolve().parent.parent

HEAD = """\
import tinker
from tinker import types

service = tinker.ServiceClient()
tc = service.create_lora_training_client(base_model="m").result()
critic = service.create_lora_training_client(base_model="m").result()
sc = service.create_sampling_client(base_model="m").result()
params = types.SamplingParams(max_tokens=8)
adam = tinker.AdamParams(learning_rate=1e-4)


def run(prompts, batches, p, b):
"""

# A sampling wait in a loop before the iteration's next sampling request: TNK101 and TNK103 both.
BOTH = (
    HEAD
    + """\
    for prompt in prompts:
        reply = sc.sample(prompt, 1, params).result()
        score = sc.compute_logprobs(prompt).result()
"""
)
BOTH_AT = (14, 46)  # the `result` of the first wait


def lint(text: str, **settings: object) -> list[tuple[str, int, int, str]]:
    result = lint_text(text, "train.py", replace(Settings(), **settings), fixes=False)
    return [(d.code, d.line, d.col, d.message) for d in result.diagnostics]


def message(**fields: str) -> str:
    """TNK101's message for an SDK wait (``waited`` is the method's name)."""
    rule = next(rule for rule in PYTHON_RULES if rule.code == "TNK101")
    return rule.message.format(**{**fields, "waited": f"`{fields['waited']}`"})


# --- positions ---------------------------------------------------------------------------------
def test_a_multi_line_wait_is_reported_at_result_and_its_end_is_results():
    text = HEAD + (
        "    for batch in batches:\n"
        "        out = tc.forward_backward(\n"
        '            batch, loss_fn="cross_entropy"\n'
        "        ).result()\n"
        "        tc.optim_step(adam)\n"
    )
    result = lint_text(text, "train.py", replace(Settings(), select=("TNK101",)), fixes=False)
    [d] = result.diagnostics
    # Before: 14:15, the line of `tc.forward_backward(`, two lines above the wait.
    assert (d.line, d.col, d.end_line, d.end_col) == (16, 11, 16, 17)


def test_the_fix_still_moves_the_whole_multi_line_wait():
    text = HEAD + (
        "    for batch in batches:\n"
        "        fwd = tc.forward_backward(batch, loss_fn='cross_entropy')\n"
        "        out = fwd.result(\n"
        "            timeout=60,\n"
        "        )\n"
        "        tc.optim_step(adam)\n"
    )
    result = lint_text(text, "train.py", replace(Settings(), select=("TNK101",)))
    [d] = result.diagnostics
    assert (d.line, d.col) == (15, 19)
    assert d.fix is not None
    fixed = text.replace(
        "        out = fwd.result(\n            timeout=60,\n        )\n        tc.optim_step(adam)\n",
        "        tc.optim_step(adam)\n        out = fwd.result(\n            timeout=60,\n        )\n",
    )
    assert apply_fixes(text, [d.fix])[0] == fixed


# --- one finding per wait ----------------------------------------------------------------------
def test_a_wait_both_rules_find_is_reported_once_as_tnk103():
    found = lint(BOTH, select=("TNK1",))
    assert [(code, line, col) for code, line, col, _ in found] == [("TNK103", *BOTH_AT)]


@pytest.mark.parametrize(
    "settings",
    [{"select": ("TNK101",)}, {"select": ("TNK1",), "ignore": ("TNK103",)}],
    ids=["select-TNK101", "ignore-TNK103"],
)
def test_without_tnk103_the_wait_is_still_tnk101(settings):
    found = lint(BOTH, **settings)
    assert found == [
        (
            "TNK101",
            *BOTH_AT,
            message(waited="sample", submit="compute_logprobs", reason=CONCURRENT),
        )
    ]


def test_per_file_ignores_of_tnk103_keep_tnk101():
    found = lint(BOTH, select=("TNK1",), per_file_ignores=(("train.py", ("TNK103",)),))
    assert [(code, line, col) for code, line, col, _ in found] == [("TNK101", *BOTH_AT)]


def test_noqa_on_tnk103_does_not_bring_back_tnk101():
    lines = BOTH.splitlines(keepends=True)
    lines[BOTH_AT[0] - 1] = lines[BOTH_AT[0] - 1].rstrip("\n") + "  # noqa: TNK103\n"
    assert lint("".join(lines), select=("TNK1",)) == []


def test_only_tnk103_declares_a_superseded_code():
    assert {rule.code: rule.supersedes for rule in PYTHON_RULES if rule.supersedes} == {
        "TNK102": ("TNK101",),
        "TNK103": ("TNK101",),
    }


# --- TNK101's message says what is true ----------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "waited", "submit", "reason"),
    [
        (
            "r = tc.forward_backward(b, loss_fn='cross_entropy').result()\ntc.optim_step(adam)\n",
            "forward_backward",
            "optim_step",
            IN_ORDER,
        ),
        (
            "a = sc.sample(p, 1, params).result()\nb = sc.compute_logprobs(p)\n",
            "sample",
            "compute_logprobs",
            CONCURRENT,
        ),
        (
            "a = sc.sample(p, 1, params).result()\ntc.forward_backward(b, loss_fn='cross_entropy')\n",
            "sample",
            "forward_backward",
            TWO_CLIENTS.format("sc", "tc"),
        ),
        (
            "v = critic.forward_backward(b, loss_fn='cross_entropy').result()\n"
            "tc.forward_backward(b, loss_fn='cross_entropy')\n",
            "forward_backward",
            "forward_backward",
            TWO_CLIENTS.format("critic", "tc"),
        ),
    ],
    ids=["training-in-order", "sampling-concurrent", "sample-then-train", "two-clients"],
)
def test_tnk101_message(body, waited, submit, reason):
    found = lint(
        HEAD + "".join("    " + line for line in body.splitlines(True)), select=("TNK101",)
    )
    assert [m for *_, m in found] == [message(waited=waited, submit=submit, reason=reason)]


def test_the_sampling_message_does_not_claim_an_order():
    assert "submission order" not in message(waited="sample", submit="sample", reason=CONCURRENT)
    assert message(waited="sample", submit="sample", reason=CONCURRENT).endswith(
        "(sampling requests are not ordered: they run concurrently, and the round trips overlap)"
    )


# --- flake8 ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "want"), [(["--select", "TNK101"], "TNK101"), (["--select", "TNK"], "TNK103")]
)
def test_flake8_select_tnk101_still_gets_the_wait(tmp_path, argv, want):
    (tmp_path / "train.py").write_text(BOTH)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *argv, "train.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    lines = result.stdout.splitlines()
    assert [line.split(": ")[0] + ": " + line.split(": ")[1][:6] for line in lines] == [
        f"train.py:{BOTH_AT[0]}:{BOTH_AT[1]}: {want}"
    ]


# --- TNK104: a one-off setup wait says what is true there -----------------------------------------
ENTRY = """\
import asyncio

import tinker

service = tinker.ServiceClient()


async def main(prompts):
    sc = service.create_sampling_client(base_model="m").result()
{rest}

asyncio.run(main([]))
"""


def tnk104(text: str) -> list[tuple[int, int, str]]:
    return [(line, col, m) for code, line, col, m in lint(text, select=("TNK104",))]


def blocking(effect: str) -> str:
    rule = next(rule for rule in PYTHON_RULES if rule.code == "TNK104")
    return rule.message.format(
        through="", effect=effect, remedy="use `await fut` instead of `fut.result()`"
    )


def test_a_setup_wait_in_the_entry_coroutine_says_the_loop_blocks_and_the_sdk_warns():
    text = ENTRY.format(rest="    await asyncio.gather(*[sc.sample(p, 1, None) for p in prompts])")
    assert tnk104(text) == [(9, 57, blocking(SETUP + SDK_WARNS))]
    assert blocking(SETUP + SDK_WARNS) == (
        "Blocking wait inside `async def` blocks the event loop before any task runs; the SDK "
        "logs a warning with a stack trace for it: use `await fut` instead of `fut.result()`"
    )


def test_a_training_futures_setup_wait_claims_no_sdk_warning():
    text = ENTRY.format(
        rest="    tc = service.create_lora_training_client(base_model='m').result()\n"
        "    tc.forward_backward([], loss_fn='cross_entropy').result()"
    )
    assert tnk104(text) == [
        (9, 57, blocking(SETUP + SDK_WARNS)),
        (10, 62, blocking(SETUP + SDK_WARNS)),
        (11, 54, blocking(SETUP)),
    ]


@pytest.mark.parametrize(
    "rest",
    [
        # after a task is started: it is frozen by the wait
        "    task = asyncio.create_task(work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()\n"
        "    await task",
        # after a gather
        "    await asyncio.gather(work(), work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        # repeated by a loop
        "    for p in prompts:\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()",
    ],
    ids=["after-create-task", "after-gather", "in-a-loop"],
)
def test_a_wait_after_tasks_start_or_in_a_loop_freezes_them(rest):
    text = ENTRY.format(rest=rest).replace(
        "async def main", "async def work():\n    pass\n\n\nasync def main"
    )
    found = tnk104(text)
    assert [m for *_, m in found] == [blocking(SETUP + SDK_WARNS), blocking(FREEZES)]


def test_a_coroutine_not_run_by_asyncio_run_may_run_beside_others():
    text = ENTRY.replace("asyncio.run(main([]))", "")
    assert tnk104(text) == [(9, 57, blocking(FREEZES))]
