"""TNK201 tokenizer-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.semantic import CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TOKENIZER
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    callee,
    calls_in_hot_loops,
    every_step,
)

# Tokenizer methods that tokenize (spec); `decode` of one sequence is left alone.
TOKENIZING_METHODS = frozenset(
    {"encode", "encode_plus", "batch_encode_plus", "apply_chat_template", "batch_decode"}
)


class TokenizerInHotLoop(Rule):
    code = "TNK201"
    needs_hot_loop = True
    name = "tokenizer-in-hot-loop"
    level = "warning"
    summary = (
        "Pre-tokenize before the loop (e.g. `datasets.map`) or use the cookbook's dataset "
        "builders: tokenizing in the loop that submits Tinker requests stalls the SDK's thread"
    )
    message = (
        "`{call}` tokenizes {every_step}: pre-tokenize before the loop (e.g. `datasets.map`) or "
        "use the cookbook's dataset builders"
    )
    why = (
        WHY_GIL
        + """
Tokenizing (`tokenizer.encode`, `tokenizer(...)`, `apply_chat_template`, `encode_plus`,
`batch_encode_plus`, `batch_decode`) is such work, and it is usually the same on every epoch: do it
once before the loop (`datasets.map(..., batched=True)`), or use `tinker_cookbook`'s dataset
builders, which tokenize ahead of the step.

A tokenizer is recognised from `get_tokenizer()`, `AutoTokenizer.from_pretrained(...)`, a
`PreTrainedTokenizer` annotation, or a name such as `tokenizer`, `self.tokenizer` or
`renderer.tokenizer`. Not reported: tokenization before the loop, in a loop that submits nothing,
or under a cadence guard (`if step % eval_every == 0:`).
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
for batch in batches:
    tokens = [tokenizer.encode(text) for text in batch]
    training_client.forward_backward(make_datums(tokens), loss_fn="cross_entropy")
""",
            expect=((5, 15),),
        ),
    )
    VALID = (
        Example(
            """\
from tinker_cookbook.tokenizer_utils import get_tokenizer

tokenizer = get_tokenizer("Qwen/Qwen3-8B")
tokenized = [[tokenizer.encode(text) for text in batch] for batch in batches]
for tokens in tokenized:
    training_client.forward_backward(make_datums(tokens), loss_fn="cross_entropy")
"""
        ),
    )

    # A tokenizer, whatever its name: ``tok(text)`` calls one known by dataflow.
    prefilter = Needs(text=(TOKENIZER,))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, hot in calls_in_hot_loops(model, tokenizes):
            yield Finding(
                site.node,
                f"`{callee(model, site.node)}` tokenizes {every_step(ctx, hot)}: pre-tokenize "
                "before the loop (e.g. `datasets.map`) or use the cookbook's dataset builders",
            )


def tokenizes(model: SemanticModel, site: CallSite) -> bool:
    """``tokenizer.encode(...)`` and the other tokenizing methods, and calls of the tokenizer
    itself: ``tokenizer(...)``, ``self.tokenizer(...)``."""
    func = site.node.func
    if isinstance(func, cst.Attribute) and func.attr.value in TOKENIZING_METHODS:
        return model.is_tokenizer(func.value, site.scope)
    return model.calls_tokenizer(site.node, site.scope)
