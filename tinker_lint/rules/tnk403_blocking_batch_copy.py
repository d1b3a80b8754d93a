"""TNK403 blocking-batch-copy (opt-in)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import libcst as cst

from tinker_lint.model.query import (
    BindingKind,
    CallSite,
    LoopInfo,
    Scope,
    SemanticModel,
    TorchStep,
    argument,
    assigned_names,
    dotted_name,
    has_keyword,
    loop_iterables,
    loop_targets,
    passed,
)
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Autofix, Context, Example, Finding, Rule
from tinker_lint.rules.fixes.tnk403 import TITLE, plan_non_blocking
from tinker_lint.rules.hotloop import code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step

# Calls that make a CPU tensor of their first argument: a batch wrapped in one is still the batch.
# Wrappers of an iterable whose items are (pairs of) the wrapped one's items.
_WRAPPERS = frozenset({"enumerate", "iter", "tqdm", "zip", "islice", "itertools.islice", "cycle"})
_DTYPES = frozenset(
    {
        "float",
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "half",
        "double",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "long",
        "uint8",
        "bool",
        "complex64",
    }
)
_DEPTH = 6


@dataclass(frozen=True)
class Feed:
    """Where a copied value comes from: the iterable of the loop (or ``next(...)``) that gives it."""

    iterable: cst.BaseExpression
    scope: Scope


class BlockingBatchCopy(Rule):
    code = "TNK403"
    name = "blocking-batch-copy"
    level = "note"
    opt_in = True
    needs_tinker = False
    summary = (
        "Copy loader batches to the GPU with `non_blocking=True` (and `pin_memory=True` on the "
        "DataLoader): a blocking copy waits for the previous step's work on every step"
    )
    message = "`{call}` copies a batch to the device, blocking, {in_step}"
    help = (
        "It runs {every_torch_step}: each copy waits for the previous step's work on the "
        "device: {remedy}{pin}"
    )
    why = """
`x.to(device)` from host memory is `cudaMemcpyAsync` followed by a stream synchronisation
("A guide on good usage of `non_blocking` and `pin_memory()`", PyTorch tutorials): at the top of
a step it waits for the previous step's optimizer and backward kernels to finish, so the CPU
cannot queue the next step while the GPU works. `x.to(device, non_blocking=True)` returns at once
(the tutorial measures it helpful pinned or not); `DataLoader(..., pin_memory=True)` pins the
batch in a background thread so that the copy also overlaps (metatrain PR #1273: +8.6 %
throughput, batch wait 1.8 -> 0.07 ms). The cost is small for big GPU-bound models and noticeable
for launch-bound or data-heavy loops, which is why this rule is opt-in, at level note.

