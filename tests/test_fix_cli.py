"""``--fix``, ``--diff``, ``--unsafe-fixes``, ``--show-fixes``: ruff's semantics and exit codes, the
JSON ``fix`` object and the ``[*]`` mark."""

from __future__ import annotations

import json
import textwrap

import pytest

from tinker_lint import cli
from tinker_lint.diagnostics import Edit, Fix
from tinker_lint.fix.apply import apply_fixes

SAFE_AND_UNSAFE = textwrap.dedent(
    """\
    import asyncio


    async def train(training_client, sampling_client, batch, prompts, adam):
        fut = await training_client.forward_backward_async(batch, loss_fn="cross_entropy")
        grads = await fut
        opt = training_client.optim_step(adam)
        samples = await asyncio.gather(*[sampling_client.sample_async(p) for p in prompts])
        return grads, await opt, samples
    """
)
# The safe fixes: the TNK105 rename, and the TNK101 move of the wait after both requests.
SAFE_FIXED = SAFE_AND_UNSAFE.replace(
    "await training_client.forward_backward_async(", "training_client.forward_backward("
).replace(
    "    grads = await fut\n    opt = training_client.optim_step(adam)\n"
    "    samples = await asyncio.gather(*[sampling_client.sample_async(p) for p in prompts])\n",
    "    opt = training_client.optim_step(adam)\n"
    "    samples = await asyncio.gather(*[sampling_client.sample_async(p) for p in prompts])\n"
    "    grads = await fut\n",
)
NOTHING_TO_FIX = textwrap.dedent(
    """\
    def step(training_client, batch, adam):
        for b in batch:
            r = training_client.forward_backward(b, loss_fn="x").result()
            print(r)
            training_client.optim_step(adam)
    """
)


def _run(*argv: str) -> int:
    return cli.main(["--isolated", "--tinker-version", "0.38", *argv])


