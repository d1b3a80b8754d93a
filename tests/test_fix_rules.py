"""Hand-picked fixes: the exact code each fix writes, and the cases that get an unsafe fix or none."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.codes import FIXABLE_CODES
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text
from tinker_lint.run.fixer import fix_text

SETTINGS = Settings(tinker_version=Version("0.38.0"))


def _src(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def fixes(code: str, settings: Settings = SETTINGS) -> list[tuple[str, int, int, str | None]]:
    """(code, line, column, applicability or None) of every finding a fixable rule reports."""
    return [
        (d.code, d.line, d.col, d.fix.applicability if d.fix else None)
        for d in lint_text(_src(code), "t.py", settings).diagnostics
        if d.code in FIXABLE_CODES
    ]


def fixed(code: str, *, unsafe: bool = False, settings: Settings = SETTINGS) -> str:
    return fix_text(_src(code), "t.py", settings, unsafe_fixes=unsafe).text


# ------------------------------------------------------------------------------------------
# TNK105
# ------------------------------------------------------------------------------------------
ASYNC_STEP = """
import tinker

async def step(svc: tinker.ServiceClient, batch, prompt, params):
    tc = await svc.create_lora_training_client_async(base_model="m")
    sc = await svc.create_sampling_client_async(base_model="m")
    fut = await tc.forward_backward_async(batch, loss_fn="cross_entropy")
    r = await sc.sample_async(prompt, num_samples=1, sampling_params=params)
    return await fut, r
"""


def test_tnk105_drops_the_await_of_a_future_and_keeps_the_await_of_a_value():
    assert [f for f in fixes(ASYNC_STEP) if f[0] == "TNK105"] == [
        ("TNK105", 4, 16, "safe"),
        ("TNK105", 5, 16, "safe"),
        ("TNK105", 6, 17, "safe"),
        ("TNK105", 7, 15, "safe"),
    ]
    assert fixed(ASYNC_STEP) == _src(
        """
        import tinker

        async def step(svc: tinker.ServiceClient, batch, prompt, params):
            tc = await svc.create_lora_training_client(base_model="m")
            sc = await svc.create_sampling_client(base_model="m")
            fut = tc.forward_backward(batch, loss_fn="cross_entropy")
            r = await sc.sample(prompt, num_samples=1, sampling_params=params)
            return await fut, r
        """
    )


def test_tnk105_is_not_reported_or_fixed_before_tinker_0_38():
    old = Settings(tinker_version=Version("0.36.0"))
    assert [f for f in fixes(ASYNC_STEP, old) if f[0] == "TNK105"] == []
    assert fixed(ASYNC_STEP, settings=old) == _src(ASYNC_STEP)


def test_tnk105_keeps_parentheses_around_a_dropped_await():
    code = """
    async def step(training_client, batch):
        return (await training_client.forward_backward_async(batch, loss_fn="x")).result()
    """
    assert fixed(code).splitlines()[1] == (
        '    return (training_client.forward_backward(batch, loss_fn="x")).result()'
    )


@pytest.mark.parametrize(
    "line",
    [
        # a future per coroutine: renaming would gather results instead of futures
        'await asyncio.gather(tc.forward_backward_async(b, loss_fn="x"))',
        # create_task needs a coroutine, not a future (TNK108)
        "asyncio.create_task(sampling_client.sample_async(p, num_samples=1))",
        # the plain form returns a value, not something to await
        "info = await tc.get_info_async()",
        # the plain form is deprecated too
        'await tc.load_state_async("path")',
        # an async generator would become a sync one
        '[x async for x in (await tc.forward_backward_async(b, loss_fn="x") for b in bs)]',
    ],
)
def test_tnk105_gives_no_fix_where_the_plain_method_would_behave_differently(line):
    code = f"""
    import asyncio
    import tinker

    async def step(tc: tinker.TrainingClient, sampling_client, b, bs, p):
        {line}
    """
    found = [f for f in fixes(code) if f[0] == "TNK105"]
    assert found and all(f[3] is None for f in found)


def test_tnk105_gathered_coroutine_of_a_value_is_an_unsafe_fix():
    code = """
    import asyncio

    async def rollouts(sampling_client, prompts):
        return await asyncio.gather(*[sampling_client.sample_async(p, num_samples=1) for p in prompts])
    """
    assert fixes(code) == [("TNK105", 4, 35, "unsafe")]
    assert fixed(code) == _src(code)
    assert "sampling_client.sample(p, num_samples=1)" in fixed(code, unsafe=True)


def test_tnk105_receiver_known_only_by_its_name_is_an_unsafe_fix():
    code = """
    async def draw(my_sampler, p):
        return await my_sampler.sample_async(p, num_samples=1)
    """
    assert fixes(code) == [("TNK105", 2, 18, "unsafe")]


# ------------------------------------------------------------------------------------------
# TNK106
# ------------------------------------------------------------------------------------------
def test_tnk106_adds_result_in_sync_code_and_await_in_async_code():
    code = """
    import tinker

    service_client = tinker.ServiceClient()
    training_client = service_client.create_lora_training_client(base_model="m")
    training_client.forward_backward(batch, loss_fn="cross_entropy")

    async def sampler():
        client = service_client.create_sampling_client(base_model="m")
        return client.sample(prompt, num_samples=1)

    async def direct():
        service_client.create_sampling_client(base_model="m").sample(prompt, num_samples=1)
    """
    assert fixes(code) == [
        ("TNK106", 4, 19, "safe"),
        ("TNK106", 8, 14, "safe"),
        ("TNK106", 12, 5, "safe"),
    ]
    assert fixed(code) == _src(
        """
        import tinker

        service_client = tinker.ServiceClient()
        training_client = service_client.create_lora_training_client(base_model="m").result()
        training_client.forward_backward(batch, loss_fn="cross_entropy")

        async def sampler():
            client = await service_client.create_sampling_client(base_model="m")
            return client.sample(prompt, num_samples=1)

        async def direct():
            (await service_client.create_sampling_client(base_model="m")).sample(prompt, num_samples=1)
        """
    )


TNK106_USES = """
import tinker