Reported on every step of a torch training loop: `x.to(device)`, `x.to(device=...)`, `x.cuda()` or
`torch.as_tensor(x, device=...)` without `non_blocking=True`, where `x` is (a part of) what the
loop iterates (a DataLoader, a generator, the training loop's own items, `next(iterator)`),
followed through assignments, indexing and unpacking; the dict form
`{k: v.to(device) for k, v in batch.items()}` is one finding. The help says when the
DataLoader that feeds the loop (found in the same module) does not pass `pin_memory=True`.

Not reported: copies to the CPU (`.cpu()`, `.to("cpu")`: non-blocking there returns garbage until
the code synchronises), dtype-only `.to(torch.float16)`, device-to-device hops
(`labels.to(logits.device)`), copies already passing `non_blocking` (pinned or not), values that
do not come from the loop (an environment's observation, `model.to(device)`, setup before the
loop), copies fed to `generate(...)` (which synchronises every token anyway), eval-only loops and
work under a cadence guard.
"""
    fix_description = (
        "`x.to(device, non_blocking=True)` and `DataLoader(..., pin_memory=True)`. Do not call "
        "`.pin_memory()` yourself in the loop: pinning in the main thread can be twice as slow "
        "as the plain copy. `tinker-lint --fix` adds `non_blocking=True`; it is an unsafe fix when "
        "the loop writes the source in place after the copy (a preallocated staging tensor)."
    )
    autofix = Autofix(TITLE, plan_non_blocking)
    INVALID = (
        Example(
            """\
for inputs, labels in loader:
    inputs = inputs.to(device)
    loss = criterion(model(inputs), labels.to(device))
    loss.backward()
    optimizer.step()
""",
            expect=((2, 14), (3, 37)),
            fixed="""\
for inputs, labels in loader:
    inputs = inputs.to(device, non_blocking=True)
    loss = criterion(model(inputs), labels.to(device, non_blocking=True))
    loss.backward()
    optimizer.step()
""",
        ),
    )
    VALID = (
        Example(
            """\
for inputs, labels in loader:
    inputs = inputs.to(device, non_blocking=True)
    loss = criterion(model(inputs), labels.to(device, non_blocking=True))
    loss.backward()
    optimizer.step()
"""
        ),
    )

    prefilter = Needs(
        text=(words({"to", "cuda", "as_tensor"}), TORCH_STEP, TORCH_STEP_RECEIVER),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, source, step in calls_on_every_step(ctx, partial(copied_to_device, model)):
            if _feeds_generate(model, site) or _setup_of_a_run(model, step):
                continue
            feed = feed_of(model, source, site)
            if feed is None:
                continue
            node = site.node
            is_as_tensor = model.qualify(node.func, site.scope) == "torch.as_tensor"
            if is_as_tensor:
                remedy = "use `torch.as_tensor(x).to(device, non_blocking=True)`"
            else:
                remedy = "pass `non_blocking=True`"
            loader = _loader_of(model, feed)
            pin = ""
            if loader is not None and _lacks_pinning(loader):
                pin = (
                    f"; the `DataLoader` on line {ctx.line_of(loader)} does not pin its batches: "
                    "add `pin_memory=True` so that the copy can overlap"
                )
            plan = None
            if not is_as_tensor:
                plan = partial(plan_non_blocking, node, _written_after(model, source, site))
            yield self.finding(
                node,
                plan,
                call=code_of(model, node, 60),
                in_step=in_torch_step(ctx, step),
                every_torch_step=every_torch_step(ctx, step),
                remedy=remedy,
                pin=pin,
            )


# --- the copy ------------------------------------------------------------------------------------
def copied_to_device(model: SemanticModel, site: CallSite) -> cst.BaseExpression | None:
    """What ``site`` copies to a device other than the CPU without ``non_blocking``: the ``x`` of
    ``x.to(device)``, ``x.to(device=...)``, ``x.cuda()``, ``torch.as_tensor(x, device=...)``."""
    node = site.node
    if any(arg.star for arg in node.args) or has_keyword(node, "non_blocking"):
        return None  # ``non_blocking`` chosen already (or hidden in ``**kwargs``)
    func = node.func
    if model.qualify(func, site.scope) == "torch.as_tensor":
        destination = passed(node, "device")
        if node.args and destination is not None and _is_device(model, destination, site):
            return node.args[0].value
        return None
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method == "cuda":
            return func.value
        if method != "to" or not node.args:
            return None
        if any(_is_true(arg.value) for arg in node.args[1:] if arg.keyword is None):
            return None  # ``x.to(device, True)``: non_blocking, positionally
        destination = passed(node, "device")
        if destination is None:
            first = node.args[0]
            if first.keyword is not None:
                return None  # ``.to(dtype=...)``, ``.to(memory_format=...)``
            destination = first.value
        if _is_device(model, destination, site):
            return func.value
    return None


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _is_device(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """Whether ``expr`` names a device other than the CPU, as far as the module shows: not a
    dtype, not ``"cpu"`` (nor a name only ever bound to it), not the device of a tensor the step
    computed (``labels.to(logits.device)`` is a hop between devices)."""
    if model.tensors.is_cpu_device(expr, site.scope, with_index=True):
        return False  # ``"cpu"``, ``"cpu:0"``, ``torch.device("cpu")``, a name bound to one
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "dtype":
            return False
        qualified = model.qualify(expr, site.scope) or ""
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _DTYPES:
            return False
        # ``logits.device``: a tensor made in the loop (not ``model``/``args`` from before).
        if (
            expr.attr.value == "device"
            and isinstance(expr.value, cst.Name)
            and site.loops
            and model.dataflow.assigned_in(expr.value.value, site.loops[-1], site.scope)
        ):
            return False
    return not (isinstance(expr, cst.Name) and "dtype" in expr.value)


# --- where the copied value comes from ----------------------------------------------------------
def feed_of(
    model: SemanticModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0
) -> Feed | None:
    """The loop (or ``next(iterator)``) that ``expr`` is (a part of) an item of, followed back
    through assignments, indexing, unpacking, and one call of this module's functions; None when
    it comes from elsewhere (an environment, the model, setup) or was copied already."""
    if depth > _DEPTH:
        return None
    root = model.tensors.data_root(expr, site.scope)
    if isinstance(root, cst.Call):
        if isinstance(root.func, cst.Name) and root.func.value == "next" and root.args:
            return Feed(root.args[0].value, site.scope)
        return None  # a copy already, or what some call returned
    if not isinstance(root, cst.Name):
        return None
    name = root.value
    # A target of a loop around the copy (the innermost first): its items are the batches.
    for loop in reversed(site.loops):
        if name in loop_targets(loop):
            if _reassigned_before(model, name, loop, site):
                break
            return _loop_feed(model, loop, site, depth)
    bindings = site.scope.lookup(name)
    if not bindings or bindings[0].scope.function is not site.function:
        return None  # a module-level or enclosing function's value: made before the loop
    for binding in bindings:
        value = binding.expr
        if binding.kind not in (BindingKind.VALUE, BindingKind.UNPACK) or not isinstance(
            value, cst.BaseExpression
        ):
            continue
        if model.contains(value, site.node):
            continue  # ``x = x.to(device)``: its own assignment
        found = feed_of(model, value, site, depth + 1)
        if found is not None:
            return found
    function = site.function
    if function is not None and not any(
        b.kind in (BindingKind.VALUE, BindingKind.UNPACK) for b in bindings
    ):
        # A parameter: what the training loop passes for it (one level, as ``TorchSteps.step_of``).
        for caller in model.torch_steps.callers_of(function):
            passed = argument(function, caller, name)
            if passed is not None and caller.loops:
                found = feed_of(model, passed, caller, depth + 1)
                if found is not None:
                    return found
    return None


def _reassigned_before(model: SemanticModel, name: str, loop: LoopInfo, site: CallSite) -> bool:
    """``x = x.to(device)`` earlier in the loop body: the ``x`` copied later is that one."""
    line = model.line_of(site.node)
    for binding in site.scope.lookup(name):
        value = binding.expr
        if (
            binding.kind is BindingKind.VALUE
            and isinstance(value, cst.BaseExpression)
            and model.contains(loop.body, value)
            and not model.contains(value, site.node)
            and model.line_of(value) < line
        ):
            return True
    return False


def _loop_feed(model: SemanticModel, loop: LoopInfo, site: CallSite, depth: int) -> Feed | None:
    """The loop's iterable, when its items are batches: the training loop's own items (unless it
    counts, ``range``), a DataLoader's or a generator's, or the items of a batch (``.items()``)."""
    iterable = next(loop_iterables(loop), None)
    if iterable is None:
        return None
    base = _unwrapped(model, iterable, loop.scope)
    if isinstance(base, cst.Call) and dotted_name(base.func) == "range":
        return None
    if _loader_call(model, base, loop.scope) is not None or _is_generator(model, base, loop.scope):
        return Feed(iterable, loop.scope)
    if _on_device(model, base, loop.scope):
        return None  # ``for x in xs`` after ``xs = xs.to(device)``: moved before the loop
    if model.torch_steps.step_in(loop) is not None:
        return Feed(iterable, loop.scope)  # the training loop's own items
    # ``for k, v in batch.items()``: the parts of a batch.
    inner = feed_of(model, base, site, depth + 1)
    return inner


def _on_device(model: SemanticModel, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``xs.to(device)``, or a name every assignment of which is one: its items are on the
    device already."""
    root = model.tensors.data_root(expr, scope)
    if isinstance(root, cst.Call):
        return isinstance(root.func, cst.Attribute) and root.func.attr.value in ("to", "cuda")
    if not isinstance(root, cst.Name):
        return False
    values = [b.expr for b in scope.lookup(root.value) if b.kind is BindingKind.VALUE]
    return bool(values) and all(
        isinstance(value, cst.BaseExpression)
        and isinstance(moved := model.tensors.data_root(value, scope), cst.Call)
        and isinstance(moved.func, cst.Attribute)
        and moved.func.attr.value in ("to", "cuda")
        for value in values
    )


def _unwrapped(model: SemanticModel, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
    """``enumerate(tqdm(loader))`` -> ``loader``."""
    while (
        isinstance(expr, cst.Call)
        and expr.args
        and (dotted_name(expr.func) or "").rsplit(".", 1)[-1] in _WRAPPERS
    ):
        expr = expr.args[0].value
    return expr


def _loader_call(model: SemanticModel, expr: cst.BaseExpression, scope: Scope) -> cst.Call | None:
    """The ``DataLoader(...)`` call ``expr`` is (or a name bound once to it in this module)."""
    for _ in range(3):
        if isinstance(expr, cst.Call):
            name = model.qualify(expr.func, scope) or dotted_name(expr.func) or ""
            return expr if name.rsplit(".", 1)[-1] == "DataLoader" else None
        if not isinstance(expr, cst.Name):
            return None
        bindings = [b for b in scope.lookup(expr.value) if b.kind is BindingKind.VALUE]
        if len(bindings) != 1 or not isinstance(bindings[0].expr, cst.BaseExpression):
            return None
        expr = _unwrapped(model, bindings[0].expr, scope)
    return None


def _is_generator(model: SemanticModel, expr: cst.BaseExpression, scope: Scope) -> bool:
    """``batches()`` where ``batches`` is a generator function of this module."""
    if not isinstance(expr, cst.Call):
        return False
    function = model.resolve_function(expr.func, scope)
    if function is None:
        return False
    return any(
        isinstance(node, cst.Yield)
        for node in model.walk(function.node.body, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
    )


def _loader_of(model: SemanticModel, feed: Feed) -> cst.Call | None:
    iterable = feed.iterable
    if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "iter" and iterable.args:
        iterable = iterable.args[0].value
    base = _unwrapped(model, iterable, feed.scope)
    if isinstance(base, cst.Name):
        for binding in feed.scope.lookup(base.value):
            value = binding.expr
            # ``train_iter = iter(loader)``, then ``next(train_iter)``.
            if binding.kind is BindingKind.VALUE and isinstance(value, cst.Call):
                inner = _unwrapped(model, value, feed.scope)
                if inner is not value:
                    base = inner
    return _loader_call(model, base, feed.scope)


def _lacks_pinning(loader: cst.Call) -> bool:
    """No ``pin_memory=`` (or a literal False); a value or ``**kwargs`` may pin: say nothing."""
    if any(arg.star == "**" for arg in loader.args):
        return False
    pin = passed(loader, "pin_memory")
    return pin is None or (isinstance(pin, cst.Name) and pin.value == "False")


# --- the traps -----------------------------------------------------------------------------------
def _feeds_generate(model: SemanticModel, site: CallSite) -> bool:
    """The copy is an input of ``generate(...)`` (which synchronises every token anyway): inside
    its arguments, or assigned to a name the loop passes to it."""
    dataflow = model.dataflow
    if any(_is_generate(parent) for _, parent in dataflow.up_to_statement(site.node)):
        return True
    statement = dataflow.statement_of(site.node)
    if not isinstance(statement, cst.Assign) or not site.loops:
        return False
    targets = assigned_names(statement)
    for other in site.loops[-1].calls:
        if _is_generate(other.node) and any(
            isinstance(arg.value, cst.Name) and arg.value.value in targets
            for arg in other.node.args
        ):
            return True
    return False


def _is_generate(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "generate"
    )


def _setup_of_a_run(model: SemanticModel, step: TorchStep) -> bool:
    """The copy is in a function the loop calls that runs a training loop of its own, outside
    that loop: setup, once per run (``def run_test(case): net = DDP(case.model.cuda())`` then
    its own steps), not per step."""
    via = step.via
    if via is None:
        return False
    steps = model.torch_steps
    return any(loop.function is via and steps.step_in(loop) is not None for loop in model.loops)


def _written_after(model: SemanticModel, source: cst.BaseExpression, site: CallSite) -> str | None:
    """An in-place write of the copied value's root later in the loop (``x.copy_(...)``,
    ``x[...] = ...``), as source text: a reused buffer, which makes the fix unsafe."""
    root = model.tensors.data_root(source, site.scope)
    if not isinstance(root, cst.Name) or not site.loops:
        return None
    name = root.value
    line = model.line_of(site.node)
    loop = site.loops[0]
    for node in model.walk(loop.body, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        written: cst.CSTNode | None = None
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value.endswith("_")
            and not node.func.attr.value.startswith("_")
        ):
            if _names(model, node.func.value, site.scope) == name:
                written = node  # ``x.copy_(...)``, ``x.zero_()``
        elif isinstance(node, cst.Assign | cst.AugAssign):
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            )
            for target in targets:
                if isinstance(target, cst.Subscript) and _names(model, target, site.scope) == name:
                    written = node
        if written is not None and model.line_of(written) > line:
            return code_of(model, written)
    return None


def _names(model: SemanticModel, expr: cst.BaseExpression, scope: Scope) -> str | None:
    root = model.tensors.data_root(expr, scope)
    return root.value if isinstance(root, cst.Name) else None
