"""TNK203 per-element-array-work."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import (
    TOKEN_BUILD_WORDS,
    CallSite,
    CostShape,
    ElementAccess,
    Kind,
    LoopInfo,
    Scale,
    SemanticModel,
    StepContext,
    TokenBuild,
    bases,
    element_subscripts,
    loop_iterables,
    reads_another_element,
    stored_subscript_values,
    token_by_token_builds,
)
from tinker_lint.prefilter.needs import Needs, parts, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    callee,
    code_of,
    cost_shape,
    every_step,
    in_step,
    in_step_of,
    per_step,
)

# Methods that turn one array element (or a whole array) into Python objects.
_TO_PYTHON = frozenset({"item", "tolist"})


class PerElementArrayWork(Rule):
    code = "TNK203"
    needs_hot_loop = True
    name = "per-element-array-work"
    level = "warning"
    summary = (
        "Vectorize per example: numpy/torch work per token or position of each example, in the "
        "loop that submits Tinker requests, stalls the SDK's thread"
    )
    # Array work per element, a loop through a tensor, a ``ModelInput`` built token by token.
    variants = {
        "element": (
            "`{call}` runs once per element of `{iterable}` (line {line}) {in_step}",
            "It runs {cost}, {every_step}: vectorize it once per example",
        ),
        "loop": (
            "Loop on line {line} goes through the tensor `{array}` per element {in_step}",
            "The Python loop over `{iterable}` runs {cost}, {every_step}: vectorize it with a "
            "mask or an index tensor",
        ),
        "chunks": (
            "`{call}` makes one chunk per token {in_step}",
            "It makes one chunk per token {where}, so every request carries one chunk per token, "
            "{every_step}: vectorize the build with one chunk of all of them "
            "(`EncodedTextChunk(tokens=tokens)` or `ModelInput.from_ints(tokens)`)",
        ),
        "append": (
            "`{receiver}.{method}()` copies the `ModelInput` per token {in_step}",
            "Each `{method}()` of a one-token chunk copies the whole `ModelInput`, once per "
            "token {where}, quadratic in their number, {every_step}: vectorize the build with "
            "whole chunks (`ModelInput.from_ints(tokens)` or one "
            "`append(EncodedTextChunk(tokens=...))`)",
        ),
        "append_int": (
            "`{receiver}.{method}()` copies the `ModelInput` per token {in_step}",
            "Each `{method}()` copies the whole `ModelInput`, once per token {where}, quadratic "
            "in their number, {every_step}: vectorize the build with whole chunks "
            "(`ModelInput.from_ints(tokens)` or one `append(EncodedTextChunk(tokens=...))`)",
        ),
    }
    message, help = variants["element"]
    why = (
        WHY_GIL
        + """
What decides the cost is how many times the work runs per step. One numpy or torch call costs
microseconds of Python and dispatcher overhead with the GIL held (5-25 us for a small tensor op,
~1 us for numpy on a scalar). Once per example of the step (a datum, a sampled sequence, a group)
that is the vectorized form: O(examples) calls of O(tokens) work, required, and not reported.
Once per token or position of every example, it is O(examples x tokens) calls: measured on
tinker-cookbook's `distillation/sdft.py`, ~150 us per completion position against ~26 us batched,
seconds per step for 64 datums of 1k tokens.

Reported, on every step of a loop that submits Tinker requests (or in a function it calls each
step, or in a step function: one that submits a training request once per call and that no loop
of its module calls, such as a `train_step` method driven from another module), when the work sits in a loop over the elements of one example: a loop over a tensor, or over
a part of an example (`enumerate(seq.tokens)`, `range(len(mask))`, `zip(datum.a, datum.b)`, a list
derived from the per-example loop's item or from a per-example function's parameter; names such as
`tokens`, `positions` only where dataflow leaves it open):

- a numpy/torch function (`torch.tensor`, `torch.logsumexp`, `np.array`, ...) or `.item()` /
  `.tolist()` there;
- a Python loop that indexes a tensor element by element (`[t for t in range(len(w)) if w[t] > 0]`,
  8.6 ms per 1.5k-token example against 0.05 ms for `torch.nonzero(w > 0)`), or iterates one
  (`for lp in logprobs`); a recurrence (`adv[t] = delta[t] + gamma * adv[t + 1]`) is not one.

