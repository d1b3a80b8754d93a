"""Properties of the TNK2xx rules on generated programs: a loop whose body mixes Tinker submits and
CPU work, with setup statements and helper functions around it.

1. The findings never depend on the order of the statements outside the loop (nor on whether they
   stand before or after it): the model is flow-insensitive there.
2. Writing one CPU statement under a cadence guard (``if step % log_every == 0: ...``) removes its
   TNK204/TNK205 finding, and changes nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinker_lint.io.settings import Settings
from tinker_lint.run.engine import lint_text

pytestmark = pytest.mark.slow

ONLY_TNK2 = Settings(select=("TNK2",))
GUARD = "if step % log_every == 0: "

# Statements outside the loop, one line each, so that reordering them moves no line in the loop.
OUTSIDE = (
    "import json",
    "import pickle",
    "import numpy as np",
    "import tinker",
    "import torch",
    "from tinker_cookbook.tokenizer_utils import get_tokenizer",
    "from transformers import AutoTokenizer",
    "service_client = tinker.ServiceClient()",
    'tc = service_client.create_lora_training_client(base_model="m").result()',
    'sc = service_client.create_sampling_client(base_model="m").result()',
    'tokenizer = get_tokenizer("m")',
    'hf_tokenizer = AutoTokenizer.from_pretrained("m")',
    "vocab_size = len(tokenizer)",
    "pretokenized = [tokenizer.encode(text) for text in texts]",
    "snapshot = json.dumps(batches)",
    'def submit(b): return tc.forward_backward(b, loss_fn="cross_entropy")',
    "def dump(batch): return json.dumps(batch)",
    'def append_log(line): return open("log.txt", "a").write(line)',
    'def load_rows(): return open("data.jsonl").read()',
    "def to_tensors(batch): return [[torch.tensor(t) for t in d.tokens] for d in batch]",
    "def encode_all(b): return [hf_tokenizer(t) for t in b]",
)


@dataclass(frozen=True)
class Stmt:
    text: str
    cpu: bool  # CPU work rather than a submit
    code: str | None = None  # its finding, unguarded in the hot loop (None: light work)
    helper: str | None = None  # the helper function it calls, whose body holds the finding


SUBMITS = (
    Stmt('tc.forward_backward(batch, loss_fn="cross_entropy")', False),
    Stmt("tc.optim_step(params)", False),
    Stmt("sc.sample(prompt, num_samples=1, sampling_params=params)", False),
    Stmt("submit(batch)", False),
)
CPU = (
    Stmt("ids = tokenizer.encode(batch)", True, "TNK201"),
    Stmt("chat = hf_tokenizer.apply_chat_template(batch)", True, "TNK201"),
    Stmt("n = len(tokenizer)", True, "TNK202"),
    Stmt("arrays = [np.array(t) for d in batch for t in d.tokens]", True, "TNK203"),
    Stmt("mean = np.mean(losses)", True),
    Stmt("line = json.dumps(batch)", True, "TNK204"),
    Stmt("lines = [json.dumps(datum) for datum in batch]", True, "TNK204"),
    Stmt("blob = pickle.dumps(batch)", True, "TNK204"),
    Stmt("state = result.model_dump()", True, "TNK204"),
    Stmt('log = open("log.txt", "a")', True),  # a one-line append per step is bookkeeping
    Stmt('rows = open("data.jsonl").read()', True, "TNK205"),
    Stmt('np.save("batch.npy", batch)', True, "TNK205"),
    Stmt('torch.save(batch, "batch.pt")', True, "TNK205"),
    Stmt("text = json.dumps({'step': step})", True),
    Stmt("dump(batch)", True, "TNK204", "dump"),
    Stmt("append_log(str(step))", True),
    Stmt("rows = load_rows()", True, "TNK205", "load_rows"),
    Stmt("tensors = to_tensors(batch)", True, "TNK203", "to_tensors"),
    Stmt("encoded = encode_all(batch)", True, "TNK201", "encode_all"),
)
LOOP_HEADER = "for step, batch in enumerate(batches):"
RESULT_LINE = 'result = tc.forward_backward(batch, loss_fn="cross_entropy").result()'


def render(
    before: list[str], body: list[Stmt], guarded: list[bool], after: list[str]
) -> tuple[str, int]:
    """The program, and the line number of the loop header."""
    lines = [*before, LOOP_HEADER, "    " + RESULT_LINE]
    lines += ["    " + (GUARD if g else "") + s.text for s, g in zip(body, guarded, strict=True)]
    return "\n".join([*lines, *after]) + "\n", len(before) + 1


def findings(source: str) -> set[tuple[str, int, int, str]]:
    return {
        (d.code, d.line, d.col, d.message)
        for d in lint_text(source, "gen.py", ONLY_TNK2).diagnostics
    }


def normalized(source: str, loop_line: int, body_size: int) -> set[tuple]:
    """Findings with every line number (also those in messages) made independent of where the
    statements outside the loop stand: a line in the loop is an offset from the header, a line
    outside is the statement's text."""
    lines = source.splitlines()
    loop_end = loop_line + 1 + body_size

    def anchor(number: int) -> object:
        if loop_line <= number <= loop_end:
            return ("loop", number - loop_line)
        return ("outside", lines[number - 1])

    return {
        (code, anchor(line), col, re.sub(r"line (\d+)", lambda m: repr(anchor(int(m[1]))), msg))
        for code, line, col, msg in findings(source)
    }