service_client = tinker.ServiceClient()

def make():
    tc = service_client.create_lora_training_client(base_model="m")
    tc.forward_backward(batch, loss_fn="cross_entropy")
    {use}
"""


@pytest.mark.parametrize(
    ("use", "applicability"),
    [
        ("tc.optim_step(adam)", "safe"),
        ("trainers.append(tc)", "unsafe"),  # whoever gets it may use it as a future
        ("tc = other", "safe"),  # another binding is no use of this value
        ("tc += other", "unsafe"),  # but this reads it
        ("return tc.result()", None),  # would call .result() on a client
        ("tc.add_done_callback(cb)", None),
    ],
)
def test_tnk106_fix_depends_on_every_use_of_the_value(use, applicability):
    assert fixes(TNK106_USES.format(use=use)) == [("TNK106", 6, 10, applicability)]


def test_tnk106_other_functions_own_variables_of_the_same_name_do_not_count():
    code = """
    import tinker

    tc = tinker.ServiceClient().create_lora_training_client(base_model="m")
    tc.forward_backward(batch, loss_fn="cross_entropy")

    def helper(tc):
        return tc.result()
    """
    assert fixes(code) == [("TNK106", 3, 6, "safe")]


def test_tnk106_attribute_of_self():
    code = """
    import tinker

    class Trainer:
        def __init__(self, service_client: tinker.ServiceClient):
            self.training_client = service_client.create_lora_training_client(base_model="m")

        def step(self, batch):
            return self.training_client.forward_backward(batch, loss_fn="cross_entropy")
    """
    assert fixes(code) == [("TNK106", 5, 32, "safe")]
    assert 'create_lora_training_client(base_model="m").result()' in fixed(code)


def test_tnk106_no_await_in_a_generator_expression():
    code = """
    import tinker

    async def clients(service_client: tinker.ServiceClient, paths):
        gen = (service_client.create_sampling_client(model_path=p).sample(x) for p in paths)
        return gen
    """
    assert fixes(code) == [("TNK106", 4, 12, None)]


# ------------------------------------------------------------------------------------------
# TNK101
# ------------------------------------------------------------------------------------------
LOOP = """
import tinker

