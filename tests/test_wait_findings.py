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
from tinker_lint.rules.tnk101_wait_before_submit import CONCURRENT, TWO_CLIENTS
from tinker_lint.rules.tnk104_blocking_wait_in_async import FREEZES, ONE_OFF, SDK_WARNS
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
# The score's wait: its request does not read the reply, so it is a round trip of its own on every
# iteration, reported too (issue 32, item 2); no submit follows it (no TNK101).
SCORE_AT = (15, 45)


# A supervised loop's requests, waited for in order: the supervised trainer pipelines them.
IN_ORDER = "requests run in submission order; `tinker_cookbook.supervised.train` pipelines this"


def lint(text: str, **settings: object) -> list[tuple[str, int, int, str]]:
    """Each finding's code, position, and message and help (one text, a line each)."""
    result = lint_text(text, "train.py", replace(Settings(), **settings), fixes=False)
    return [(d.code, d.line, d.col, f"{d.message}\nhelp: {d.help}") for d in result.diagnostics]


def message(**fields: str) -> str:
    """TNK101's message and help for an SDK wait (``waited`` is the method's name), as ``lint``
    gives them."""
    rule = next(rule for rule in PYTHON_RULES if rule.code == "TNK101")
    fields = {"through": "", **fields, "waited": f"`{fields['waited']}`"}
    return f"{rule.message.format(**fields)}\nhelp: {rule.help.format(**fields)}"


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
    assert [(code, line, col) for code, line, col, _ in found] == [
        ("TNK103", *BOTH_AT),
        ("TNK103", *SCORE_AT),
    ]


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
    found = lint("".join(lines), select=("TNK1",))
    assert [(code, line, col) for code, line, col, _ in found] == [("TNK103", *SCORE_AT)]