Not reported: one constructor per datum over that datum's own list (`torch.tensor(seq.tokens)`, a
Datum's `loss_fn_inputs`); one whole-tensor op per datum (`.tolist()`, `.sum().item()`,
`torch.where(mask > 0)`); small per-group statistics (`np.array(group_rewards)`); numpy on a Python
scalar once per sequence; converting this step's Tinker result once per datum; work under a
cadence guard.

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
        "Do the work once per example over all its elements: build one `[P, K]` tensor and call "
        "`torch.logsumexp(..., dim=1)` once, index with a mask or an index tensor "
        "(`torch.nonzero(w > 0)`, `lp[positions].sum()`), keep per-element values as Python "
        "lists and convert once; or do it before the loop if the data does not change. Build a "
        "`ModelInput` from whole chunks: `ModelInput.from_ints(tokens)`, or one "
        "`append(EncodedTextChunk(tokens=tokens))`."
    )
    INVALID = (
        Example(
            """\
import torch

for batch in batches:
    for datum in batch:
        for pos in range(len(datum["tokens"])):
            lps = torch.tensor(datum["topk_logprobs"][pos])
    training_client.forward_backward(make_datums(batch), loss_fn="cross_entropy")
""",
            expect=((6, 19),),
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
import torch

for batch in batches:
    targets = [torch.tensor(d["targets"]) for d in batch]
    training_client.forward_backward(make_datums(batch, targets), loss_fn="cross_entropy")
"""
        ),
    )

    # ``.item()``/``.tolist()``, or an array: a numpy/torch function (by its module's name, also
    # in ``import numpy as np``), a numpy/torch annotation, ``.to_torch()``/``.to_numpy()``.
    # Or a token-by-token ``ModelInput`` build: ``append_int``, ``EncodedTextChunk``.
    prefilter = Needs(text=(words(_TO_PYTHON | TOKEN_BUILD_WORDS) | parts({"numpy", "torch"}),))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        costs = model.costs
        with_findings: set[LoopInfo] = set()
        per_element: list[tuple[CallSite, CostShape]] = []
        for site in model.calls:
            if is_array_work(model, site):
                shape = costs.shape_of(site)
                if shape is not None and shape.per_element is not None:
                    per_element.append((site, shape))
        for site, shape in per_element:
            if any(
                other is not site and model.contains(other.node, site.node)
                for other, _ in per_element
            ):
                continue  # ``torch.exp(torch.tensor(x))``: one finding, at the outer call
            with_findings.update(site.loops)
            element = shape.per_element
            assert element is not None  # kept above: only the work run per element
            yield self.finding(
                site.node,
                variant="element",
                call=callee(model, site.node),
                iterable=code_of(model, element.iterable),
                line=ctx.line_of(element.loop.node),
                in_step=in_step_of(ctx, shape),
                cost=cost_shape(ctx, shape),
                every_step=per_step(ctx, shape),
            )
        for loop in model.loops:
            if loop in with_findings:
                continue
            found = indexes_array_by_element(model, loop)
            if found is None:
                continue
            shape, array = found
            iterable = next(loop_iterables(loop))
            yield self.finding(
                iterable,
                variant="loop",
                line=ctx.line_of(loop.node),
                array=code_of(model, array),
                in_step=in_step_of(ctx, shape),
                iterable=code_of(model, iterable),
                cost=cost_shape(ctx, shape),
                every_step=per_step(ctx, shape),
            )
        # A ``ModelInput`` built one token per iteration (``model/analyses/model_input.py``).
        for build in token_by_token_builds(model):
            step = model.steps.step_of(build.site)
            if step is not None:
                variant, fields = _token_build_fields(ctx, build, step)
                yield self.finding(build.site.node, None, variant, **fields)


def is_array_work(model: SemanticModel, site: CallSite) -> bool:
    """A numpy/torch function call, or an array's ``.item()``/``.tolist()``."""
    func = site.node.func
    if type(func) is cst.Attribute and func.attr.value in _TO_PYTHON:  # exact: asked of every call
        return not site.node.args
    return model.array_function(model.qualify(func, site.scope)) is not None


def indexes_array_by_element(
    model: SemanticModel, loop: LoopInfo
) -> tuple[CostShape, cst.BaseExpression] | None:
    """A loop over the elements of one example, on every step, that iterates a tensor or indexes
    one by the loop's own variable (``w[t]``), and is not a recurrence: the shape and the tensor."""

    # The loop's own syntax and types first: most loops of a step neither iterate a tensor nor
    # index one, and their cost shape (dataflow along the step's calls) is the dear part. The
    # level that decides a loop's scale goes over one of its iterable's bases (``cost.py``).
    def is_array(value: cst.BaseExpression) -> bool:
        return _is_array(model, value, loop)

    accesses: list[ElementAccess] | None = None
    if not any(is_array(base) for iterable in loop_iterables(loop) for base in bases(iterable)):
        accesses = element_subscripts(model, loop, is_array)
        if not accesses:
            return None
    shape = model.costs.of_loop(loop)
    if shape is None or not shape.levels or shape.levels[-1].scale is not Scale.ELEMENTS:
        return None
    level = shape.levels[-1]
    if is_array(level.iterable):
        return shape, level.iterable
    if accesses is None:
        accesses = element_subscripts(model, loop, is_array)
    if not accesses:
        return None
    if reads_another_element(accesses, stored_subscript_values(model, loop)):
        return None  # ``adv[t] = ... adv[t + 1]``: each element needs the one before
    return shape, accesses[0].node.value


def _is_array(model: SemanticModel, expr: cst.BaseExpression, loop: LoopInfo) -> bool:
    return any(t.kind is Kind.ARRAY for t in model.types(expr, loop.scope))


def _token_build_fields(
    ctx: Context, build: TokenBuild, step: StepContext
) -> tuple[str, dict[str, object]]:
    """The rule's variant and fields for a token-by-token build."""
    model = ctx.model
    if build.iterable is not None:
        where = f"of `{code_of(model, build.iterable)}` (line {ctx.line_of(build.loop.node)})"
    else:
        where = f"in the `while` loop on line {ctx.line_of(build.loop.node)}"
    fields = {"in_step": in_step(ctx, step), "every_step": every_step(ctx, step), "where": where}
    if build.receiver is None:
        return "chunks", {**fields, "call": callee(model, build.site.node)}
    variant = "append" if build.how == "append" else "append_int"
    return variant, {**fields, "receiver": code_of(model, build.receiver, 30), "method": build.how}
