"""TNK204 serialization-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import CallSite, SemanticModel, is_payload, loop_iterables
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import WHY_GIL, callee, code_of, every_step, in_step, per_element

SERIALIZERS = frozenset(
    {
        "json.dump",
        "json.dumps",
        "pickle.dump",
        "pickle.dumps",
        "cloudpickle.dump",
        "cloudpickle.dumps",
    }
)
PYDANTIC_DUMPS = frozenset({"model_dump", "model_dump_json"})


class SerializationInHotLoop(Rule):
    code = "TNK204"
    needs_hot_loop = True
    name = "serialization-in-hot-loop"
    level = "note"
    summary = (
        "Serialize on a cadence or in a background thread/process: dumping per-step payloads in "
        "the loop that submits Tinker requests stalls the SDK's thread"
    )
    # ``what``: "each element of `batch`" or "a per-step payload"; ``detail``: the help's.
    message = "`{call}` serializes {what} {in_step}"
    help = (
        "It serializes {detail}{every_step}, outside a cadence guard: do it on a cadence "
        "(`if step % N == 0:`) or in a background thread/process"
    )
    why = (
        WHY_GIL
        + """
`json.dump[s]`, `pickle.dump[s]` and pydantic's `.model_dump()` / `.model_dump_json()` walk the
whole object in Python with the GIL held. Serializing every datum, or the step's batch, rollouts or
responses, on every step stalls the SDK's thread; pydantic 2.13 pre-releases made `model_dump()` of
large payloads much slower still (see TNK301). Write such data on a cadence
(`if step % save_every == 0:`) or hand it to a background thread or process.

Reported for a payload: a value serialized once per element of a batch, what the step submits
(`forward_backward(datums, ...)`), the loop's own item, a Tinker result, or a value named like a
collection of per-example data (`batch`, `datums`, `rollouts`, `responses`). Not reported: one
record per step (`f.write(json.dumps(record) + "\n")`, a dict literal, `metrics`), whatever its
name, and anything under a cadence guard.
"""
    )
    fix_description = (
        "Serialize under a cadence guard (`if step % save_every == 0:`), or put the objects on a "
        "`queue.Queue` drained by a writer thread (or a process, for large payloads)."
    )
    INVALID = (
        Example(
            """\
import json

for batch in batches:
    lines = [json.dumps(datum) for datum in batch]
    training_client.forward_backward(to_datums(batch), loss_fn="cross_entropy")
""",
            expect=((4, 14),),
        ),
    )
    VALID = (
        Example(
            """\
import json

for step, batch in enumerate(batches):
    training_client.forward_backward(to_datums(batch), loss_fn="cross_entropy")
    if step % log_every == 0:
        print(json.dumps({"step": step, "batch": batch}))
"""
        ),
    )

    # A serializer by the last part of its name (``json.dumps``, ``from pickle import dump``), or
    # pydantic's method.
    prefilter = Needs(
        text=(words({*PYDANTIC_DUMPS, *(name.rsplit(".", 1)[-1] for name in SERIALIZERS)}),)
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site in model.calls:
            value = serialized_value(model, site)
            if value is None:
                continue
            hot = model.steps.step_of(site)
            if hot is None or writes_a_line(model, site):
                continue
            if hot.element_loop is not None:
                batch = next(loop_iterables(hot.element_loop), None)
                what = f"each element of `{code_of(model, batch)}`" if batch else "each element"
                detail = per_element(ctx, hot)
            elif is_payload(model, site, value, hot):
                what = "a per-step payload"
                detail = "a per-step payload "
            else:
                continue
            yield self.finding(
                site.node,
                call=callee(model, site.node),
                what=what,
                in_step=in_step(ctx, hot),
                detail=detail,
                every_step=every_step(ctx, hot),
            )


def writes_a_line(model: SemanticModel, site: CallSite) -> bool:
    """``f.write(json.dumps(record) + "\n")``: one line of a JSONL file, written as it is made.
    Whether writing the file costs anything is TNK205's question (a dump of the step's data), not
    a serialization to hold in memory."""
    node: cst.CSTNode | None = model.parent(site.node)
    while isinstance(node, cst.BinaryOperation | cst.Arg | cst.FormattedStringExpression):
        node = model.parent(node)
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("write", "writelines")
    )


def serialized_value(model: SemanticModel, site: CallSite) -> cst.BaseExpression | None:
    """What ``site`` serializes, if it is a json/pickle dump or a pydantic ``model_dump``."""
    node = site.node
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in PYDANTIC_DUMPS:
        return func.value
    if model.qualify(func, site.scope) in SERIALIZERS and node.args and not node.args[0].keyword:
        return node.args[0].value
    return None
