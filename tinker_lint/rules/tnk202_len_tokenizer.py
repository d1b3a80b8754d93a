"""TNK202 len-tokenizer."""

from __future__ import annotations

from collections.abc import Iterator

from tinker_lint.model.query import CallSite, Kind, SemanticModel
from tinker_lint.prefilter.mentions import TOKENIZER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    builtin,
    calls_in_hot_loops,
    code_of,
    every_step,
    in_step,
)


class LenTokenizer(Rule):
    code = "TNK202"
    needs_hot_loop = True
    name = "len-tokenizer"
    level = "warning"
    summary = (
        "Compute `len(tokenizer)` once before the loop: Hugging Face fast tokenizers count the "
        "whole vocabulary on every call (40-130 ms with tokenizers 0.21/0.22)"
    )
    message = "`len({tokenizer})` counts the whole vocabulary {in_step}"
    help = (
        "A fast tokenizer builds its whole vocabulary to answer `len()` (40-130 ms per call with "
        "tokenizers 0.21/0.22), here {every_step}: compute it once before the loop"
    )
    why = (
        WHY_GIL
        + """
`len(tokenizer)` looks free, but a Hugging Face fast tokenizer answers it with
`get_vocab_size(with_added_tokens=True)`, which builds the whole vocabulary: measured 40-130 ms per
call for a 151k-token vocabulary with `tokenizers` 0.21 and 0.22 (which transformers 4.57 allows),
0.02 ms with 0.23.3, with the GIL held. Called on every step (or in a function called per request),
it stalls the SDK's thread every time on the older versions, and costs nothing to avoid on the
newer. The vocabulary does not change during training: compute the size once, before the loop
(`tinker_cookbook.tokenizer_utils.get_vocab_size(tokenizer)`), and pass the number.

Reported in a loop that submits Tinker requests and in functions of the module such a loop calls
on every step; not under a cadence guard.
"""
    )
    fix_description = (
        "`vocab_size = len(tokenizer)` once, before the loop (or when the tokenizer is made), and "
        "pass `vocab_size` to the code that runs per step."
    )
    INVALID = (
        Example(
            """\
for batch in batches:
    datums = build_datums(batch, vocab_size=len(tokenizer))
    training_client.forward_backward(datums, loss_fn="cross_entropy")
""",
            expect=((2, 45),),
        ),
    )
    VALID = (
        Example(
            """\
vocab_size = len(tokenizer)
for batch in batches:
    datums = build_datums(batch, vocab_size=vocab_size)
    training_client.forward_backward(datums, loss_fn="cross_entropy")
"""
        ),
    )

    # The builtin ``len`` of a tokenizer.
    prefilter = Needs(text=(words({"len"}), TOKENIZER))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, hot in calls_in_hot_loops(model, is_len_of_tokenizer):
            yield self.finding(
                site.node,
                tokenizer=code_of(model, site.node.args[0].value),
                in_step=in_step(ctx, hot),
                every_step=every_step(ctx, hot),
            )


def is_len_of_tokenizer(model: SemanticModel, site: CallSite) -> bool:
    """``len(x)`` of a value the model takes for a tokenizer."""
    args = site.node.args
    if len(args) != 1 or args[0].star or not builtin(model, site, "len"):
        return False
    return any(t.kind is Kind.TOKENIZER for t in model.types(args[0].value, site.scope))