def test_only_tnk103_declares_a_superseded_code():
    # TNK404 replaces TNK401 at a host read inside a per-element loop (tests/test_tnk4xx.py).
    assert {rule.code: rule.supersedes for rule in PYTHON_RULES if rule.supersedes} == {
        "TNK102": ("TNK101",),
        "TNK103": ("TNK101",),
        "TNK404": ("TNK401",),
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
    assert message(waited="sample", submit="sample", reason=CONCURRENT) == (
        "Waiting for `sample` before submitting `sample`, which does not need it\n"
        "help: Submit `sample` first, then wait for both (sampling requests are not ordered: they "
        "run concurrently, and the round trips overlap)"
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
    # With TNK103 selected, the score's own wait is a finding too.
    score = [f"train.py:{SCORE_AT[0]}:{SCORE_AT[1]}: TNK103"] if want == "TNK103" else []
    assert [line.split(": ")[0] + ": " + line.split(": ")[1][:6] for line in lines] == [
        f"train.py:{BOTH_AT[0]}:{BOTH_AT[1]}: {want}",
        *score,
    ]


# --- TNK104: the message says what is true where the wait is -------------------------------------
# Every blocking wait in ``async def`` is reported. It freezes other work only where other coroutines
# can run beside it (``model/analyses/concurrency.py``); elsewhere it blocks the loop for its round trip.
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


def blocking(effect: tuple[str, str], warns: str = "") -> str:
    """TNK104's message and help for a wait made where it is reported, as ``lint`` gives them:
    the rule's variant for what the wait does (``FREEZES``, ``ONE_OFF``) and whether the SDK
    warns."""
    rule = next(rule for rule in PYTHON_RULES if rule.code == "TNK104")
    kind = "freezes" if effect == FREEZES else "blocks"
    assert effect in (FREEZES, ONE_OFF) and warns in ("", SDK_WARNS)
    message, help = rule.variants[kind + ("-warns" if warns else "")]
    return f"{message.format()}\nhelp: {help.format()}"


def test_the_two_messages_word_for_word():
    assert blocking(ONE_OFF, SDK_WARNS) == (
        "Blocking wait inside `async def` blocks the event loop\n"
        "help: Nothing else on the event loop runs for the round trip, and the SDK logs a "
        "sync-from-async warning with a stack trace (the client future's `result()` is "
        "`@sync_only`): use `await fut` instead of `fut.result()`"
    )
    assert blocking(FREEZES, SDK_WARNS) == (
        "Blocking wait inside `async def` freezes every concurrent rollout\n"
        "help: Nothing else on the event loop (the other rollouts) runs until the request comes "
        "back, and the SDK logs a sync-from-async warning with a stack trace (the client future's "
        "`result()` is `@sync_only`): use `await fut` instead of `fut.result()`"
    )


def test_the_fixtures_messages():
    """fixtures/tnk1xx/tnk104_concurrency.py: the positions are its ``# expect:`` lines."""
    path = ROOT / "fixtures" / "tnk1xx" / "tnk104_concurrency.py"
    found = tnk104(path.read_text())
    assert found == [
        (13, 70, blocking(FREEZES, SDK_WARNS)),  # gathered by the module
        (23, 70, blocking(ONE_OFF, SDK_WARNS)),  # awaited one after the other by its caller
        (33, 67, blocking(ONE_OFF, SDK_WARNS)),  # setup in async main, before any task
        (38, 68, blocking(FREEZES, SDK_WARNS)),  # after create_task in the same function
    ]


def test_the_rules_bad_examples_show_both_messages():
    """The rule page's bad examples: a rollout coroutine alone, gathered, and setup in
    ``async def main``."""
    rule = next(rule for rule in PYTHON_RULES if rule.code == "TNK104")
    alone, gathered, setup = rule.INVALID
    assert [m for *_, m in tnk104(alone.code)] == [blocking(ONE_OFF)]
    assert [m for *_, m in tnk104(gathered.code)] == [blocking(FREEZES)]
    assert [m for *_, m in tnk104(setup.code)] == [blocking(ONE_OFF, SDK_WARNS)]


def test_a_setup_wait_in_the_entry_coroutine_says_the_loop_blocks_and_the_sdk_warns():
    text = ENTRY.format(rest="    await asyncio.gather(*[sc.sample(p, 1, None) for p in prompts])")
    assert tnk104(text) == [(9, 57, blocking(ONE_OFF, SDK_WARNS))]


def test_a_training_futures_wait_claims_no_sdk_warning():
    text = ENTRY.format(
        rest="    tc = service.create_lora_training_client(base_model='m').result()\n"
        "    tc.forward_backward([], loss_fn='cross_entropy').result()"
    )
    assert tnk104(text) == [
        (9, 57, blocking(ONE_OFF, SDK_WARNS)),
        (10, 62, blocking(ONE_OFF, SDK_WARNS)),
        (11, 54, blocking(ONE_OFF)),
    ]


@pytest.mark.parametrize(
    "rest",
    [
        # after a task is started: it is frozen by the wait
        "    task = asyncio.create_task(work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()\n"
        "    await task",
        # in a loop that also starts tasks: every iteration after the first comes after it
        "    tasks = []\n"
        "    for p in prompts:\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()\n"
        "        tasks.append(asyncio.create_task(work()))\n"
        "    await asyncio.gather(*tasks)",
        # after a task group's task
        "    async with asyncio.TaskGroup() as tg:\n"
        "        tg.create_task(work())\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()",
        # a gather not awaited where it is made: its coroutines run until it is
        "    pending = asyncio.gather(work(), work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()\n"
        "    await pending",
        # a wait that returns with work left running
        "    tasks = [asyncio.ensure_future(work()) for p in prompts]\n"
        "    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
    ],
    ids=[
        "after-create-task",
        "in-a-loop-that-starts-tasks",
        "after-task-group",
        "gather-not-awaited-yet",
        "wait-first-completed",
    ],
)
def test_a_wait_after_tasks_start_freezes_them(rest):
    text = ENTRY.format(rest=rest).replace(
        "async def main", "async def work():\n    pass\n\n\nasync def main"
    )
    found = tnk104(text)
    assert [m for *_, m in found] == [blocking(ONE_OFF, SDK_WARNS), blocking(FREEZES, SDK_WARNS)]


@pytest.mark.parametrize(
    "rest",
    [
        # repeated by a loop, but nothing runs beside it
        "    for p in prompts:\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()",
        # the loop gathers only after it has ended
        "    for p in prompts:\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()\n"
        "    await asyncio.gather(work(), work())",
        # a thread keeps running while the loop is blocked: nothing on the loop is frozen
        "    await asyncio.to_thread(print, 'x')\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        # awaited one after the other
        "    for p in prompts:\n"
        "        await work()\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        # after an awaited gather: the gathered coroutines are done (distillation/sdft.py L1081)
        "    await asyncio.gather(work(), work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        "    await asyncio.gather(*[asyncio.create_task(work()) for p in prompts])\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        # in a loop that also gathers, each time to the end
        "    for p in prompts:\n"
        "        sc2 = service.create_sampling_client(base_model='m').result()\n"
        "        results = await asyncio.gather(work(), work())",
        # after a task group's block: its tasks are done when the block ends
        "    async with asyncio.TaskGroup() as tg:\n"
        "        tg.create_task(work())\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
        # an asyncio.wait that waits for all
        "    await asyncio.wait([asyncio.ensure_future(work()) for p in prompts])\n"
        "    sc2 = service.create_sampling_client(base_model='m').result()",
    ],
    ids=[
        "in-a-loop",
        "gather-after-the-loop",
        "after-to-thread",
        "after-sequential-awaits",
        "after-awaited-gather",
        "after-awaited-gather-of-tasks",
        "in-a-loop-that-gathers",
        "after-task-group-block",
        "after-awaited-wait",
    ],
)
def test_a_wait_with_nothing_beside_it_only_blocks_the_loop(rest):
    text = ENTRY.format(rest=rest).replace(
        "async def main", "async def work():\n    pass\n\n\nasync def main"
    )
    found = tnk104(text)
    assert [m for *_, m in found] == [blocking(ONE_OFF, SDK_WARNS)] * 2


def test_a_coroutine_no_call_of_the_module_schedules_is_not_said_to_freeze_others():
    # A library coroutine: its callers are not in view, so only what is true anyway is said.
    text = ENTRY.replace("asyncio.run(main([]))", "")
    assert tnk104(text) == [(9, 57, blocking(ONE_OFF, SDK_WARNS))]


CALLED = """\
import asyncio

import tinker

service = tinker.ServiceClient()


async def evaluate(name):
    sc = service.create_sampling_client(model_path=name).result()
    return sc


{callers}
"""


@pytest.mark.parametrize(
    "callers",
    [
        # a comprehension of calls, gathered
        "async def sweep(names):\n    return await asyncio.gather(*[evaluate(n) for n in names])",
        # a list of calls, gathered
        "async def sweep():\n    return await asyncio.gather(*[evaluate('a'), evaluate('b')])",
        # two calls, gathered
        "async def sweep():\n    return await asyncio.gather(evaluate('a'), evaluate('b'))",
        # through a name bound to the calls
        "async def sweep(names):\n"
        "    coros = [evaluate(n) for n in names]\n"
        "    return await asyncio.gather(*coros)",
        # through a list filled in a loop
        "async def sweep(names):\n"
        "    coros = []\n"
        "    for n in names:\n"
        "        coros.append(evaluate(n))\n"
        "    return await asyncio.gather(*coros)",
        # one task, beside the caller
        "async def sweep():\n    task = asyncio.create_task(evaluate('a'))\n    return await task",
        "async def sweep():\n    return await asyncio.ensure_future(evaluate('a'))",
        "async def sweep(names):\n"
        "    for done in asyncio.as_completed([evaluate(n) for n in names]):\n"
        "        await done",
        "async def sweep(names):\n"
        "    await asyncio.wait([asyncio.ensure_future(evaluate(n)) for n in names])",
        # wrapped in another call: a timeout, or a semaphore-bounded wrapper that is gathered
        "async def sweep(names):\n"
        "    await asyncio.gather(*[asyncio.wait_for(evaluate(n), 10) for n in names])",
        "async def sweep(names):\n"
        "    sem = asyncio.Semaphore(4)\n\n"
        "    async def bounded(n):\n"
        "        async with sem:\n"
        "            return await evaluate(n)\n\n"
        "    tasks = [asyncio.create_task(bounded(n)) for n in names]\n"
        "    return await asyncio.gather(*tasks)",
        # awaited by a coroutine that a task group runs
        "async def one(n):\n"
        "    return await evaluate(n)\n\n\n"
        "async def sweep(names):\n"
        "    async with asyncio.TaskGroup() as tg:\n"
        "        for n in names:\n"
        "            tg.create_task(one(n))",
        # awaited by a coroutine after it started a task
        "async def sweep(names):\n"
        "    task = asyncio.create_task(asyncio.sleep(1))\n"
        "    await evaluate('a')\n"
        "    await task",
        # anyio/trio: the function itself is handed to start_soon
        "async def sweep(tg):\n    tg.start_soon(evaluate, 'a')",
    ],
    ids=[
        "gathered-comprehension",
        "gathered-list",
        "gathered-calls",
        "gathered-name",
        "gathered-appended",
        "create-task",
        "ensure-future",
        "as-completed",
        "wait-of-tasks",
        "wait-for-gathered",
        "bounded-wrapper-tasks",
        "caller-in-task-group",
        "called-after-a-task",
        "start-soon",
    ],
)
def test_a_coroutine_scheduled_concurrently_by_its_module_freezes_the_others(callers):
    text = CALLED.format(callers=callers)
    assert tnk104(text) == [(9, 58, blocking(FREEZES, SDK_WARNS))]


@pytest.mark.parametrize(
    "callers",
    [
        # awaited one after the other (recipes/search_tool/offline_eval.py)
        "async def main(names):\n    for n in names:\n        await evaluate(n)",
        # coroutines collected, then awaited one by one: still sequential
        "async def main(names):\n"
        "    coros = [evaluate(n) for n in names]\n"
        "    for c in coros:\n"
        "        await c",
        # run by asyncio.run, not beside anything
        "def main():\n    asyncio.run(evaluate('a'))",
        # passed to a thread: a blocked loop does not stop a thread
        "async def main():\n    await asyncio.to_thread(asyncio.run, evaluate('a'))",
        # a cycle of calls, nothing scheduled
        "async def again(n):\n    return await evaluate(n) if n else await again(n - 1)",
    ],
    ids=["sequential-awaits", "collected-then-awaited", "asyncio-run", "to-thread", "cycle"],
)
def test_a_coroutine_awaited_sequentially_only_blocks_the_loop(callers):
    text = CALLED.format(callers=callers)
    assert tnk104(text) == [(9, 58, blocking(ONE_OFF, SDK_WARNS))]


def test_a_method_of_an_instance_gathered_freezes_the_others():
    text = CALLED.format(
        callers="class Evaluator:\n"
        "    async def one(self, name):\n"
        "        sc = service.create_sampling_client(model_path=name).result()\n"
        "        return sc\n\n\n"
        "async def sweep(names):\n"
        "    evaluator = Evaluator()\n"
        "    return await asyncio.gather(*[evaluator.one(n) for n in names])"
    )
    assert tnk104(text) == [
        (9, 58, blocking(ONE_OFF, SDK_WARNS)),
        (15, 62, blocking(FREEZES, SDK_WARNS)),
    ]


def test_an_instance_called_as_a_coroutine_and_gathered_freezes_the_others():
    text = CALLED.format(
        callers="class Policy:\n"
        "    async def __call__(self, name):\n"
        "        sc = service.create_sampling_client(model_path=name).result()\n"
        "        return sc\n\n\n"
        "async def sweep(names):\n"
        "    policy = Policy()\n"
        "    return await asyncio.gather(*[policy(n) for n in names])"
    )
    assert tnk104(text) == [
        (9, 58, blocking(ONE_OFF, SDK_WARNS)),
        (15, 62, blocking(FREEZES, SDK_WARNS)),
    ]


def test_a_method_gathered_through_self_freezes_the_others():
    text = CALLED.format(
        callers="class Evaluator:\n"
        "    async def one(self, name):\n"
        "        sc = service.create_sampling_client(model_path=name).result()\n"
        "        return sc\n\n"
        "    async def all(self, names):\n"
        "        return await asyncio.gather(*[self.one(n) for n in names])"
    )
    assert tnk104(text) == [
        (9, 58, blocking(ONE_OFF, SDK_WARNS)),
        (15, 62, blocking(FREEZES, SDK_WARNS)),
    ]


# --- the cookbook trainer the help points at --------------------------------------------------------
def test_the_help_points_each_kind_of_loop_at_its_cookbook_trainer():
    """fixtures/tnk1xx/tnk101_loop_kinds_bad.py: an RL loop (it samples and trains), an RL loss, a
    supervised loop and a DPO loop, each waiting before `optim_step`."""
    path = ROOT / "fixtures" / "tnk1xx" / "tnk101_loop_kinds_bad.py"
    result = lint_text(path.read_text(), "train.py", replace(Settings(), select=("TNK101",)))
    first = "Submit `optim_step` first, then wait for both (requests run in submission order"
    assert [(d.line, d.help) for d in result.diagnostics] == [
        (15, f"{first}; `tinker_cookbook.rl.train` pipelines this)"),
        (22, f"{first}; `tinker_cookbook.rl.train` pipelines this)"),
        (29, f"{first}; `tinker_cookbook.supervised.train` pipelines this)"),
        (36, f"{first})"),  # train_dpo (cookbook 0.6.1) waits the same way: no trainer to point at
    ]


def test_an_evaluation_sampled_on_a_cadence_keeps_a_loop_supervised():
    text = HEAD + (
        "    for step, batch in enumerate(batches):\n"
        "        out = tc.forward_backward(batch, loss_fn='cross_entropy').result()\n"
        "        tc.optim_step(adam)\n"
        "        if step % 100 == 0:\n"
        "            sc.sample(p, 1, params).result()\n"
    )
    [d] = lint_text(text, "train.py", replace(Settings(), select=("TNK101",))).diagnostics
    assert d.help.endswith("; `tinker_cookbook.supervised.train` pipelines this)")


def test_a_named_supervised_loss_keeps_a_loop_that_samples_supervised():
    # Off-policy distillation, or an evaluation every step: the loss (passed by position) says
    # what is trained, whatever else the loop asks of a sampler.
    text = HEAD + (
        "    for batch in batches:\n"
        "        sc.sample(p, 1, params).result()\n"
        "        out = tc.forward_backward(batch, 'cross_entropy').result()\n"
        "        tc.optim_step(adam)\n"
    )
    found = lint_text(text, "train.py", replace(Settings(), select=("TNK101",))).diagnostics
    [d] = [d for d in found if d.line == 15]  # (the sample's wait is the other client's)
    assert (d.line, d.help) == (
        15,
        "Submit `optim_step` first, then wait for both (requests run in submission order; "
        "`tinker_cookbook.supervised.train` pipelines this)",
    )


@pytest.mark.parametrize(
    "loss", ["importance_sampling", "ppo", "cispo", "dro", "gspo", "stable_reinforce"]
)
def test_every_policy_gradient_loss_of_the_sdk_makes_a_loop_rl(loss):
    """tinker 0.38.0's ``LossFnType``: all but cross_entropy and custom are RL losses."""
    text = HEAD + (
        "    for batch in batches:\n"
        f"        out = tc.forward_backward(batch, loss_fn={loss!r}).result()\n"
        "        tc.optim_step(adam)\n"
    )
    [d] = lint_text(text, "train.py", replace(Settings(), select=("TNK101",))).diagnostics
    assert d.help.endswith("; `tinker_cookbook.rl.train` pipelines this)")
