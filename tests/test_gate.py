"""The gate before the engine (``run/gate.py``, issue 30): a file no rule can read is answered
without the engine, and so without libcst, the rules and the semantic model. What it answers must
be what the engine answers: the same findings (TNK001), the same warnings about ``# noqa``
comments, the same project files depended on (the cache's key)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from tests.checkout import checkout_env
from tests.fixture_expectations import FIXTURES_ROOT, ROOT
from tests.snippets import OWN_WAITS
from tinker_lint.io.files import is_listing_key
from tinker_lint.io.settings import Settings
from tinker_lint.project.index import ProjectIndex
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.run import gate, runner
from tinker_lint.run.engine import lint_text
from tinker_lint.run.runner import FixMode, Job

PLAIN = "import os\n\nprint(os.getcwd())\n"
# A loop of ``fixtures/tnk1xx/helpers_project/trainer`` calling a helper there that waits.
HELPER_CALL = "from .steps import forward_backward_and_wait as fb\n\nfor b in bs:\n    fb(c, b)\n"
CRAFTED = [
    PLAIN,
    "def f(:\n    pass\n",  # TNK001
    "x = 1  # noqa: TNK1O1\n",  # a code that is not one: warned about
    "import json\nx = json.dumps({})  # noqa: E501, TNK999\n",
    "import json\nfor x in xs:\n    fit_batch(x)\n",  # a step only under hot-loop-calls
    HELPER_CALL,
    "",
    # Calls of helpers that submit and wait, with a wait before a submit or only their own.
    *(text for text, _ in OWN_WAITS),
]
SETTINGS = [
    Settings(),
    Settings(select=("TNK4",)),  # no rule that sees the project's helpers is on
    Settings(ignore=("TNK001",)),
    Settings(hot_loop_calls=("fit_batch",)),
    Settings(hot_loop_calls=("other_step",)),
    Settings(per_file_ignores=(("*.py", ("TNK1", "TNK001")),)),
]


def _texts() -> list[tuple[str, str]]:
    """(path, text): the fixtures and this project's sources where they are (their imports name
    modules of their projects), the rules' examples and a few crafted texts in a project here."""
    found = [(str(p), p.read_text(encoding="utf-8")) for p in sorted(FIXTURES_ROOT.rglob("*.py"))]
    for package in ("tinker_lint/io", "tinker_lint/run"):
        found += [
            (str(p), p.read_text(encoding="utf-8")) for p in sorted(ROOT.glob(f"{package}/*.py"))
        ]
    examples = [e.code for rule in PYTHON_RULES for e in (*rule.VALID, *rule.INVALID)]
    helpers = FIXTURES_ROOT / "tnk1xx" / "helpers_project" / "trainer"
    found += [(str(helpers / "example.py"), text) for text in (*examples, *CRAFTED)]
    return found


def _engine(
    text: str, path: str, settings: Settings, project: ProjectIndex | None = None
) -> gate.Unanalysed:
    result = lint_text(text, path, settings, project=project or ProjectIndex())
    return gate.Unanalysed(result.diagnostics, result.warnings, result.depends)


def test_what_the_gate_answers_is_what_the_engine_answers():
    # One index each, as in a run: an answer does not depend on the questions asked before it.
    gate_index, engine_index = ProjectIndex(), ProjectIndex()
    answered = depended = 0
    for path, text in _texts():
        for settings in SETTINGS:
            found = gate.unanalysed(text, path, replace(settings), gate_index)
            if found is None:
                continue
            answered += 1
            depended += bool(found.depends)
            expected = _engine(text, path, replace(settings), engine_index)
            assert found == expected, (path, settings)
    # Most of the fixtures and sources: the gate is not vacuous, and asks the project too.
    assert answered > 150
    assert depended > 30


def test_the_gate_answers_plain_python_with_the_engines_findings_and_warnings():
    path = str(FIXTURES_ROOT / "tnk1xx" / "helpers_project" / "trainer" / "example.py")
    found = {text: gate.unanalysed(text, path, Settings(), ProjectIndex()) for text in CRAFTED}
    for text, answer in found.items():
        assert answer is None or answer == _engine(text, path, Settings()), text
    plain = found[PLAIN]
    assert plain is not None and (plain.diagnostics, plain.warnings) == ([], [])
    # What it depends on: where its imports were looked for in the project (none is there).
    assert plain.depends and all(is_listing_key(key) for key in plain.depends)
    assert set(plain.depends.values()) == {"listed:"}
    broken = found["def f(:\n    pass\n"]
    assert broken is not None and [d.code for d in broken.diagnostics] == ["TNK001"]
    typo = found["x = 1  # noqa: TNK1O1\n"]
    assert typo is not None and typo.warnings
    # It imports a helper of its project that submits: the rules that see helpers run (and
    # TNK101's tree test then tells a call's own wait from one before another submit).
    assert found[HELPER_CALL] is None
    for text, expected in OWN_WAITS:
        assert found[text] is None
        assert [(d.code, d.line, d.col) for d in _engine(text, path, Settings()).diagnostics] == (
            expected
        )


