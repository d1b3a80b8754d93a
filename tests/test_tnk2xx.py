"""TNK201-TNK205: the rules' own examples, the messages, and the semantics they rest on. (Exact
diagnostics on fixtures/tnk2xx, read from their ``# expect:`` comments: tests/test_fixtures.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixture_expectations import expectations, family, family_codes, fixture_dir
from tinker_lint.io.settings import Settings
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.run.engine import lint_text

FAMILY = "TNK2"
FIXTURES = fixture_dir(FAMILY)
HOT_RULES = [rule for rule in PYTHON_RULES if family(rule.code) == FAMILY]
ONLY_TNK2 = Settings(select=(FAMILY,))


def lint(text: str, path: str = "fixture.py", settings: Settings = ONLY_TNK2):
    return lint_text(text, path, settings).diagnostics


def found(text: str) -> set[tuple[str, int, int]]:
    return {(d.code, d.line, d.col) for d in lint(text)}


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_every_fixture_expects_findings_of_the_family(path: Path) -> None:
    want = {f for f in expectations(path.read_text()) if family(f[0]) == FAMILY}
    assert want, "a fixture without expectations tests nothing"


def test_every_rule_has_a_fixture_with_findings() -> None:
    codes = {
        code
        for path in FIXTURES.glob("*.py")
        for code, _, _ in expectations(path.read_text())
        if family(code) == FAMILY
    }
    assert codes == {rule.code for rule in HOT_RULES} == set(family_codes(FAMILY))


@pytest.mark.parametrize(
    "rule, example",
    [(rule, ex) for rule in HOT_RULES for ex in (*rule.INVALID, *rule.VALID)],
    ids=lambda value: getattr(value, "code", None) if isinstance(value, type) else "",
)
def test_rule_examples(rule, example) -> None:
    settings = Settings(select=(rule.code,))
    got = tuple((d.line, d.col) for d in lint(example.code, settings=settings))
    assert got == example.expect


# --- messages: where the request is submitted ------------------------------------------------
def message_at(path: str, line: int, code: str) -> str:
    text = (FIXTURES / path).read_text()
    [diagnostic] = [d for d in lint(text) if d.line == line and d.code == code]
    return f"{diagnostic.message}\nhelp: {diagnostic.help}"


def test_message_names_the_submit_and_its_line() -> None:
    assert message_at("tnk201_tokenizer_in_hot_loop.py", 18, "TNK201") == (
        "`cookbook_tokenizer.encode()` re-tokenizes unchanged data in the step loop on line "
        "17\nhelp: It tokenizes data that exists before the loop, once for each of `batch` (line "
        "18), on every iteration of a loop that submits `forward_backward` (line 19): "
        "pre-tokenize it once (e.g. `datasets.map`) or use the cookbook's dataset builders"
    )


def test_message_names_the_function_through_which_the_loop_submits() -> None:
    message = message_at("tnk201_tokenizer_in_hot_loop.py", 63, "TNK201")
    assert "submits `forward_backward` (line 68, through `self.step()`)" in message


def test_message_for_work_in_a_function_the_loop_calls() -> None:
    assert message_at("tnk202_len_tokenizer.py", 19, "TNK202") == (
        "`len(teacher_tokenizer)` counts the whole vocabulary in `filter_tokens()` (step loop "
        "on line 23)\nhelp: A fast tokenizer builds its whole vocabulary to answer `len()` "
        "(40-130 ms per call with tokenizers 0.21/0.22), here in `filter_tokens()`, which runs "
        "on every iteration of the loop on line 23 that submits `forward_backward` (line 25): "
        "compute it once before the loop"
    )


def test_message_says_the_cost_shape() -> None:
    # Per token of each datum, through a function the comprehension over the batch calls.
    message = message_at("tnk203_per_element_array_work.py", 80, "TNK203")
    assert message == (
        "`np.log1p()` runs once per element of `tokens` (line 80) in `per_token_helper()` (step "
        "loop on line 84)\nhelp: It runs once per element of `tokens` (line 80), for each of "
        "`batch` (line 85), in `per_token_helper()`, which runs on every iteration of the loop "
        "on line 84 that submits `forward_backward` (line 86): vectorize it once per example"
    )
    # A loop that indexes a tensor element by element, in a loop over the datums.
    assert message_at("tnk203_per_element_array_work.py", 64, "TNK203") == (
        "Loop on line 64 goes through the tensor `w` per element in the step loop on line "
        "61\nhelp: The Python loop over `range(len(w))` runs once per element of `w` (line 64), "
        "for each of `batch` (line 62), on every iteration of a loop that submits "
        "`forward_backward` (line 66): vectorize it with a mask or an index tensor"
    )
    # In a step function: each call is a step, whoever calls it.
    assert message_at("tnk203_per_element_array_work.py", 121, "TNK203").endswith(
        "in `train_step()`, which submits `forward_backward` (line 116) once per call: on every "
        "training step: vectorize it once per example"
    )


# --- the semantics the rules rest on -----------------------------------------------------------
LOOP = """\
import json
from tinker_cookbook.tokenizer_utils import get_tokenizer

