"""A ``tinker.ModelInput`` built token by token (``model/analyses/model_input.py``, reported by TNK203):
which values are a ``ModelInput`` by dataflow, and which loops build one a token at a time. (Exact
diagnostics on fixtures/tnk2xx/tnk203_model_input_by_token.py: tests/test_fixtures.py.)"""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.io.settings import Settings
from tinker_lint.model.analyses.model_input import token_by_token_builds
from tinker_lint.model.facts.types import Kind
from tinker_lint.model.query import SemanticModel
from tinker_lint.run.engine import lint_text

ONLY_TNK203 = Settings(select=("TNK203",))


def found(text: str) -> list[tuple[int, int]]:
    return [(d.line, d.col) for d in lint_text(text, "fixture.py", ONLY_TNK203).diagnostics]


def builds(text: str) -> list[tuple[int, str]]:
    """(line, how) of each token-by-token build, hot or not."""
    model = SemanticModel(cst.parse_module(text))
    return [(model.line_of(b.site.node), b.how) for b in token_by_token_builds(model)]


BUILD = """\
import tinker
from tinker import types
from tinker.types import ModelInput, EncodedTextChunk

{setup}
for token in tokens:
    mi = mi.append_int(token)
"""


@pytest.mark.parametrize(
    "setup",
    [
        "def f(mi: tinker.ModelInput): ...\nmi: tinker.ModelInput = make()",
        "mi = tinker.ModelInput.from_ints(prompt)",
        "mi = types.ModelInput.empty()",
        "mi = ModelInput(chunks=[EncodedTextChunk(tokens=prompt)])",
        "mi = renderer.build_generation_prompt(messages)",
        "prompts: list[tinker.ModelInput] = make()\nmi = prompts[0]",
        "mi = tinker.ModelInput.empty().append(EncodedTextChunk(tokens=prompt))",
    ],
)
def test_a_model_input_known_by_dataflow(setup: str) -> None:
    assert builds(BUILD.format(setup=setup)) == [(len(setup.splitlines()) + 6, "append_int")]


@pytest.mark.parametrize(
    "setup",
    [
        "mi = Packet()",  # another class with an ``append_int`` (a byte buffer)
        "mi = datum.model_input",  # not known: a finding needs dataflow
        "mi = tinker.SamplingParams(max_tokens=1)",
    ],
)
def test_not_a_model_input(setup: str) -> None:
    assert builds(BUILD.format(setup=setup)) == []


def test_the_model_input_type() -> None:
    text = "import tinker\nmi = tinker.ModelInput.from_ints([1])\nmore = mi.append_int(2)\n"
    model = SemanticModel(cst.parse_module(text))
    kinds = {
        name: {t.kind for t in model.types(cst.Name(name), model.module_scope)}
        for name in ("mi", "more")
    }
    assert kinds == {"mi": {Kind.MODEL_INPUT}, "more": {Kind.MODEL_INPUT}}


PER_TOKEN = """\
import tinker
mi = tinker.ModelInput.from_ints(prompt)
{loop}
"""


@pytest.mark.parametrize(
    "loop, want",
    [
        # the token is the iteration's: the target, or computed from it in the body
        (
            "for i in range(len(tokens)):\n    t = tokens[i]\n    mi = mi.append_int(t)",
            "append_int",
        ),
        ("for i, t in enumerate(tokens):\n    mi = mi.append_int(t)", "append_int"),
        ("i = 0\nwhile i < n:\n    mi = mi.append_int(tokens[i])\n    i += 1", "append_int"),
        ("for t in tokens:\n    mi = mi.append(tinker.EncodedTextChunk(tokens=[t]))", "append"),
        ("for t in tokens:\n    chunks.append(tinker.types.EncodedTextChunk(tokens=[t]))", "chunk"),
        ("chunks = [tinker.EncodedTextChunk(tokens=[t]) for t in tokens]", "chunk"),
    ],
)
def test_one_token_per_iteration(loop: str, want: str) -> None:
    [(_, how)] = builds(PER_TOKEN.format(loop=loop))
    assert how == want