def test_the_gate_leaves_to_the_engine_what_a_rule_may_read():
    settings = Settings(hot_loop_calls=("fit_batch",))
    stepping = "import json\nfor x in xs:\n    fit_batch(x)\n"
    assert gate.unanalysed(stepping, "t.py", settings) is None
    assert gate.unanalysed(stepping, "t.py", Settings(hot_loop_calls=("f*",))) is None
    assert gate.unanalysed(stepping, "t.py", Settings()) is not None
    for rule in PYTHON_RULES:
        for example in rule.INVALID:
            assert gate.unanalysed(example.code, "t.py", Settings()) is None, rule.code
    assert gate.unanalysed_bytes(b"\xff\xfe\x00bad", "t.py", Settings()) is None  # TNK001 there


def _notebook(*sources: str) -> bytes:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(document, indent=1) + "\n").encode()


RUNNER_FILES = {
    "plain.py": PLAIN.encode(),
    "noqa.py": b"x = 1  # noqa: TNK1O1\n",
    "broken.py": b"def f(:\n    pass\n",
    "plain.ipynb": _notebook("import os\n", "x = 1  # noqa: TNK1O1\n"),
    "broken.ipynb": _notebook("import os\n", "def f(:\n"),
    "tinker.py": b"async def f(tc, b):\n    return await tc.forward_backward_async(b)\n",
    "undecodable.py": b"x = '\xff'\n",
}


@pytest.mark.parametrize("fix", [None, FixMode(write=False), FixMode(unsafe_fixes=True)])
def test_the_runner_sends_back_what_the_engine_and_the_fixer_would(tmp_path, monkeypatch, fix):
    """Each file's ``Outcome`` (findings, warnings, the fixer's first lint, what it depends on)
    with the gate and with every file sent to the engine."""
    settings = Settings(tinker_version_assumed=True)
    jobs = []
    for name, raw in RUNNER_FILES.items():
        (tmp_path / name).write_bytes(raw)
        jobs.append(Job(len(jobs), str(tmp_path / name), raw))
    gated = [runner._work(job, settings, fix) for job in jobs]
    monkeypatch.setattr(gate, "unanalysed", lambda *args: None)
    monkeypatch.setattr(gate, "unanalysed_bytes", lambda *args: None)
    assert gated == [runner._work(job, settings, fix) for job in jobs]


# What a file no rule reads must not import: the engine, the rules, the model, libcst (about
# 0.3 s of a 0.1 s start), and the process pool a run of one file never uses.
HEAVY = (
    "libcst",
    "tinker_lint.run.engine",
    "tinker_lint.rules",
    "tinker_lint.model.query",
    "tinker_lint.run.fixer",
    "concurrent.futures.process",
)


def _loaded_after(
    runs: list[list[str]], cwd: Path, watched: tuple[str, ...] = HEAVY
) -> tuple[list[int], list[str]]:
    """The exit codes of ``tinker-lint`` run with each argument list in one process (the console
    script's ``entry``, as ``python -m tinker_lint`` runs it), then which of ``watched`` those runs
    imported (not the interpreter's start, which may import some for itself)."""
    script = textwrap.dedent(
        f"""
        import json, sys
        before = set(sys.modules)
        from tinker_lint.cli import entry
        codes = []
        for argv in {runs!r}:
            sys.argv = ["tinker-lint", *argv]
            codes.append(entry())
        loaded = [m for m in {watched!r} if m in sys.modules and m not in before]
        print(json.dumps([codes, loaded]), file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    codes, loaded = json.loads(done.stderr.strip().splitlines()[-1])
    return codes, loaded


def test_linting_a_file_without_tinker_imports_neither_libcst_nor_the_engine(tmp_path):
    (tmp_path / "tiny.py").write_text(PLAIN)
    (tmp_path / "typo.py").write_text("x = 1  # noqa: TNK1O1\n")
    (tmp_path / "tiny.ipynb").write_bytes(_notebook("import os\n", "print(os.getcwd())\n"))
    runs = [
        ["--isolated", "--no-cache", "tiny.py"],
        ["--no-cache", "tiny.py", "typo.py", "tiny.ipynb"],
        ["--cache-dir", "cache", "tiny.py"],  # the cache filled
        ["--no-cache", "--fix", "tiny.py", "tiny.ipynb"],
        ["--no-cache", "--diff", "tiny.py"],
    ]
    assert _loaded_after(runs, tmp_path) == ([0, 0, 0, 0, 0], [])
    (tmp_path / "train.py").write_text(
        "async def f(tc, b):\n    return await tc.forward_backward_async(b)\n"
    )
    codes, loaded = _loaded_after(
        [["--no-cache", "--tinker-version", "0.38", "train.py"]], tmp_path
    )
    assert codes == [1] and "libcst" in loaded and "tinker_lint.run.engine" in loaded


# Nor, for one Python file and no cache, what only other runs use: the results cache, the
# notebook reader, the TOML reader (no configuration file is read with ``--isolated``), and
# ``importlib.metadata`` (the installed tinker's version is read without it: ``io.installed``).
UNUSED = (
    *HEAVY,
    "tinker_lint.run.cache",
    "tinker_lint.io.notebook",
    "tinker_lint.io.toml",
    "importlib.metadata",
)


def test_one_plain_file_imports_only_what_its_run_uses(tmp_path):
    (tmp_path / "tiny.py").write_text(PLAIN)
    runs = [["--isolated", "--no-cache", "tiny.py"]]
    assert _loaded_after(runs, tmp_path, UNUSED) == ([0], [])
