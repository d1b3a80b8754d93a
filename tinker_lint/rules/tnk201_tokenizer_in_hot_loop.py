"""TNK201 tokenizer-in-hot-loop."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import CallSite, CostShape, Role, SemanticModel
from tinker_lint.prefilter.mentions import TOKENIZER
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import WHY_GIL, callee, code_of, cost_shape, in_step_of, per_step

# Tokenizer methods that tokenize (spec); `decode` of one sequence is left alone.
TOKENIZING_METHODS = frozenset(
    {"encode", "encode_plus", "batch_encode_plus", "apply_chat_template", "batch_decode"}
)
# The argument that holds the text (or conversation), when passed by keyword.
_TEXT_KEYWORDS = frozenset(
    {"text", "texts", "conversation", "messages", "sequences", "batch_text_or_text_pairs"}
)
_COLLECTION = re.compile(
    r"(^|_)(batch|minibatch|texts|prompts|examples|rows|records|docs|documents|sentences|conversations|samples)$"
)


class TokenizerInHotLoop(Rule):
    code = "TNK201"
    needs_hot_loop = True
    name = "tokenizer-in-hot-loop"
    level = "warning"
    summary = (
        "Pre-tokenize before the loop (e.g. `datasets.map`) or use the cookbook's dataset "
        "builders: re-tokenizing the training data on every step stalls the SDK's thread"
    )
    # ``what``: "once per element of `batch` (line 4)" or "a whole batch (`batch`)".
    message = "`{call}` re-tokenizes unchanged data {in_step}"
    help = (
        "It tokenizes data that exists before the loop, {what}, {every_step}: pre-tokenize it "
        "once (e.g. `datasets.map`) or use the cookbook's dataset builders"
    )
    why = (
        WHY_GIL
        + """
Tokenizing a batch (`tokenizer.encode`, `tokenizer(...)`, `apply_chat_template`, `encode_plus`,
`batch_encode_plus`, `batch_decode`) takes milliseconds with the GIL held, and when its text comes
from the dataset the work is the same on every epoch: do it once before the loop
(`datasets.map(..., batched=True)`), or use `tinker_cookbook`'s dataset builders, which tokenize
ahead of the step.

Reported in a training loop (it submits `forward_backward`/`forward`, and no sampling; or in a
step function, one that submits a training request once per call), when the
tokenizer runs once per example of the step, or on a whole batch, and its text exists before the
loop: followed back by dataflow to the dataset the loop iterates, the function's inputs or module
data. Not reported:

- text made on this step: from a Tinker result, an awaited value, a decoded output (a multi-turn
  conversation, a rollout, a tool's reply, a request's body);
- a loop that samples: one short prompt encode (~0.1 ms) per sampling request that takes seconds
  is not the cost; a serial wait there is (TNK103);
- one short encode per step (one example per step is not re-tokenizing a batch);
- tokenizing before the loop, once per epoch, or under a cadence guard.

A tokenizer is recognised from `get_tokenizer()`, `AutoTokenizer.from_pretrained(...)`, a
`PreTrainedTokenizer` annotation, or a name such as `tokenizer`, `self.tokenizer` or
`renderer.tokenizer`.
"""
    )
    fix_description = (
        "Tokenize the dataset once before the loop (`dataset.map(tokenize, batched=True)`) and "
        "iterate over token ids, or build the data with the cookbook's dataset builders "
        "(`tinker_cookbook.supervised` / `rl` datasets), which tokenize ahead of the step."
    )
    INVALID = (
        Example(
            """\
from tinker_cookbook.tokenizer_utils import get_tokenizer

tokenizer = get_tokenizer("Qwen/Qwen3-8B")
for epoch in range(3):
    for batch in batches:
        tokens = [tokenizer.encode(text) for text in batch]
        training_client.forward_backward(make_datums(tokens), loss_fn="cross_entropy")
""",
            expect=((6, 19),),
        ),
    )
    VALID = (
        Example(
            """\
from tinker_cookbook.tokenizer_utils import get_tokenizer

tokenizer = get_tokenizer("Qwen/Qwen3-8B")
tokenized = [[tokenizer.encode(text) for text in batch] for batch in batches]
for epoch in range(3):
    for tokens in tokenized:
        training_client.forward_backward(make_datums(tokens), loss_fn="cross_entropy")
"""
        ),
    )

    # A tokenizer, whatever its name: ``tok(text)`` calls one known by dataflow.
    prefilter = Needs(text=(TOKENIZER,))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        costs = model.costs
        for site in model.calls:
            if not tokenizes(model, site):
                continue
            shape = costs.shape_of(site)
            if shape is None or Role.SAMPLE in shape.roles:
                continue  # not every step, or one prompt per sampling request
            text = text_argument(site.node)
            if text is None or costs.made_in_step(text, site, shape):
                continue
            what = _how_much(ctx, shape, text)
            if what is None:
                continue
            yield self.finding(
                site.node,
                call=callee(model, site.node),
                in_step=in_step_of(ctx, shape),
                what=what,
                every_step=per_step(ctx, shape),
            )


def tokenizes(model: SemanticModel, site: CallSite) -> bool:
    """``tokenizer.encode(...)`` and the other tokenizing methods, and calls of the tokenizer
    itself: ``tokenizer(...)``, ``self.tokenizer(...)``."""
    func = site.node.func
    if type(func) is cst.Attribute and func.attr.value in TOKENIZING_METHODS:  # exact: every call
        if func.attr.value == "apply_chat_template" and _renders_only(site.node):
            return False  # ``tokenize=False``: a string, tokenized (and reported) where it is
        return model.is_tokenizer(func.value, site.scope)
    return model.calls_tokenizer(site.node, site.scope)


def _renders_only(call: cst.Call) -> bool:
    return any(
        arg.keyword is not None
        and arg.keyword.value == "tokenize"
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "False"
        for arg in call.args
    )


def text_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The text (or conversation) a tokenizing call gets: its first positional argument, or the
    keyword that names it."""
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value in _TEXT_KEYWORDS:
            return arg.value
    return None


def _how_much(ctx: Context, shape: CostShape, text: cst.BaseExpression) -> str | None:
    """ "once per element of `batch` (line 4)" when it runs per example, "a whole batch
    (`batch`)" when it gets one; None for one text per step."""
    if shape.per_example is not None or shape.per_element is not None:
        return cost_shape(ctx, shape).replace("for each of", "once for each of", 1)
    if isinstance(text, cst.List | cst.ListComp) or _names_a_batch(text):
        return f"a whole batch (`{code_of(ctx.model, text)}`) at once"
    return None


def _names_a_batch(expr: cst.BaseExpression) -> bool:
    """``batch``, ``self.texts``, and a column of a batch (``batch["text"]``)."""
    if isinstance(expr, cst.Subscript) and all(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
        for e in expr.slice
    ):
        expr = expr.value
    name = None
    if isinstance(expr, cst.Name):
        name = expr.value
    elif isinstance(expr, cst.Attribute):
        name = expr.attr.value
    return name is not None and _COLLECTION.search(name.lower()) is not None
