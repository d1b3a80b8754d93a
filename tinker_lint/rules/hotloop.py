"""What the TNK2xx rules share: recognising the calls they look for, and saying where the step is.

Every TNK2xx message names the submit that makes the loop hot, with its line, so the user sees why
this loop counts as the training/sampling loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from tinker_lint.model.query import CallSite, CostShape, SemanticModel, StepContext, loop_iterables
from tinker_lint.rules.base import Context

WHY_GIL = """\
The Tinker SDK sends requests, polls for their results and sends session heartbeats on one
background thread, which shares the GIL with your training loop. CPU-heavy Python work in the loop
that submits the requests holds the GIL and stalls that thread: futures seem to hang, heartbeats
are missed, and sessions can expire.
"""


def calls_in_hot_loops(
    model: SemanticModel, matches: Callable[[SemanticModel, CallSite], bool]
) -> Iterator[tuple[CallSite, StepContext]]:
    """The calls ``matches`` picks that run on every step of a step loop, with how they are
    reached (what every TNK2xx rule asks first; ``model.steps`` decides)."""
    steps = model.steps
    for site in model.calls:
        if matches(model, site):
            hot = steps.step_of(site)
            if hot is not None:
                yield site, hot


def code_of(model: SemanticModel, node: cst.CSTNode, limit: int = 40) -> str:
    """The source of ``node`` on one line (``zip(\n    a, b\n)`` -> ``zip(a, b)``), shortened."""
    text = " ".join(model.module.code_for_node(node).split())
    text = re.sub(r"([(\[{]) ", r"\1", re.sub(r",? ([)\]}])", r"\1", text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def callee(model: SemanticModel, call: cst.Call) -> str:
    """``tokenizer.encode()``, ``json.dumps()``, ``.item()`` (receiver left out when long)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        receiver = code_of(model, func.value, 30)
        if "(" in receiver or "[" in receiver or receiver.endswith("..."):
            return f".{func.attr.value}()"
        return f"{receiver}.{func.attr.value}()"
    return f"{code_of(model, func)}()"


def builtin(model: SemanticModel, site: CallSite, name: str) -> bool:
    """Whether ``site`` calls the builtin ``name`` (not a local or imported rebinding)."""
    func = site.node.func
    return (
        type(func) is cst.Name  # exact: asked of every call (``isinstance`` on libcst's is slow)
        and func.value == name
        and not site.scope.lookup(name)
        and name not in model.imports.aliases
    )


def submit_name(model: SemanticModel, hot: StepContext) -> str:
    call = model.sdk_call(hot.submit.node, hot.submit.scope)
    if call is not None:
        return call.method.name
    func = hot.submit.node.func
    return func.attr.value if isinstance(func, cst.Attribute) else code_of(model, func)


def every_step(ctx: Context, hot: StepContext) -> str:
    """ "on every iteration of a loop that submits `forward_backward` (line 42)", or for work in a
    function the loop calls: "in `build()`, which runs on every iteration of the loop on line 30
    that submits `sample` (line 12, through `rollout()`)"."""
    model = ctx.model
    submit = f"`{submit_name(model, hot)}` (line {ctx.line_of(hot.submit.node)}"
    if hot.entry is not hot.submit:
        submit += f", through `{code_of(model, hot.entry.node.func)}()`"
    submit += ")"
    if hot.via:
        return (
            f"in `{hot.via[-1].name}()`, which runs on every iteration of the loop on line "
            f"{ctx.line_of(hot.loop.node)} that submits {submit}"
        )
    return f"on every iteration of a loop that submits {submit}"


def in_step(ctx: Context, hot: StepContext) -> str:
    """``every_step`` in a few words, for a message: "in the step loop on line 42", or "in
    `build()` (step loop on line 30)" (the help says what the loop submits)."""
    line = ctx.line_of(hot.loop.node)
    if hot.via:
        return f"in `{hot.via[-1].name}()` (step loop on line {line})"
    return f"in the step loop on line {line}"


def in_step_of(ctx: Context, shape: CostShape) -> str:
    """``in_step`` for a cost shape: also "in `train_step()` (once per training step)"."""
    if shape.step is not None:
        return in_step(ctx, shape.step)
    function = shape.step_submit.function if shape.step_submit is not None else None
    name = function.name if function is not None else "the function"
    return f"in `{name}()` (once per training step)"


def per_element(ctx: Context, hot: StepContext) -> str:
    """ "once per element of `batch` (line 17)" for the batch loop inside the step."""
    loop = hot.element_loop
    if loop is None:
        return ""
    iterable = next(loop_iterables(loop), None)
    what = f"`{code_of(ctx.model, iterable)}`" if iterable is not None else "a batch"
    return f"once per element of {what} (line {ctx.line_of(loop.node)}) "


def per_step(ctx: Context, shape: CostShape) -> str:
    """``every_step`` for a cost shape: also in a step function, "in `train_step()`, which submits
    `forward_backward` (line 12) once per call: on every training step"."""
    if shape.step is not None:
        return every_step(ctx, shape.step)
    submit = shape.step_submit
    assert submit is not None
    function = submit.function
    name = function.name if function is not None else "the function"
    call = ctx.model.sdk_call(submit.node, submit.scope)
    method = call.method.name if call is not None else code_of(ctx.model, submit.node.func)
    return (
        f"in `{name}()`, which submits `{method}` (line {ctx.line_of(submit.node)}) once per "
        "call: on every training step"
    )


def cost_shape(ctx: Context, shape: CostShape) -> str:
    """ "once per element of `positions` (line 412), for each of `data_D` (line 395)": the loops
    that multiply a place's cost inside the step, innermost first (the FEW ones left out)."""
    element = shape.per_element
    example = shape.per_example
    parts = []
    if element is not None:
        parts.append(
            f"once per element of `{code_of(ctx.model, element.iterable)}` "
            f"(line {ctx.line_of(element.loop.node)})"
        )
    if example is not None and (
        element is None or shape.levels.index(example) < shape.levels.index(element)
    ):
        parts.append(
            f"for each of `{code_of(ctx.model, example.iterable)}` "
            f"(line {ctx.line_of(example.loop.node)})"
        )
    return ", ".join(parts)
