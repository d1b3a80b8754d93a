"""The pre-filter: files it passes over are never parsed by libcst, so it may only pass over files
in which no rule could find anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.io.settings import Settings
from tinker_lint.prefilter.mentions import mentions_tinker
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.rules.tnk105_deprecated_async_method import DeprecatedAsyncMethod
from tinker_lint.run.runner import run_paths

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import random\nrandom.sample(population, 2)\n", False),  # a Tinker-named call, no Tinker
        ("out = model.forward(x)\n", False),
        ("def f(sampler):\n    return sampler.sample(prompt)\n", True),  # a receiver name hint
        ("def f(c):\n    return c.sample(p, sampling_params=sp)\n", True),  # a Tinker-only keyword
        ("def f(c):\n    return c.forward_backward(data)\n", True),  # a Tinker-only method
        ("from tinker import ServiceClient as S\nS().create_lora_training_client()\n", True),
        ("def f(fut: 'APIFuture'):\n    fut.result()\n", True),
        ("SamplingClient = 1\n", True),
        ("x = 1\n", False),
    ],
)
def test_mentions_tinker(text, expected):
    assert mentions_tinker(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("await tc.forward_backward_async(b)", True),
        ("sampler.sample_async\n(p)", True),
        ("sampler . sample_async (p)", True),
        ("sampler.resample_async(x)", False),  # another name that ends the same way
        ("sampler.sample_async_helper(x)", False),
        ("sampler.run_async(x)", False),
        ("sc.sample_async(p)", False),  # nothing says ``sc`` is Tinker's
    ],
)
def test_tnk105_needs_a_deprecated_name(text, expected):
    assert DeprecatedAsyncMethod.applies_to(text) is expected


HOT_BY_SETTING = """\
import json
from mytrainer import train_step


def run(model, batches):
    for batch in batches:
        train_step(batch)
        out = model.forward(batch)
        with open("vocab.json") as f:
            vocab = json.load(f)
"""


@pytest.mark.slow
@pytest.mark.parametrize("hot_loop_calls", [(), ("train_step",)])
def test_the_filter_loses_no_finding(tmp_path, monkeypatch, hot_loop_calls):
    """Every fixture and rule example, linted as is and with every rule forced onto every file."""
    for rule in PYTHON_RULES:
        for i, example in enumerate((*rule.VALID, *rule.INVALID)):
            (tmp_path / f"{rule.code}_{i}.py").write_text(example.code)
    (tmp_path / "hot_by_setting.py").write_text(HOT_BY_SETTING)
    paths = [str(FIXTURES / "tnk1xx"), str(FIXTURES / "tnk2xx"), str(tmp_path)]
    settings = Settings(tinker_version=Version("0.38.0"), hot_loop_calls=hot_loop_calls)
    filtered = run_paths(paths, settings, jobs=1).diagnostics
    for rule in PYTHON_RULES:
        monkeypatch.setattr(rule, "needs", classmethod(lambda cls: Needs()))
    forced = run_paths(paths, settings, jobs=1).diagnostics
    assert len({d.path for d in forced if d.code != "TNK001"}) > 40
    assert filtered == forced
    by_setting = [(d.code, d.line) for d in filtered if d.path.endswith("hot_by_setting.py")]
    assert by_setting == ([("TNK205", 9)] if hot_loop_calls else [])