bodies = st.lists(
    st.tuples(st.sampled_from(SUBMITS + CPU), st.booleans()),
    min_size=1,
    max_size=6,
    unique_by=lambda p: p[0],
)


@settings(max_examples=60, deadline=None)
@given(
    body=bodies,
    first=st.permutations(OUTSIDE),
    second=st.permutations(OUTSIDE),
    split_first=st.integers(0, len(OUTSIDE)),
    split_second=st.integers(0, len(OUTSIDE)),
)
def test_findings_do_not_depend_on_order_outside_the_loop(
    body, first, second, split_first, split_second
) -> None:
    stmts = [s for s, _ in body]
    guards = [g for _, g in body]
    one, loop_one = render(first[:split_first], stmts, guards, first[split_first:])
    two, loop_two = render(second[:split_second], stmts, guards, second[split_second:])
    assert normalized(one, loop_one, len(stmts)) == normalized(two, loop_two, len(stmts))


def _helper_line(source: str, helper: str | None) -> int | None:
    if helper is None:
        return None
    for number, line in enumerate(source.splitlines(), start=1):
        if line.startswith(f"def {helper}("):
            return number
    return None


@settings(max_examples=80, deadline=None)
@given(
    submit=st.sampled_from(SUBMITS),
    body=st.lists(st.sampled_from(SUBMITS + CPU), min_size=1, max_size=5, unique=True),
    data=st.data(),
)
def test_cadence_guard_removes_the_finding(submit, body, data) -> None:
    stmts = list(dict.fromkeys([submit, *body]))  # at least one unguarded submit: the loop is hot
    cpu_positions = [i for i, s in enumerate(stmts) if s.cpu]
    if not cpu_positions:
        stmts.append(CPU[0])
        cpu_positions = [len(stmts) - 1]
    chosen = data.draw(st.sampled_from(cpu_positions))
    unguarded = [False] * len(stmts)
    guarded = [i == chosen for i in range(len(stmts))]
    # Same lines either way: the guard is written on the statement's own line.
    plain, loop_line = render(list(OUTSIDE), stmts, unguarded, [])
    wrapped, _ = render(list(OUTSIDE), stmts, guarded, [])
    target_line = loop_line + 2 + chosen
    helper_line = _helper_line(plain, stmts[chosen].helper)
    own = {target_line, helper_line}

    before = {(c, line) for c, line, _, _ in findings(plain)}
    after = {(c, line) for c, line, _, _ in findings(wrapped)}
    # Unguarded, the statement has exactly its finding (light work has none).
    expected_line = helper_line or target_line
    code = stmts[chosen].code
    if code == "TNK201" and any("sample(" in s.text for s in stmts):
        code = None  # a loop that samples: one prompt encode per request is not the cost
    assert {(c, line) for c, line in before if line in own} == (
        {(code, expected_line)} if code else set()
    )
    # The guarded statement's own TNK204/TNK205 findings (at it, or in the helper it calls) go ...
    assert not {(c, line) for c, line in after if line in own and c in ("TNK204", "TNK205")}
    # ... and so do its other TNK2xx findings: a guarded call runs occasionally, not per step.
    assert not {(c, line) for c, line in after if line in own}
    # Nothing else changes.
    assert {f for f in before if f[1] not in own} == {f for f in after if f[1] not in own}