@pytest.mark.parametrize(
    "loop",
    [
        # one chunk of many tokens per message, and a separator (a constant) per message
        "for m in messages:\n    mi = mi.append(tinker.EncodedTextChunk(tokens=encode(m)))",
        "for m in messages:\n    mi = mi.append_int(eos)",
        "for m in messages:\n    chunks.append(tinker.EncodedTextChunk(tokens=[eos]))",
        # a continuation per candidate, not one growing input
        "outs = [mi.append_int(c) for c in candidates]",
        "for c in candidates:\n    out = mi.append_int(c)",
        # a starred or longer list is a whole chunk
        "for t in tokens:\n    chunks.append(tinker.EncodedTextChunk(tokens=[*t]))",
        "for t in tokens:\n    mi = mi.append(tinker.EncodedTextChunk(tokens=[t, t]))",
        # not a Tinker chunk
        "for t in tokens:\n    chunks.append(EncodedTextChunk(tokens=[t]))",
        # outside a loop
        "mi = mi.append_int(last)",
        # a request every iteration: decoding one token at a time
        "while mi.length < n:\n    r = sc.sample(mi, num_samples=1, sampling_params=p).result()\n"
        "    mi = mi.append_int(r.sequences[0].tokens[0])",
    ],
)
def test_not_one_token_per_iteration(loop: str) -> None:
    assert builds(PER_TOKEN.format(loop=loop)) == []


HOT = """\
import tinker

training_client = tinker.ServiceClient().create_lora_training_client(base_model="m")


def build(prompt: tinker.ModelInput, tokens: list[int]) -> tinker.ModelInput:
    for token in tokens:
        prompt = prompt.append_int(token)
    return prompt


{caller}
"""


def test_reported_only_when_a_hot_loop_runs_it() -> None:
    hot = "for batch in batches:\n    training_client.forward_backward(build(p, batch), 'cross_entropy')"
    once = "prompts = [build(p, d) for d in dataset]\nfor batch in batches:\n    training_client.forward_backward(batch, 'cross_entropy')"
    assert found(HOT.format(caller=hot)) == [(8, 18)]
    assert found(HOT.format(caller=once)) == []


def test_message_says_the_copy_the_loop_and_the_fix() -> None:
    hot = "for batch in batches:\n    training_client.forward_backward(build(p, batch), 'cross_entropy')"
    [diagnostic] = lint_text(HOT.format(caller=hot), "f.py", ONLY_TNK203).diagnostics
    assert (diagnostic.message, diagnostic.help) == (
        "`prompt.append_int()` copies the `ModelInput` per token in `build()` (step loop on line "
        "12)",
        "Each `append_int()` copies the whole `ModelInput`, once per token of `tokens` (line 7), "
        "quadratic in their number, in `build()`, which runs on every iteration of the loop on "
        "line 12 that submits `forward_backward` (line 13): vectorize the build with whole chunks "
        "(`ModelInput.from_ints(tokens)` or one `append(EncodedTextChunk(tokens=...))`)",
    )


def test_message_for_a_list_of_one_token_chunks() -> None:
    text = HOT.replace(
        "        prompt = prompt.append_int(token)",
        "        chunks.append(tinker.EncodedTextChunk(tokens=[token]))",
    )
    hot = "for batch in batches:\n    training_client.forward_backward(build(p, batch), 'cross_entropy')"
    [diagnostic] = lint_text(text.format(caller=hot), "f.py", ONLY_TNK203).diagnostics
    assert (diagnostic.line, diagnostic.col) == (8, 23)
    assert (diagnostic.message, diagnostic.help) == (
        "`tinker.EncodedTextChunk()` makes one chunk per token in `build()` (step loop on line 12)",
        "It makes one chunk per token of `tokens` (line 7), so every request carries one chunk "
        "per token, in `build()`, which runs on every iteration of the loop on line 12 that "
        "submits `forward_backward` (line 13): vectorize the build with one chunk of all of them "
        "(`EncodedTextChunk(tokens=tokens)` or `ModelInput.from_ints(tokens)`)",
    )
