"""The four promises of every fix, over generated training loops (``fix_programs.programs``):
1. the fixed code compiles; 2. re-linting it no longer reports the fixed finding; 3. a second
``--fix`` changes nothing; 4. only the intended statements changed (the fixed ``ast`` equals the
one an independent oracle builds from the original).
"""

from __future__ import annotations

import ast
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fix_programs import expected_tree, finding_key, programs
from tinker_lint.codes import FIXABLE_CODES
from tinker_lint.fix.apply import apply_fixes, text_edit
from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text
from tinker_lint.run.fixer import fix_text

pytestmark = pytest.mark.slow

FIXABLE = FIXABLE_CODES
SETTINGS = Settings()  # tinker 0.38: every fixable rule is on
PROPERTY_SETTINGS = settings(
    # 50 by default (a nightly run sets more): five property tests share the budget.
    max_examples=int(os.environ.get("FIX_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _keys(source: str, diagnostics) -> Counter:
    return Counter(
        finding_key(source, d.code, d.line, d.col) for d in diagnostics if d.code in FIXABLE
    )


@PROPERTY_SETTINGS
@given(programs())
def test_each_fix_compiles_removes_its_finding_and_changes_only_its_statements(program):
    source = program.source
    diagnostics = lint_text(source, "loop.py", SETTINGS).diagnostics
    before = _keys(source, diagnostics)
    for d in diagnostics:
        if d.fix is None:
            continue
        assert d.code in FIXABLE
        fixed, applied = apply_fixes(source, [d.fix])
        assert applied == [d.fix]
        compile(fixed, "loop.py", "exec", dont_inherit=True)  # 1
        key = finding_key(source, d.code, d.line, d.col)
        after = _keys(fixed, lint_text(fixed, "loop.py", SETTINGS).diagnostics)
        assert after[key] < before[key], (d, fixed)  # 2
        expected = expected_tree(source, d.code, d.line, d.col, fixed)
        assert ast.dump(ast.parse(fixed)) == ast.dump(expected), (d, fixed)  # 4


@PROPERTY_SETTINGS
@given(programs(), st.booleans())
def test_fix_reaches_a_fixed_point_that_a_second_fix_leaves_alone(program, unsafe):
    once = fix_text(program.source, "loop.py", SETTINGS, unsafe_fixes=unsafe)
    assert not once.problems, once.problems
    compile(once.text, "loop.py", "exec", dont_inherit=True)
    twice = fix_text(once.text, "loop.py", SETTINGS, unsafe_fixes=unsafe)  # 3
    assert twice.text == once.text
    assert not twice.fixed
    assert not [
        d for d in once.remaining if d.fix is not None and (unsafe or d.fix.applicability == "safe")
    ]
    # What --fix reports as remaining is what linting the fixed text reports.
    assert once.remaining == lint_text(once.text, "loop.py", SETTINGS).diagnostics


@PROPERTY_SETTINGS
@given(programs())
def test_edits_from_regenerated_statements_equal_edits_from_the_regenerated_module(program):
    """The fast path (regenerate only the touched statements, in their block's indentation) gives
    the same fixed text as regenerating the whole module."""
    import tinker_lint.fix.apply as apply_module

    source = program.source
    local = lint_text(source, "loop.py", SETTINGS).diagnostics
    original = apply_module._local_edit
    try:
        apply_module._local_edit = lambda *args: False
        whole = lint_text(source, "loop.py", SETTINGS).diagnostics
    finally:
        apply_module._local_edit = original
    assert [d.fix is None for d in local] == [d.fix is None for d in whole]
    for fast, slow in zip(local, whole, strict=True):
        if fast.fix is not None:
            assert apply_fixes(source, [fast.fix])[0] == apply_fixes(source, [slow.fix])[0]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab\n\r ", max_size=30),
    st.text(alphabet="ab\n\r ", max_size=30),
)
def test_an_edit_turns_the_old_text_into_the_new_one(old, new):
    from tinker_lint.diagnostics import Fix

    edit = text_edit(old, new)
    if old == new:
        assert edit is None
        return
    assert apply_fixes(old, [Fix("m", (edit,))])[0] == new


# ------------------------------------------------------------------------------------------
# What the programs do: run before and after the fix against a recording stand-in for tinker
# ------------------------------------------------------------------------------------------
def _run(source: str, fail: int | None = None) -> list[tuple]:
    import asyncio
    import re
    import sys

    from tests import fake_tinker

    recorder = fake_tinker.Recorder(fail)
    env = fake_tinker.helpers(recorder)
    env.update({name: name for name in re.findall(r"\bprompt_\d+\b", source)})
    saved = sys.modules.get("tinker")
    sys.modules["tinker"] = fake_tinker.module(recorder)
    try:
        exec(compile(source, "loop.py", "exec"), env)
        train = env.get("train")
        if train is not None:
            outcome = train(env["batches"])
            if asyncio.iscoroutine(outcome):
                asyncio.run(outcome)
    except Exception as error:
        recorder.events.append(("raised", type(error).__name__, str(error)))
    finally:
        if saved is not None:
            sys.modules["tinker"] = saved
    return recorder.events


@PROPERTY_SETTINGS
@given(programs())
def test_safely_fixed_program_does_what_the_original_does(program):
    fixed = fix_text(program.source, "loop.py", SETTINGS).text
    before = _run(program.source)
    assert not [e for e in before if e[0] == "raised"], before
    assert _run(fixed) == before


@PROPERTY_SETTINGS
@given(programs(), st.integers(min_value=1, max_value=12))
def test_when_a_request_fails_the_safely_fixed_program_fails_the_same_way(program, failing):
    """Safe fixes may submit more before the error surfaces (that is the point of TNK101), but
    everything the original did still happens first, and the same error ends both runs."""
    fixed = fix_text(program.source, "loop.py", SETTINGS).text
    before, after = _run(program.source, failing), _run(fixed, failing)
    assert (before[-1][0] == "raised") == (after[-1][0] == "raised")
    if before[-1][0] == "raised":
        assert after[-1] == before[-1]
        assert after[: len(before) - 1] == before[:-1]
    else:
        assert after == before