@pytest.fixture
def loop(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(SAFE_AND_UNSAFE)
    return path


def test_lint_marks_fixable_findings_and_counts_hidden_unsafe_fixes(loop, capsys):
    assert _run(str(loop)) == 1
    out = capsys.readouterr().out
    assert f"{loop}:5:17: TNK105 [*] `forward_backward_async()` is deprecated" in out
    assert f"{loop}:6:13: TNK101 [*] Waiting for `forward_backward`" in out
    assert f"{loop}:8:38: TNK105 `sample_async()` is deprecated" in out  # unsafe: no mark
    assert (
        "[*] 2 fixable with the `--fix` option (1 hidden fix can be enabled with the "
        "`--unsafe-fixes` option)." in out
    )
    assert loop.read_text() == SAFE_AND_UNSAFE
    assert _run("--unsafe-fixes", str(loop)) == 1
    out = capsys.readouterr().out
    assert f"{loop}:8:38: TNK105 [*] `sample_async()`" in out
    assert "[*] 3 fixable with the `--fix` option." in out


def test_fix_applies_safe_fixes_and_reports_what_remains(loop, capsys):
    assert _run("--fix", str(loop)) == 1  # the unsafe one remains
    assert loop.read_text() == SAFE_FIXED
    out = capsys.readouterr().out
    assert f"{loop}:7:38: TNK105 `sample_async()`" in out  # line 7 now: the wait moved below it
    assert "Found 3 errors (2 fixed, 1 remaining) in 1 file checked." in out
    assert (
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in out
    )


def test_fix_with_unsafe_fixes_fixes_everything_and_exits_0(loop, capsys):
    assert _run("--fix", "--unsafe-fixes", "--show-fixes", str(loop)) == 0
    assert loop.read_text() == SAFE_FIXED.replace(
        "sampling_client.sample_async(", "sampling_client.sample("
    )
    out = capsys.readouterr().out
    assert "Found 3 errors (3 fixed, 0 remaining)" in out
    assert (
        f"Fixed 3 errors:\n- {loop}:\n"
        "    1 \u00d7 TNK101 (wait-before-submit)\n"
        "    2 \u00d7 TNK105 (deprecated-async-method)\n"
    ) in out


def test_diff_prints_a_unified_diff_and_writes_nothing(loop, capsys):
    mtime = loop.stat().st_mtime_ns
    assert _run("--diff", str(loop)) == 1
    out, err = capsys.readouterr()
    assert loop.read_text() == SAFE_AND_UNSAFE
    assert loop.stat().st_mtime_ns == mtime
    assert out.startswith(f"--- {loop}\n+++ {loop}\n@@ ")
    assert "-    fut = await training_client.forward_backward_async(" in out
    assert "+    fut = training_client.forward_backward(" in out
    assert err == "Would fix 2 errors.\n"
    # The diff applies: patch the file with it.
    import subprocess

    subprocess.run(["patch", "-s", str(loop)], input=out, text=True, check=True)
    assert loop.read_text() == SAFE_FIXED


def test_diff_exits_0_when_nothing_can_be_fixed(tmp_path, capsys):
    path = tmp_path / "clean.py"
    path.write_text(NOTHING_TO_FIX)
    assert _run("--diff", str(path)) == 0  # a finding, but nothing to fix
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "No errors would be fixed.\n"
    assert _run("--fix", str(path)) == 1  # the finding remains
    assert path.read_text() == NOTHING_TO_FIX


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        _run("--fix", "--no-such-flag")
    assert exit_info.value.code == 2


def test_missing_path_exits_2(tmp_path, capsys):
    assert _run("--fix", str(tmp_path / "missing.py")) == 2


def test_json_fix_edits_reproduce_what_fix_writes(loop, capsys):
    assert _run("--output-format", "json", str(loop)) == 1
    findings = json.loads(capsys.readouterr().out)
    by_code = {(f["code"], f["location"]["row"]): f for f in findings}
    assert by_code[("TNK105", 5)]["fix"] == {
        "applicability": "safe",
        "message": "Replace `await \u2026.forward_backward_async(\u2026)` with "
        "`\u2026.forward_backward(\u2026)`",
        "edits": [
            {
                "content": "training_client.forward_backward",
                "location": {"row": 5, "column": 11},
                "end_location": {"row": 5, "column": 55},
            }
        ],
    }
    assert by_code[("TNK105", 8)]["fix"]["applicability"] == "unsafe"
    assert by_code[("TNK101", 6)]["fix"]["edits"] == [
        {
            "content": "    opt = training_client.optim_step(adam)\n"
            "    samples = await asyncio.gather(*[sampling_client.sample_async(p) for p in prompts])\n"
            "    grads = await fut\n",
            "location": {"row": 6, "column": 1},
            "end_location": {"row": 9, "column": 1},
        }
    ]
    # Applying the safe edits to the text, as an editor would, gives what --fix writes.
    fixes = [
        Fix(
            f["fix"]["message"],
            tuple(
                Edit(
                    e["content"],
                    (e["location"]["row"], e["location"]["column"]),
                    (e["end_location"]["row"], e["end_location"]["column"]),
                )
                for e in f["fix"]["edits"]
            ),
        )
        for f in findings
        if f["fix"] and f["fix"]["applicability"] == "safe"
    ]
    assert apply_fixes(SAFE_AND_UNSAFE, fixes)[0] == SAFE_FIXED


def test_fix_with_json_output_reports_what_remains(loop, capsys):
    assert _run("--fix", "--output-format", "json", str(loop)) == 1
    remaining = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["fix"]["applicability"]) for f in remaining] == [("TNK105", "unsafe")]


def test_exit_zero(loop, capsys):
    assert _run("--fix", "--exit-zero", str(loop)) == 0
    assert _run("--diff", "--exit-zero", str(loop)) == 0


def test_diff_of_a_file_without_a_final_newline_applies_exactly(tmp_path, capsys):
    import subprocess

    path = tmp_path / "last.py"
    source = SAFE_AND_UNSAFE.rstrip("\n")
    path.write_text(source)
    assert _run("--diff", str(path)) == 1
    out = capsys.readouterr().out
    assert out.endswith("\\ No newline at end of file\n")
    subprocess.run(["patch", "-s", str(path)], input=out, text=True, check=True)
    assert path.read_text() == SAFE_FIXED.rstrip("\n")


def test_fix_applies_only_the_selected_rules(loop, capsys):
    assert _run("--fix", "--select", "TNK105", str(loop)) == 1
    assert loop.read_text() == SAFE_AND_UNSAFE.replace(
        "await training_client.forward_backward_async(", "training_client.forward_backward("
    )