def train(tc: tinker.TrainingClient, batches, adam):
    for batch in batches:
{body}
"""


def loop(body: str) -> str:
    return _src(LOOP.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)))


def test_tnk101_moves_the_wait_after_the_next_submit():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
        r = fwd.result()
        opt = tc.optim_step(adam)
        opt.result()
        """
    )
    assert fixes(code) == [("TNK101", 6, 17, "safe")]
    assert fixed(code) == loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
        opt = tc.optim_step(adam)
        r = fwd.result()
        opt.result()
        """
    )


def test_tnk101_splits_the_one_expression_form():
    code = loop(
        """
        r = tc.forward_backward(batch, loss_fn="cross_entropy").result()  # grads
        tc.optim_step(adam).result()
        """
    )
    assert fixed(code) == loop(
        """
        r_future = tc.forward_backward(batch, loss_fn="cross_entropy")  # grads
        tc.optim_step(adam).result()
        r = r_future.result()
        """
    )


def test_tnk101_split_picks_a_fresh_name():
    code = loop(
        """
        r_future = None
        tc.forward_backward(batch, loss_fn="cross_entropy").result()
        tc.optim_step(adam)
        """
    )
    assert "forward_backward_future = tc.forward_backward(" in fixed(code)
    code = loop(
        """
        r_future = None
        r = tc.forward_backward(batch, loss_fn="cross_entropy").result()
        tc.optim_step(adam)
        """
    )
    assert "r_future_2.result()" in fixed(code)


def test_tnk101_same_line():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x"); r = fwd.result(); opt = tc.optim_step(adam)
        """
    )
    assert fixed(code) == loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x"); opt = tc.optim_step(adam); r = fwd.result()
        """
    )


def test_tnk101_comments_above_the_wait_move_with_it_blank_lines_stay():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")

        # gradients
        r = fwd.result()
        lr = schedule(batch)
        opt = tc.optim_step(adam)
        """
    )
    assert fixed(code) == loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")

        lr = schedule(batch)
        opt = tc.optim_step(adam)
        # gradients
        r = fwd.result()
        """
    )


def test_tnk101_async_await():
    code = """
    async def train(tc, batches, adam):
        for batch in batches:
            r = await tc.forward_backward(batch, loss_fn="cross_entropy")
            await tc.optim_step(adam)
    """
    assert fixed(code) == _src(
        """
        async def train(tc, batches, adam):
            for batch in batches:
                r_future = tc.forward_backward(batch, loss_fn="cross_entropy")
                await tc.optim_step(adam)
                r = await r_future
        """
    )


@pytest.mark.parametrize(
    ("body", "applicability"),
    [
        # the handler would skip the optimizer step that is now already submitted
        (
            """
            try:
                r = fwd.result()
                tc.optim_step(adam)
            except RuntimeError:
                continue
            """,
            "unsafe",
        ),
        # a handler that only re-raises skips nothing
        (
            """
            try:
                r = fwd.result()
                tc.optim_step(adam)
            except RuntimeError:
                raise
            """,
            "safe",
        ),
        (
            """
            with contextlib.suppress(RuntimeError):
                r = fwd.result()
                tc.optim_step(adam)
            """,
            "unsafe",
        ),
        # something in between reads the result: no fix
        (
            """
            r = fwd.result()
            print(r.loss)
            tc.optim_step(adam)
            """,
            None,
        ),
        # something in between rebinds the future: no fix
        (
            """
            r = fwd.result()
            fwd = None
            tc.optim_step(adam)
            """,
            None,
        ),
        # a branch in between: the moved wait could be skipped
        (
            """
            r = fwd.result()
            if batch:
                continue
            tc.optim_step(adam)
            """,
            None,
        ),
        # a closure sees `r`, and could be called before the wait
        (
            """
            r = fwd.result()
            report = lambda: r
            tc.optim_step(adam)
            """,
            "unsafe",
        ),
    ],
)
def test_tnk101_applicability(body, applicability):
    code = loop('fwd = tc.forward_backward(batch, loss_fn="x")\n' + textwrap.dedent(body))
    found = [f for f in fixes(code) if f[0] == "TNK101"]
    assert found and found[0][3] == applicability


def test_tnk101_result_read_by_a_nested_function_is_unsafe():
    code = """
    def train(tc, batches, adam):
        def report():
            print(r)

        for batch in batches:
            fwd = tc.forward_backward(batch, loss_fn="x")
            r = fwd.result()
            tc.optim_step(adam)
            report()
    """
    assert fixes(code) == [("TNK101", 7, 17, "unsafe")]


def test_tnk101_wait_stays_before_a_submit_handed_a_lambda_that_reads_the_result():
    # The lambda runs when `forward_backward_custom` does: the result must be there by then.
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
        r = fwd.result()
        tc.optim_step(adam)
        tc.forward_backward_custom(batch, lambda data, lp: (lp, r))
        """
    )
    assert fixed(code, unsafe=True) == loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="cross_entropy")
        tc.optim_step(adam)
        r = fwd.result()
        tc.forward_backward_custom(batch, lambda data, lp: (lp, r))
        """
    )


def test_tnk101_caller_in_try_is_unsafe():
    code = """
    def step(tc, batch, adam):
        fwd = tc.forward_backward(batch, loss_fn="x")
        r = fwd.result()
        tc.optim_step(adam)
        return r

    def train(tc, batches, adam):
        for batch in batches:
            try:
                step(tc, batch, adam)
            except RuntimeError:
                pass
    """
    assert fixes(code) == [("TNK101", 3, 13, "unsafe")]


def test_noqa_findings_are_not_fixed():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")
        r = fwd.result()  # noqa: TNK101
        opt = tc.optim_step(adam)
        """
    )
    assert fixes(code) == []
    assert fixed(code) == code