tokenizer = get_tokenizer("m")
for step, batch in enumerate(batches):
{body}
"""


def in_loop(*lines: str) -> set[tuple[str, int]]:
    body = "\n".join("    " + line for line in lines)
    return {(code, line) for code, line, _ in found(LOOP.format(body=body))}


def test_a_loop_is_hot_only_when_it_submits() -> None:
    assert in_loop("len(tokenizer)") == set()
    assert in_loop("len(tokenizer)", "tc.forward_backward(batch, 'cross_entropy')") == {
        ("TNK202", 6)
    }
    # A sampling request makes it hot too; a save does not.
    assert in_loop("len(tokenizer)", "sampling_client.sample(p, 1, params)") == {("TNK202", 6)}
    assert in_loop("len(tokenizer)", "tc.save_weights_for_sampler('w')") == set()


def test_tokenizing_the_batch_in_a_training_loop_but_not_per_sampling_request() -> None:
    train = "tc.forward_backward(batch, 'cross_entropy')"
    assert in_loop("tokenizer.encode(batch)", train) == {("TNK201", 6)}
    # One prompt per sampling request, and the step's own results, are not re-tokenizing.
    assert in_loop("tokenizer.encode(batch)", "sampling_client.sample(p, 1, params)") == set()
    assert (
        in_loop("out = tc.forward(batch, 'cross_entropy').result()", "tokenizer.encode(out)", train)
        == set()
    )


def test_cadence_guard_must_be_inside_the_hot_loop() -> None:
    guarded_inside = in_loop(
        "tc.forward_backward(batch, 'cross_entropy')",
        "if step % log_every == 0:",
        "    json.dumps(batch)",
    )
    assert guarded_inside == set()
    guarded_outside = """\
import json

if epoch % log_every == 0:
    for batch in batches:
        tc.forward_backward(batch, "cross_entropy")
        json.dumps(batch)
"""
    assert found(guarded_outside) == {("TNK204", 6, 9)}


def test_a_cadence_guarded_call_does_not_make_its_function_per_step() -> None:
    text = """\
import json

def dump(batch):
    return json.dumps(batch)

for step, batch in enumerate(batches):
    tc.forward_backward(batch, "cross_entropy")
    if step % save_every == 0:
        dump(batch)
"""
    assert found(text) == set()
    assert found(text.replace("    if step % save_every == 0:\n        dump", "    dump")) == {
        ("TNK204", 4, 12)
    }


def test_prefilter_skips_files_without_the_rules_words() -> None:
    for rule in HOT_RULES:
        assert not rule.applies_to("for b in batches:\n    tc.forward_backward(b, 'x')\n")
        assert not rule.applies_to("import json, torch\ntokenizer = open('x')\nlen(tokenizer)\n")
