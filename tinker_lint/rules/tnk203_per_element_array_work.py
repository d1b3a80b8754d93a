"""TNK203 per-element-array-work."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.batches import iterates_batch_array
from tinker_lint.model.model_input import TOKEN_BUILD_WORDS, TokenBuild, token_by_token_builds
from tinker_lint.model.semantic import CallSite, SemanticModel
from tinker_lint.model.steps import StepContext
from tinker_lint.prefilter.needs import Needs, parts, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    callee,
    calls_in_hot_loops,
    code_of,
    every_step,
    per_element,
)

# Methods that turn one array element (or a whole array) into Python objects.
_TO_PYTHON = frozenset({"item", "tolist"})


class PerElementArrayWork(Rule):
    code = "TNK203"
    needs_hot_loop = True
    name = "per-element-array-work"
    level = "warning"
    summary = (
        "Vectorize once per batch, or move it before the loop: numpy/torch work per element in "
        "the loop that submits Tinker requests stalls the SDK's thread"
    )
    # ``what``: "`np.array()` runs once per element of `batch` (line 4)", or "Python loop over
    # the elements of the array `logprobs`"; ``how``: "once per batch, or move it before the loop".
    message = "{what} {every_step}: vectorize {how}"
    why = (
        WHY_GIL
        + """
Each numpy or torch call costs microseconds of Python and dispatcher overhead with the GIL held;
inside a loop over the elements of a batch (every datum, every token, every position) that adds up
to seconds per step. Reported, in a loop that submits Tinker requests (or a function it calls each
step):

- a numpy/torch function (`np.array`, `torch.tensor`, `torch.logsumexp`, ...) called inside a
  nested loop or comprehension over per-example data (`batch`, `datums`, `tokens`, `positions`, the
  loop's own item, what the step submits);
- `.item()` / `.tolist()` per element;
- a Python `for` (or comprehension) over the elements of an array or tensor of per-example data
  (`for lp in logprobs`).

A single reduction per step (`np.mean(losses)`) is not reported, nor is work under a cadence guard.

A `ModelInput` built one token at a time is reported too: `mi = mi.append_int(t)` (or
`mi.append()` of a one-token `EncodedTextChunk`) once per token copies the whole chunk list and
adds one chunk on every call, so building it is quadratic (about 35 ms for 1k tokens and 120 ms
for 2k, against 0.05 ms for one chunk, per sequence per step), and every request carries one chunk
per token. A list of one-token chunks is linear to build (about 10 ms for 2k tokens) but sends one
chunk per token too: a request body 8 times larger. One chunk per message or turn is not reported,
nor a separator token appended once per turn, nor a loop that samples a token on every iteration.
"""
    )
    fix_description = (
        "Stack or concatenate the batch and call numpy/torch once per batch (`np.stack`, "
        "`torch.nn.utils.rnn.pad_sequence`, boolean masks instead of per-position loops), keep "
        "per-element values as Python lists until then, or do the work before the loop. Build a "
        "`ModelInput` from whole chunks: `ModelInput.from_ints(tokens)`, or one "
        "`append(EncodedTextChunk(tokens=tokens))`."
    )
    INVALID = (
        Example(
            """\
import torch

for batch in batches:
    targets = [torch.tensor(d["targets"]) for d in batch]
    training_client.forward_backward(make_datums(batch, targets), loss_fn="cross_entropy")
""",
            expect=((4, 16),),
        ),
        Example(
            """\
import tinker

for batch in batches:
    sequences = []
    for datum in batch:
        sequence: tinker.ModelInput = datum["prompt"]
        for token in datum["completion_tokens"]:
            sequence = sequence.append_int(token)
        sequences.append(sequence)
    training_client.forward_backward(make_datums(sequences), loss_fn="cross_entropy")
""",
            expect=((8, 24),),
        ),
    )
    VALID = (
        Example(
            """\
import numpy as np

for batch in batches:
    result = training_client.forward_backward(batch, loss_fn="cross_entropy").result()
    losses = [out["loss"] for out in result.loss_fn_outputs]
    print(np.mean(losses))
"""
        ),
    )

    # ``.item()``/``.tolist()``, or an array: a numpy/torch function (by its module's name, also
    # in ``import numpy as np``), a numpy/torch annotation, ``.to_torch()``/``.to_numpy()``.
    # Or a token-by-token ``ModelInput`` build: ``append_int``, ``EncodedTextChunk``.
    prefilter = Needs(text=(words(_TO_PYTHON | TOKEN_BUILD_WORDS) | parts({"numpy", "torch"}),))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, hot in calls_in_hot_loops(model, is_array_work):
            if hot.element_loop is None:
                continue
            yield Finding(
                site.node,
                f"`{callee(model, site.node)}` runs {per_element(ctx, hot)}{every_step(ctx, hot)}: "
                "vectorize once per batch, or move it before the loop",
            )
        for loop in model.loops:
            iterable = iterates_batch_array(model, loop)
            if iterable is None:
                continue
            step = model.steps.of_loop(loop)
            if step is None:
                continue
            yield Finding(
                iterable,
                f"Python loop over the elements of the array `{code_of(model, iterable)}` "
                f"{every_step(ctx, step)}: vectorize it with numpy/torch operations",
            )
        # A ``ModelInput`` built one token per iteration (``model/model_input.py``).
        for build in token_by_token_builds(model):
            step = model.steps.of_call(build.site)
            if step is not None:
                yield Finding(build.site.node, _token_build_message(ctx, build, step))


def is_array_work(model: SemanticModel, site: CallSite) -> bool:
    """A numpy/torch function call, or an array's ``.item()``/``.tolist()``."""
    func = site.node.func
    if isinstance(func, cst.Attribute) and func.attr.value in _TO_PYTHON:
        return not site.node.args
    return model.array_function(model.qualify(func, site.scope)) is not None


def _token_build_message(ctx: Context, build: TokenBuild, step: StepContext) -> str:
    """The rule's template (``{what} {every_step}: vectorize {how}``) for a token-by-token build."""
    model = ctx.model
    if build.iterable is not None:
        where = f"of `{code_of(model, build.iterable)}` (line {ctx.line_of(build.loop.node)})"
    else:
        where = f"in the `while` loop on line {ctx.line_of(build.loop.node)}"
    if build.receiver is None:
        return (
            f"`{callee(model, build.site.node)}` makes one chunk per token {where}, so every "
            f"request carries one chunk per token, {every_step(ctx, step)}: vectorize the build "
            "with one chunk of all of them (`EncodedTextChunk(tokens=tokens)` or "
            "`ModelInput.from_ints(tokens)`)"
        )
    what = "of a one-token chunk " if build.how == "append" else ""
    return (
        f"`{code_of(model, build.receiver, 30)}.{build.how}()` {what}copies the whole "
        f"`ModelInput` on every call, once per token {where}, quadratic in their number, "
        f"{every_step(ctx, step)}: vectorize the build with whole chunks "
        "(`ModelInput.from_ints(tokens)` or one `append(EncodedTextChunk(tokens=...))`)"
    )