def test_crlf_edits_keep_crlf():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")
        r = fwd.result()
        opt = tc.optim_step(adam)
        """
    ).replace("\n", "\r\n")
    result = fix_text(code, "t.py", SETTINGS)
    assert result.fixed and result.text != code
    assert result.text.count("\r\n") == code.count("\r\n")
    assert "\n" not in result.text.replace("\r\n", "")


# ------------------------------------------------------------------------------------------
# Edits made from regenerated statements: the layouts that could trip them
# ------------------------------------------------------------------------------------------
LAYOUTS = {
    "no final newline": "async def f(tc, b):\n    return await tc.forward_backward_async(b, loss_fn='x')",
    "tabs": "async def f(tc, b):\n\tif b:\n\t\tx = await tc.forward_backward_async(b, loss_fn='x')\n",
    "mixed widths": (
        "async def f(tc, b):\n  if b:\n        x = await tc.forward_backward_async(b, loss_fn='x')\n"
    ),
    "else branch": (
        "async def f(tc, b):\n    if b:\n        pass\n    else:\n"
        "        # note\n\n        x = await tc.forward_backward_async(b, loss_fn='x')\n"
    ),
    "decorated": (
        "import tinker\n\n@decorate\n# comment\n@another(1)\nasync def f(tc, b):\n"
        "    x = await tc.forward_backward_async(b, loss_fn='x')\n\n"
        "tc = tinker.ServiceClient().create_lora_training_client(base_model='m')\n"
        "tc.forward_backward(b, loss_fn='x')"
    ),
    "compound header": (
        "async def f(svc, b):\n    with await svc.create_lora_training_client_async(base_model='m') as tc:\n"
        "        tc.forward_backward(b, loss_fn='x')\n"
    ),
    "one-line body": "async def f(tc, b):\n    if b: x = await tc.forward_backward_async(b, loss_fn='x')\n",
    "crlf": "async def f(tc, b):\r\n    if b:\r\n        x = await tc.forward_backward_async(b, loss_fn='x')\r\n",
    "move at end of file": (
        "def f(tc, b, adam):\n    fwd = tc.forward_backward(b, loss_fn='x')\n    r = fwd.result()\n"
        "    tc.optim_step(adam)"
    ),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_edit_from_regenerated_statements_matches_the_whole_module(name, monkeypatch):
    import tinker_lint.fix.apply as apply_module
    from tinker_lint.fix.apply import apply_fixes

    source = LAYOUTS[name]
    calls: list[object] = []
    local_edit = apply_module._local_edit

    def recording(*args):
        calls.append(local_edit(*args))
        return calls[-1]

    monkeypatch.setattr(apply_module, "_local_edit", recording)
    fast = lint_text(source, "t.py", SETTINGS).diagnostics
    assert calls and False not in calls, "the statements could not be regenerated on their own"
    monkeypatch.setattr(apply_module, "_local_edit", lambda *args: False)
    slow = lint_text(source, "t.py", SETTINGS).diagnostics
    fixed = [d for d in fast if d.fix]
    assert fixed and len(fixed) == len([d for d in slow if d.fix])
    for a, b in zip(fast, slow, strict=True):
        if a.fix:
            after = apply_fixes(source, [a.fix])[0]
            assert after == apply_fixes(source, [b.fix])[0]
            compile(after, "t.py", "exec")


def test_tnk101_moves_past_the_submits_that_follow_but_not_past_a_save():
    code = loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")
        r = fwd.result()
        opt = tc.optim_step(adam)
        lr = schedule(batch)
        samples = sampler.sample(prompt, num_samples=1, sampling_params=params)
        tc.save_state("ckpt")
        """
    )
    result = lint_text(code, "t.py", SETTINGS).diagnostics
    (found,) = [d for d in result if d.code == "TNK101"]
    assert found.fix.message == "Move the wait after `optim_step(…)`, `sample(…)` is submitted"
    assert fixed(code) == loop(
        """
        fwd = tc.forward_backward(batch, loss_fn="x")
        opt = tc.optim_step(adam)
        lr = schedule(batch)
        samples = sampler.sample(prompt, num_samples=1, sampling_params=params)
        r = fwd.result()
        tc.save_state("ckpt")
        """
    )


