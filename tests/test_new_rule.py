"""A new rule is its file and its fixture (issue 31): in a copy of the checkout, one rule file and
one fixture file are added, ``python -m tinker_lint.docs`` writes what is generated from the rules
(the rule's page, the index, the editor severities in docs/configuration.md), and the suite's
registry, level, docs, example and fixture checks pass with nothing else edited."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RULE = '''\
"""TNK209 sync-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator

from tinker_lint.model.query import CallSite, SemanticModel
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import calls_in_hot_loops, every_step, in_step


class SyncInHotLoop(Rule):
    code = "TNK209"
    needs_hot_loop = True
    name = "sync-in-hot-loop"
    level = "note"
    summary = "Do not flush the file system on every step"
    message = "`os.sync()` flushes every file system {in_step}"
    help = "`os.sync()` writes every dirty page of the machine {every_step}: call it once, after"
    why = """
`os.sync()` waits for every file system of the machine to write its dirty pages.
"""
    fix_description = "Call `os.sync()` once, after the loop."
    INVALID = (
        Example(
            """\\
import os
for batch in batches:
    os.sync()
    training_client.forward_backward(batch, loss_fn="cross_entropy")
""",
            expect=((3, 5),),
        ),
    )
    VALID = (
        Example(
            """\\
import os
for batch in batches:
    training_client.forward_backward(batch, loss_fn="cross_entropy")
os.sync()
"""
        ),
    )

    prefilter = Needs(text=(words({"sync"}),))

    def check(self, ctx: Context) -> Iterator[Finding]:
        for site, hot in calls_in_hot_loops(ctx.model, is_sync):
            yield self.finding(site.node, in_step=in_step(ctx, hot), every_step=every_step(ctx, hot))


def is_sync(model: SemanticModel, site: CallSite) -> bool:
    return model.qualify(site.node.func, site.scope) == "os.sync"
'''

FIXTURE = """\
\"\"\"TNK209: os.sync() per step, and once after the loop.\"\"\"

import os

import tinker

training_client = tinker.ServiceClient().create_lora_training_client(base_model="m").result()


def per_step(batches):
    for batch in batches:
        os.sync()  # expect: TNK209@9
        training_client.forward_backward(batch, loss_fn="cross_entropy")
    os.sync()
"""

CHECKS = [
    "tests/test_registry.py",
    "tests/test_levels.py",
    "tests/test_flake8_levels.py",
    "tests/test_docs.py",
    "tests/test_rule_examples.py",
    "tests/test_fixtures.py",
    "tests/test_message_length.py",
]


def _suite(copy: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:xdist"]
    return subprocess.run(
        [*command, *CHECKS], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_new_rule_is_its_file_and_its_fixture(tmp_path):
    copy = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("tinker_lint", "tests", "fixtures", "docs"):
        shutil.copytree(ROOT / part, copy / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy)
    (copy / "tinker_lint" / "rules" / "tnk209_sync_in_hot_loop.py").write_text(RULE)
    (copy / "fixtures" / "tnk2xx" / "tnk209_sync_in_hot_loop.py").write_text(FIXTURE)

    before = _suite(copy)  # the generated pages do not show the rule yet
    assert before.returncode == 1 and "TNK209" in before.stdout, before.stdout[-2000:]

    env = {**os.environ, "PYTHONPATH": str(copy)}
    generate = [sys.executable, "-m", "tinker_lint.docs"]
    written = subprocess.run(generate, cwd=copy, env=env, capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    assert sorted(written.stdout.splitlines()) == [
        "docs/configuration.md: written",  # a note among TNK2's warnings: its own severity
        "docs/rules/README.md: written",
        "docs/rules/TNK209.md: written",
    ]
    after = _suite(copy)
    assert after.returncode == 0, after.stdout[-3000:] + after.stderr[-2000:]
    assert "TNK209" in (copy / "docs" / "rules" / "README.md").read_text()
