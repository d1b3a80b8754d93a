"""The second pre-filter (``prefilter/sketch.py``): each fact it reads from CPython's tree, and that
ruling rules out with it never loses a finding."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from tests.tinker_programs import BODIES, SHAPES
from tinker_lint.io.settings import Settings
from tinker_lint.model.facts.sdk import Role
from tinker_lint.prefilter.mentions import may_concern_tinker, may_concern_torch
from tinker_lint.prefilter.sketch import sketch
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.run.engine import lint_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# As in test_robustness_fuzz.py: a nightly-size run sets TINKER_LINT_FUZZ_EXAMPLES (and explores).
EXPLORE = "TINKER_LINT_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("TINKER_LINT_FUZZ_EXAMPLES", "60"))


def facts(code: str, hot_loop_calls: str | None = None):
    pattern = re.compile(hot_loop_calls) if hot_loop_calls else None
    return sketch(ast.parse(textwrap.dedent(code)), pattern)


def test_called_roles_come_from_method_names():
    found = facts("tc.forward_backward(b)\nsc.sample(p)\nsvc.create_lora_training_client()\n")
    assert found.called_roles == {Role.TRAIN, Role.SAMPLE, Role.FACTORY}
    assert found.called_methods == {"forward_backward", "sample", "create_lora_training_client"}
    # Named only in a docstring, an annotation or a plain function call: no role.
    assert facts('"""Uses tc.forward_backward()."""\ndef f(c: "TrainingClient"): sample(x)\n') == (
        facts("x = 1\n")
    )


# Each one-bit fact, on programs where it holds and near misses where it does not.
FACT_CASES = {
    "wait_then_submit": [
        ("fut = tc.forward_backward(b)\nr = fut.result()\ntc.optim_step(a)\n", True),
        ("r = tc.forward_backward(x.result())\n", True),  # the wait comes first
        ("for b in bs:\n    r = await sc.sample(b)\n", True),  # the next iteration's submit
        ("async def f():\n    return await sc.sample(p)\n", False),  # the wait is its own submit
        ("r = tc.forward_backward(b).result()\n", False),
        # A function named as the method it calls waits by name, after its own submit.
        ("def sample(sc, p):\n    return sc.sample(p).result()\n", False),
        (
            "def sample(sc, p):\n    return sc.sample(p).result()\n\nsample(sc, p)\nsc.sample(p)\n",
            True,
        ),
        ("tc.optim_step(a)\nfut.result()\n", False),  # the wait comes after
        ("fut.result()\ntc.save_state(name)\n", False),  # TNK101 leaves waits before saves
        ("def f(x=fut.result()):\n    pass\n\ntc.optim_step(a)\n", True),  # a default runs here
        ("if c:\n    fut.result()\nelse:\n    tc.optim_step(a)\n", True),  # over-approximated
        # The wait and the submit in different functions.
        ("def a():\n    fut.result()\n\ndef b():\n    tc.optim_step(x)\n", False),
        ("concurrent.futures.wait(futs)\ntc.optim_step(x)\n", True),
        # A call of a function of the module that steps submits; of a class whose ``__call__``
        # steps, an instance called as one (not the class: a constructor).
        ("def s(b):\n    return tc.forward_backward(b)\n\nfut.result()\ns(b)\n", True),
        ("def s(b):\n    return tc.forward_backward(b)\n\ns(b)\nfut.result()\n", False),
        (
            "class P:\n    def __call__(self, b):\n        tc.sample(b)\n\nfut.result()\np(b)\n",
            True,
        ),
        (
            "class P:\n    def __call__(self, b):\n        tc.sample(b)\n\nfut.result()\nP(b)\n",
            False,
        ),
        ("from concurrent.futures import wait as w\nw(futs)\ntc.optim_step(x)\n", True),
    ],
    "blocks_in_async": [
        ("async def f():\n    return fut.result()\n", True),
        ("async def f():\n    def g():\n        return fut.result()\n", True),  # over-approximated
        ("from concurrent.futures import wait as w\nasync def f():\n    w(futs)\n", True),
        ("def f():\n    return fut.result()\n", False),
        ("async def f():\n    return await fut\n", False),
    ],
    "unwaited_client_future": [
        ("tc = svc.create_lora_training_client(base_model=m)\n", True),
        ("sc = tc.save_weights_and_get_sampling_client(name=n)\n", True),
        ("tc = svc.create_lora_training_client(base_model=m).result()\n", False),
        ("async def f():\n    tc = await svc.create_lora_training_client(base_model=m)\n", False),
        ("async def f():\n    tc = await svc.create_lora_training_client_async(m)\n", False),
    ],
    "task_of_possible_future": [
        ("asyncio.create_task(fut)\n", True),
        ("asyncio.create_task(tc.forward_backward(b))\n", True),
        ("async def run():\n    pass\n\nasyncio.create_task(run())\n", False),  # a coroutine
        ("async def run():\n    pass\n\nasyncio.create_task(coro=run())\n", False),
        ("def run():\n    pass\n\nasyncio.create_task(run())\n", True),  # what does it return?
        ("async def pop():\n    pass\n\nasyncio.create_task(q.pop())\n", True),  # a getter
        ("from asyncio import create_task as spawn\nspawn(fut)\n", True),
        ("asyncio.create_task(*args)\n", True),
        ("asyncio.create_task()\n", False),
    ],
    "torch_step": [
        ("for b in loader:\n    loss.backward()\n", True),
        ("while True:\n    accelerator.backward(loss)\n", True),
        ("for b in loader:\n    self.optimizer.step()\n", True),
        ("for b in loader:\n    scaler.step(opt)\n", True),
        ("for b in loader:\n    model_engine.step()\n", True),
        ("for b in loader:\n    Opt.step(closure)\n", True),  # arguments: over-approximated
        ("for b in loader:\n    turtle.backward(10)\n", True),  # any ``backward``
        ("losses = [l.backward() for l in parts]\n", True),
        # Through functions of the module, by name, at any depth.
        ("def f(l):\n    l.backward()\n\ndef g(l):\n    f(l)\n\nfor b in bs:\n    g(b)\n", True),
        (
            "class T:\n    def fit(self):\n        for b in bs:\n            self.run(b)\n"
            "    def run(self, b):\n        self.opt.step()\n",
            True,
        ),
        # Per-step hooks: one that steps; two that are a step by themselves.
        ("class A:\n    def update(self, b):\n        self.opt.step()\n", True),
        ("class M:\n    def training_step(self, b):\n        return self.net(b)\n", True),
        ("class T:\n    async def compute_loss(self, m, x):\n        return m(x)\n", True),
        # Near misses: no loop, no step, a function the loop does not call, a hook that does
        # not step.
        ("loss.backward()\noptimizer.step()\n", False),
        ("for b in loader:\n    scheduler.step()\n    env.step(action)\n", False),
        ("for b in loader:\n    optimizers[0].step()\n    make_optimizer().step()\n", False),
        ("def f(l):\n    l.backward()\n\nfor b in bs:\n    g(b)\n", False),
        ("for b in bs:\n    def later(l):\n        l.backward()\n", False),
        ("class A:\n    def update(self, b):\n        self.n += 1\n", False),
    ],
    "row_access": [
        ("ds.map(embed)\n", True),
        ("ds2 = ds.map(function=lambda r: model(**r))\n", True),
        ('for i in range(n):\n    x = ds["text"][i]\n', True),
        ("lengths = [len(ds[c][i]) for i in idx]\n", True),
        ("for s in steps:\n    rows = [ds[i] for i in idx]\n", True),
        ("while more:\n    for i in idx:\n        row = ds[i]\n", True),
        ("ds.map()\n", False),
        ('x = ds["text"][0]\n', False),  # not in a loop
        ("for i in idx:\n    row = ds[i]\n", False),  # one loop: a torch step's (TNK402)
        ("rows = [[ds[i] for i in a] for a in b]\n", False),  # no ``for``/``while`` around
        ("for s in steps:\n    def f(i):\n        return [ds[i] for i in idx]\n", False),
    ],
}


@pytest.mark.parametrize(
    ("fact", "code", "expected"),
    [(fact, code, expected) for fact, cases in FACT_CASES.items() for code, expected in cases],
)
def test_fact(fact, code, expected):
    assert getattr(facts(code), fact) is expected


@pytest.mark.parametrize(
    ("code", "hot", "submits"),
    [
        ("for b in bs:\n    tc.forward_backward(b)\n", True, True),
        ("out = [sc.sample(p) for p in prompts]\n", True, True),
        ("for b in bs:\n    tc.save_state(b)\n", False, True),  # a save is no step
        ("tc.forward_backward(b)\nfor x in xs:\n    log(x)\n", False, False),
        # Through functions of the module, by name, at any depth.
        (
            "def inner(b):\n    return tc.optim_step(b)\n\ndef outer(b):\n    inner(b)\n\n"
            "class T:\n    def run(self):\n        for b in bs:\n            self.outer(b)\n",
            True,
            True,
        ),
        ("def f(b):\n    return tc.optim_step(b)\n\nfor b in bs:\n    g(b)\n", False, False),
    ],
)
def test_loops_that_submit(code, hot, submits):
    found = facts(code)
    assert (found.hot_loop, found.submit_loop) == (hot, submits)


def test_hot_loop_calls_make_a_loop_hot():
    code = "for b in batches:\n    trainer.step(b)\n"
    assert not facts(code).hot_loop
    assert facts(code, r"step\Z").hot_loop
    assert facts(code, r"trainer\.step\Z").hot_loop


def test_a_tree_deeper_than_pythons_stack_is_walked():
    """CPython's tree of a chain of additions is as deep as the chain is long; a recursive walk
    would exceed the recursion limit set here."""
    tree = ast.parse("x = " + " + ".join(["tc.forward_backward(b)"] * 900) + "\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        found = sketch(tree)
    finally:
        sys.setrecursionlimit(limit)
    assert found.called_roles == {Role.TRAIN}


@pytest.mark.slow
@pytest.mark.parametrize("hot_loop_calls", [(), ("process",)])
# Half the examples for each setting: the two together are one run's worth (the one with
# ``hot_loop_calls`` was the third-longest test of the suite at the full count).
@settings(
    max_examples=max(EXAMPLES // 2, 1),
    deadline=None,
    derandomize=not EXPLORE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(shape=st.sampled_from(SHAPES), body=BODIES)
# Found by this test: answers of the model that depended on which rules had asked before.
@example(shape=SHAPES[0], body="tc\ntc = tc\ntc = await (tc)\n")
@example(
    shape=SHAPES[2],
    body='with (tc.forward_backward(batch, loss_fn="cross_entropy")).result() as tc:\n    break\n',
)
def test_the_sketch_loses_no_finding(hot_loop_calls, shape, body):
    """Tinker-shaped programs linted with both pre-filters and with none: the same findings. (So
    also: no answer of the model depends on which rules ran, or in which order they asked.)"""
    source = shape(body)
    lint_settings = Settings(tinker_version=Version("0.38.0"), hot_loop_calls=hot_loop_calls)
    filtered = lint_text(source, "p.py", lint_settings).diagnostics
    everything = lint_text(source, "p.py", lint_settings, prefilter=False).diagnostics
    assert filtered == everything, source


def test_text_the_gate_turns_away_no_rule_would_read():
    """The flake8 plugin imports the engine only for text ``may_concern_tinker`` passes: every
    rule's own text test must fail on the rest (fixtures, rule examples, and this project)."""
    texts = [p.read_text() for p in FIXTURES.rglob("*.py")]
    texts += [p.read_text() for p in (ROOT / "tinker_lint").rglob("*.py")]
    texts += [e.code for rule in PYTHON_RULES for e in (*rule.VALID, *rule.INVALID)]
    turned_away = [t for t in texts if not may_concern_tinker(t) and not may_concern_torch(t)]
    assert len(turned_away) > 10 and len(texts) - len(turned_away) > 50
    for text in turned_away:
        assert not [rule.code for rule in PYTHON_RULES if rule.applies_to(text)], text


@pytest.mark.slow
def test_the_plugin_imports_no_libcst_for_a_file_without_tinker():
    script = textwrap.dedent(
        """
        import ast, sys
        from tinker_lint.flake8_plugin import TinkerLintPlugin
        def run(text):
            lines = text.splitlines(keepends=True)
            return list(TinkerLintPlugin(ast.parse(text), "t.py", lines).run())
        assert run("import json\\nfor x in xs:\\n    json.dumps(x)\\n") == []
        print("libcst" in sys.modules)
        found = run("def f(tc):\\n    r = tc.forward_backward(b).result()\\n    tc.optim_step(a)\\n")
        print([(line, col, message.split()[0]) for line, col, message, _ in found], "libcst" in sys.modules)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout.split("\n")
    # flake8's columns are 0-based: TNK101 at 2:32 (1-based, the wait's `result`) is (2, 31).
    assert out[:2] == ["False", "[(2, 31, 'TNK101')] True"]