def test_a_failing_fix_keeps_its_finding_and_reports_an_internal_error(monkeypatch):
    import tinker_lint.rules.tnk105_deprecated_async_method as rule_module

    def broken(*args):
        raise KeyError("boom")

    monkeypatch.setattr(rule_module, "plan_plain_method", broken)
    found = lint_text(_src(ASYNC_STEP), "t.py", SETTINGS).diagnostics
    assert [(d.line, d.fix) for d in found if d.code == "TNK105"] == [
        (4, None),
        (5, None),
        (6, None),
        (7, None),
    ]
    (error,) = [d for d in found if d.code == "TNK000"]  # once, not once per finding
    assert "Internal error in the TNK105 fix" in error.message


# ------------------------------------------------------------------------------------------
# TNK403 (opt-in: selected by its code)
# ------------------------------------------------------------------------------------------
TNK403 = Settings(tinker_version=Version("0.38.0"), select=("TNK403",))
BATCH_COPIES = """
import torch
from torch.utils.data import DataLoader

loader = DataLoader(ds, batch_size=8, pin_memory=True)
for inputs, labels, lengths, extra in loader:
    inputs = inputs.to(device)
    labels = labels.cuda()
    mask = torch.as_tensor(lengths, device=device)
    batch = {k: v.to(
        device,
    ) for k, v in extra.items()}
    criterion(model(inputs, batch), labels).backward()
    optimizer.step()
"""


def test_tnk403_adds_non_blocking_to_a_fresh_loader_batch():
    assert fixes(BATCH_COPIES, TNK403) == [
        ("TNK403", 6, 14, "safe"),
        ("TNK403", 7, 14, "safe"),
        ("TNK403", 8, 12, None),  # torch.as_tensor has no non_blocking: the message says how
        ("TNK403", 9, 17, "safe"),
    ]
    assert fixed(BATCH_COPIES, settings=TNK403) == _src(
        """
        import torch
        from torch.utils.data import DataLoader

        loader = DataLoader(ds, batch_size=8, pin_memory=True)
        for inputs, labels, lengths, extra in loader:
            inputs = inputs.to(device, non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            mask = torch.as_tensor(lengths, device=device)
            batch = {k: v.to(
                device, non_blocking=True,
            ) for k, v in extra.items()}
            criterion(model(inputs, batch), labels).backward()
            optimizer.step()
        """
    )


STAGING = """
for step, batch in enumerate(loader):
    staging = batch["x"]
    x = staging.to(device)
    model(x).loss.backward()
    optimizer.step()
    staging.copy_(next_input)
"""


def test_tnk403_fix_is_unsafe_when_the_loop_writes_the_source_in_place_afterwards():
    assert fixes(STAGING, TNK403) == [("TNK403", 3, 9, "unsafe")]
    assert fixed(STAGING, settings=TNK403) == _src(STAGING)
    assert "x = staging.to(device, non_blocking=True)\n" in fixed(
        STAGING, unsafe=True, settings=TNK403
    )
    # Written before the copy, not after: a fresh value each step, the fix is safe.
    before = STAGING.replace("    staging.copy_(next_input)\n", "").replace(
        '    staging = batch["x"]\n', '    staging = batch["x"]\n    staging[0] = 1\n'
    )
    assert fixes(before, TNK403) == [("TNK403", 4, 9, "safe")]


# TNK407
# ------------------------------------------------------------------------------------------
TORCH = Settings(select=("TNK407",))


def _in_step(line: str) -> str:
    return f"""
import torch

def train(model, loader, optimizer, device):
    dev = torch.device("cuda")
    for batch in loader:
        x = {line}
        model(batch, x).loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("torch.zeros(len(batch)).to(dev)", "torch.zeros(len(batch), device=dev)"),
        ("torch.ones(4, 4).cuda()", 'torch.ones(4, 4, device="cuda")'),
        ("torch.arange(16).to(batch.device)", "torch.arange(16, device=batch.device)"),
        ('torch.tensor([0.5, 2.0]).to("cuda")', 'torch.tensor([0.5, 2.0], device="cuda")'),
        (
            "torch.zeros(8).to(dev, dtype=torch.float16)",
            "torch.zeros(8, device=dev, dtype=torch.float16)",
        ),
        ("torch.eye(3).to(dev, torch.bfloat16)", "torch.eye(3, device=dev, dtype=torch.bfloat16)"),
        ('torch.full((2,), 7).to(device="cuda")', 'torch.full((2,), 7, device="cuda")'),
    ],
)
def test_tnk407_builds_the_tensor_on_the_device(before: str, after: str) -> None:
    assert fixes(_in_step(before), TORCH) == [("TNK407", 6, 13, "safe")]
    assert fixed(_in_step(before), settings=TORCH) == _src(_in_step(after))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # The device's generator: the same seed gives other numbers.
        ("torch.randn(8).to(dev)", "torch.randn(8, device=dev)"),
        # A parameter: `.to(x)` also takes a dtype or a tensor.
        ("torch.zeros(8).to(device)", "torch.zeros(8, device=device)"),
    ],
)
def test_tnk407_random_factories_and_unknown_devices_are_unsafe(before: str, after: str) -> None:
    assert fixes(_in_step(before), TORCH) == [("TNK407", 6, 13, "unsafe")]
    assert fixed(_in_step(before), settings=TORCH) == _src(_in_step(before))
    assert fixed(_in_step(before), unsafe=True, settings=TORCH) == _src(_in_step(after))


@pytest.mark.parametrize(
    "line",
    [
        "torch.zeros(8).to(dev, non_blocking=True)",  # another argument of the move
        "torch.arange(8).to(dev, dtype=torch.float16)",  # arange in float16 can step differently
        "torch.tensor([0.1]).to(dev, dtype=torch.float16)",  # rounded twice after building
        "torch.zeros(8, dtype=torch.float64).to(dev, dtype=torch.float32)",  # two dtypes
        "torch.ones(8).cuda(non_blocking=True)",
    ],
)
def test_tnk407_no_fix_when_the_move_does_more(line: str) -> None:
    assert fixes(_in_step(line), TORCH) == [("TNK407", 6, 13, None)]


def test_tnk407_fix_end_to_end_on_the_fixture(tmp_path) -> None:
    from tinker_lint.cli import main

    source = (
        Path(__file__).parent.parent / "fixtures" / "tnk4xx" / "tnk407_tensor_built_then_moved.py"
    )
    target = tmp_path / "train.py"
    target.write_text(source.read_text())
    code = main(
        ["--fix", "--unsafe-fixes", "--no-cache", "--isolated", "--select", "TNK407", str(target)]
    )
    original = source.read_text()
    expected = original.replace(
        "mask = torch.ones(len(batch)).to(device)  # expect",
        "mask = torch.ones(len(batch), device=device)  # expect",
    ).replace(
        "scale = torch.tensor([0.5, 2.0]).cuda()  # expect",
        'scale = torch.tensor([0.5, 2.0], device="cuda")  # expect',
    )
    assert expected != original
    assert target.read_text() == expected
    assert code == 0


def test_tnk407_keeps_a_call_written_one_argument_per_line() -> None:
    code = """
    import torch

    def train(model, loader, optimizer):
        for batch in loader:
            x = torch.zeros(
                len(batch),
                4,
            ).to("cuda", dtype=torch.half)
            w = torch.zeros(
                len(batch),
            ).to("cuda")
            model(batch, x, w).loss.backward()
            optimizer.step()
    """
    assert fixed(code, settings=TORCH) == _src(
        """
        import torch

        def train(model, loader, optimizer):
            for batch in loader:
                x = torch.zeros(
                    len(batch),
                    4,
                    device="cuda",
                    dtype=torch.half,
                )
                w = torch.zeros(
                    len(batch),
                    device="cuda",
                )
                model(batch, x, w).loss.backward()
                optimizer.step()
        """
    )
