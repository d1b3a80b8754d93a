"""TNK404 python-loop-over-tensor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tinker_lint.model.query import (
    HOST_READS,
    BindingKind,
    CallSite,
    ElementAccess,
    LoopInfo,
    Scope,
    SemanticModel,
    Tensors,
    TorchStep,
    carries_a_value,
    dotted_name,
    element_subscripts,
    iterated_part,
    loop_iterables,
    loop_targets,
    small,
)
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import callee, code_of
from tinker_lint.rules.torchloop import every_torch_step, in_torch_step, loop_step

# Reads of a tensor on the host: inside a per-element loop, one sync (and one Python object) per
# element. TNK401 reports them in a step; TNK404 reports the loop, at the read (``supersedes``).
_SYNCS = HOST_READS | {"synchronize"}
# In-place updates of a parameter (an EMA, a manual SGD step): one kernel per parameter tensor.
_IN_PLACE = frozenset(
    {"mul_", "add_", "sub_", "div_", "lerp_", "copy_", "addcmul_", "addcdiv_", "zero_"}
)
_PARAMETERS = frozenset({"parameters", "named_parameters"})
# Where a loop runs in a DataLoader worker, not in the training process's step.
_WORKER_FUNCTIONS = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__", "__len__"})
_SIZES = frozenset({"size", "numel", "dim"})

_COST = (
    "one Python-level torch call per element (5-20 us each on the CPU, a kernel launch each on "
    "a GPU; 19-2,000x the vectorized form, docs/torch-costs.md)"
)
_FIX = (
    "vectorize over the batch dimension; build the tensor once from a list "
    "(`torch.tensor(list)`), or use `scatter`/`bincount`/`index_put_`"
)


@dataclass(frozen=True)
class _Found:
    """A finding's node, its kind (the rule's ``variants``) and their fields."""

    node: cst.CSTNode
    variant: str
    fields: dict[str, object]


class PythonLoopOverTensor(Rule):
    code = "TNK404"
    name = "python-loop-over-tensor"
    level = "warning"
    needs_tinker = False
    supersedes = ("TNK401",)
    summary = (
        "Vectorize tensor work: a Python loop that indexes or iterates a tensor element by "
        "element on every training step makes one torch call (and on a GPU one kernel) per element"
    )
    # What the loop does decides the message, the cost and the remedy.
    variants = {
        "indexes": (
            "Loop on line {line} indexes the tensor `{tensor}` per element {in_step}",
            "It runs {every_torch_step}: `{access}` is " + _COST + ": " + _FIX,
        ),
        "rows": (
            "Loop on line {line} goes through the tensor `{tensor}` one row at a time {in_step}",
            "It runs {every_torch_step}: " + _COST + ": " + _FIX,
        ),
        "host_read": (
            "`{call}` per element of the tensor `{tensor}` (loop on line {line}) {in_step}",
            "It runs {every_torch_step}: a host sync and a Python object per element (62-226x "
            "one `.tolist()` on the CPU, docs/torch-costs.md): read the tensor once with "
            "`.tolist()`, or vectorize",
        ),
        "log_softmax": (
            "Loop on line {line} computes `log_softmax` one row of `{tensor}` at a time {in_step}",
            "It runs {every_torch_step}: the Python loop over `{iterable}` makes one "
            "`log_softmax` per row: if it is there to save memory, keep it; otherwise gather the "
            "targets' logits and subtract `torch.logsumexp(logits, -1)` over the whole batch (a "
            "fused gather - logsumexp)",
        ),
        "parameters": (
            "Loop on line {line} updates one parameter tensor per iteration {in_step}",
            "It runs {every_torch_step}: `{call}` per parameter tensor is 2-3 kernel launches, "
            "hundreds per step for a large model: use `torch._foreach_mul_/_foreach_add_` (or "
            "`torch._foreach_lerp_`)",
        ),
    }
    message, help = variants["indexes"]
    why = """
Each Python-level torch operation costs microseconds of argument parsing and dispatch with the GIL
held (PyTorch's bindings release the GIL only around the kernel itself), and on a GPU one kernel
launch. A loop that indexes a tensor element by element, or iterates its first dimension, does
that once per element on every step. Measured on the CPU (`docs/torch-costs.md`, per element):
`if w[t] > 0` over `range(len(w))` 10.7-22.8 us, 330-930x `torch.nonzero(w > 0)`; `[x.item() for x
in w]` 2.0-6.5 us, 62-226x `w.tolist()`; `t[i] = v` per value 5.7-17.9 us, 19-66x one
`torch.tensor(values)`; `t[i] = 0` per position 270-2,000x `t[positions] = 0`. PyTorch's profiler
has the same anti-pattern (`ForLoopIndexingPattern`, ten or more repeated `aten::select`). A loop
over a batch's rows costs about 20 us per row and per call in its body (`F.cross_entropy` per row
10-16x the flattened call, a per-row `log_softmax` + `gather` 14-18x the batched one); a
per-parameter EMA 4-7x `torch._foreach_mul_` + `_foreach_add_`.

Reported on every step of a torch training loop (a loop whose body calls `loss.backward()` or
`optimizer.step()`, a function it calls, or a per-step hook such as `training_step`):

- a loop over indices that reads or writes a tensor element by element (`for i in
  range(len(t)): t[i] = ...`, `t[i, j]`), its bound taken from the data (`len(t)`, `t.size(0)`,
  `enumerate(xs)`);
- a loop over a tensor's first dimension (`for row in t:`, `for a, b in zip(t1, t2):`);
- at the read, when the loop reads each element on the host (`x.item()`): that is a host sync per
  element, reported here instead of TNK401;
- a per-row `log_softmax` loop, with its own wording: it is often there to save memory;
- with `--preview` only: a loop over `model.parameters()` that updates each parameter in place
  (`p.mul_(d).add_(q, alpha=1 - d)`, an EMA): use `torch._foreach_*`.

What is a tensor is decided by dataflow in the module: a torch function's result or a method of
one, a `.to()`/`.cuda()` result, a model's output (a callee the module calls `.parameters()` or
`.train()` on), the loss, an item of a `DataLoader` built here with the default collate.

Not reported: recurrences, where an iteration reads what an earlier one wrote (GAE's `adv[t + 1]`,
returns `R = r + gamma * R`, an RNN unroll `h = cell(x[t], h)`, autoregressive decoding); a loop
bounded by a small literal or by configuration (`range(4)`, `range(self.num_heads)`); per-slice
loops whose ops are batched (`x[:, i]`, micro-batches); loops in `Dataset.__getitem__` or a
`collate_fn` (DataLoader workers); rows handed as they are to code that is not torch, once per
example (`tokenizer.decode(ids)`, `reward_fn(completions[i])`, `row.tolist()`); CPU-side preparation of tensors made on the CPU when the step
never syncs (it overlaps the GPU's work); loops that already call `torch._foreach_*`; work in a
loop that submits Tinker requests (TNK203 reports it there).
"""
    fix_description = (
        "Vectorize over the batch dimension: a mask or an index tensor (`t[positions] = 0`, "
        "`torch.nonzero(w > 0)`), one op over the whole tensor (`logits.log_softmax(-1)`), "
        "`scatter`/`bincount`/`index_put_`; or build the tensor once from a Python list "
        "(`torch.tensor(values)`); read values on the host once with `.tolist()`. For parameter "
        "updates, `torch._foreach_mul_`/`_foreach_add_`/`_foreach_lerp_` over the parameter list."
    )
    INVALID = (
        Example(
            """\
import torch

for batch in loader:
    logits = model(batch["input_ids"])
    mask = torch.zeros_like(batch["labels"], device="cuda")
    for i in range(len(batch["labels"])):
        mask[i] = batch["labels"][i] != -100
    loss = (model.loss(logits) * mask).mean()
    loss.backward()
    optimizer.step()
""",
            expect=((6, 14),),
        ),
    )
    VALID = (
        Example(
            """\
import torch

for batch in loader:
    logits = model(batch["input_ids"])
    mask = batch["labels"] != -100
    loss = (model.loss(logits) * mask).mean()
    loss.backward()
    optimizer.step()
"""
        ),
    )

    prefilter = Needs(text=(TORCH_STEP, TORCH_STEP_RECEIVER), tree=(lambda s: s.torch_step,))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        if not model.torch_steps.may_step:
            return  # no loop runs on every torch step (``loop_step`` below)
        tensors = model.tensors
        reported: set[LoopInfo] = set()
        lines: set[int] = set()
        collate: set[str] | None = None
        for loop in model.loops:
            if not isinstance(loop.node, cst.For | cst.ListComp | cst.GeneratorExp):
                continue
            if _inside(loop, reported) or _steps(model, loop):
                continue
            if collate is None:
                collate = _collate_functions(model)
            if _in_worker(loop, collate):
                continue
            step = loop_step(model, loop)
            if step is None:
                continue  # not on every torch step
            found = _judge(ctx, tensors, loop, step)
            if found is None or model.steps.of_loop(loop) is not None:
                continue  # nothing, or in a loop that submits Tinker requests (TNK203's)
            line = ctx.line_of(found.node)
            if line in lines:
                continue  # one finding per line
            lines.add(line)
            reported.add(loop)
            yield self.finding(
                found.node,
                None,
                found.variant,
                in_step=in_torch_step(ctx, step),
                every_torch_step=every_torch_step(ctx, step),
                **found.fields,
            )


def _judge(ctx: Context, tensors: Tensors, loop: LoopInfo, step: TorchStep) -> _Found | None:
    model = ctx.model
    line = ctx.line_of(loop.node)
    iterable = next(loop_iterables(loop))
    if small(iterable):
        return None
    parameters = _parameter_updates(model, loop)
    if parameters is not None:
        if not ctx.preview:
            return None
        return _Found(iterable, "parameters", {"line": line, "call": callee(model, parameters)})
    if _calls_foreach(model, loop):
        return None
    scope = loop.scope
    iterated = [
        part
        for part in _iterated_values(iterable)
        if not _size_of(part)
        and tensors.is_tensor(part, scope)
        and not tensors.direct_model_output(part, scope)
        and not tensors.pieces(part, scope)
    ]
    accesses: list[ElementAccess] = []
    if not iterated:
        bound = _bound_by(model, tensors, loop, iterable)
        if bound is None:
            return None
        accesses = [
            a
            for a in element_subscripts(model, loop, lambda v: tensors.is_tensor(v, scope))
            if not any(_per_slice(e.slice) for e in a.node.slice)
        ]
        # ``tokenizer.decode(ids[i])``, ``reward_fn(completions[i])``: the row goes to code that
        # is not torch, once per example; that consumer converts it, not a torch call per element.
        accesses = [
            a for a in accesses if a.stored or not _leaves_torch(model, tensors, a.node, scope)
        ]
        if bound == "collection" and not any(a.stored for a in accesses):
            # Over a Python collection, only writes are per-element tensor work for sure
            # (``t[i] = v`` per value); a read ``xs[i]`` may be of a list of tensors.
            return None
        if not accesses:
            return None
    if iterated and _items_leave_torch(model, tensors, loop):
        return None  # ``for ids in completion_ids: texts.append(tokenizer.decode(ids))``
    if carries_a_value(model, loop, accesses):
        return None  # a recurrence: each iteration needs the one before
    values = [*iterated, *(a.node.value for a in accesses)]
    on_cpu = all(tensors.on_cpu(v, scope) for v in values)
    if on_cpu and not _step_syncs(model, step, loop):
        return None  # CPU-side preparation that overlaps the GPU's work
    if on_cpu and not any(a.stored for a in accesses):
        # Reading CPU tensors (``for row, mask in zip(ids.cpu(), masks.cpu())``) after the
        # step's one copy to the host: no sync and no kernel per row, Python once per example.
        return None
    shown = values[0]
    tensor = code_of(model, shown)
    read = _host_read(model, loop)
    if read is not None and _whole_row(read):
        # ``[ids[i].tolist() for i in range(ids.shape[0])]``: one conversion per row, once per
        # example (TNK203's vectorized form), often of what must leave the device anyway (token
        # lists for reward functions after ``generate``): not a sync per element.
        return None
    if read is not None and not on_cpu:
        fields = {"call": callee(model, read), "tensor": tensor, "line": line}
        return _Found(read, "host_read", fields)
    if _calls_log_softmax(model, loop):
        fields = {"line": line, "tensor": tensor, "iterable": code_of(model, iterable)}
        return _Found(iterable, "log_softmax", fields)
    if iterated:
        return _Found(iterable, "rows", {"line": line, "tensor": tensor})
    # The access itself is the evidence: the help shows it.
    fields = {"line": line, "tensor": tensor, "access": code_of(model, accesses[0].node)}
    return _Found(iterable, "indexes", fields)


def _leaves_torch(
    model: SemanticModel, tensors: Tensors, node: cst.BaseExpression, scope: Scope
) -> bool:
    """Whether ``node`` is passed as it is to a call that is not torch (``tokenizer.decode(row)``,
    ``texts.append(row)``): not a torch function (``F.cross_entropy(row, t)``) nor a method of a
    tensor. No torch call runs on it here."""
    parent = model.parent(node)
    if not isinstance(parent, cst.Arg) or parent.value is not node:
        return False
    call = model.parent(parent)
    if not isinstance(call, cst.Call):
        return False
    if model.array_function(model.qualify(call.func, scope)) is not None:
        return False
    func = call.func
    return not (isinstance(func, cst.Attribute) and tensors.is_tensor(func.value, scope))


def _items_leave_torch(model: SemanticModel, tensors: Tensors, loop: LoopInfo) -> bool:
    """Whether every use of the loop's items in its body hands them to code that is not torch
    (``tokenizer.decode(ids)``)."""
    targets = loop_targets(loop, every_name=True)
    bound: set[int] = set()
    node = loop.node
    if isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            bound.update(id(n) for n in model.walk(clause.target))
            clause = clause.inner_for_in
    uses: list[cst.Name] = []
    for current in model.walk(loop.body):
        if (
            not isinstance(current, cst.Name)
            or current.value not in targets
            or id(current) in bound
        ):
            continue
        parent = model.parent(current)
        if isinstance(parent, cst.Attribute) and parent.attr is current:
            continue  # ``x.ids``: an attribute's name, not the item
        uses.append(current)
    return bool(uses) and all(_leaves_torch(model, tensors, use, loop.scope) for use in uses)


def _per_slice(index: cst.BaseSlice) -> bool:
    """``x[:, i]``, ``mask[..., i]``: each iteration works on a whole slice (a head, a column of
    every row), batched; not one element."""
    return isinstance(index, cst.Slice) or (
        isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis)
    )


def _inside(loop: LoopInfo, reported: set[LoopInfo]) -> bool:
    parent = loop.parent
    while parent is not None:
        if parent in reported:
            return True
        parent = parent.parent
    return False


def _steps(model: SemanticModel, loop: LoopInfo) -> bool:
    """The loop makes a training step itself (it is a hot loop, or an epoch loop around one)."""
    steps = model.torch_steps
    for site in loop.calls:
        if steps.is_step_call(site):
            return True
        target = model.resolve_function(site.node.func, site.scope)
        if target is not None and target in steps.stepping_functions:
            return True
    return False


def _in_worker(loop: LoopInfo, collate: set[str]) -> bool:
    """In a ``Dataset``'s ``__getitem__``/``__iter__`` or a collate function (by name, or passed
    as ``collate_fn=``: ``collate``): DataLoader workers run it, beside the training process."""
    function = loop.function
    while function is not None:
        if function.name in _WORKER_FUNCTIONS or function.name in collate:
            return True
        lowered = function.name.lower()
        if lowered.startswith("collate") or lowered.endswith("collate"):
            return True  # ``collate_batch``, ``pad_collate``
        function = function.parent
    return False


def _collate_functions(model: SemanticModel) -> set[str]:
    """Names passed as ``collate_fn=`` anywhere in the module."""
    found: set[str] = set()
    for site in model.calls:
        for arg in site.node.args:
            if arg.keyword is not None and arg.keyword.value == "collate_fn":
                name = dotted_name(arg.value)
                if name is not None:
                    found.add(name.rsplit(".", 1)[-1])
    return found


def _iterated_values(iterable: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a loop goes over: ``t`` for ``t``/``enumerate(t)``; ``t1, t2`` for ``zip(t1, t2)``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        name = iterable.func.value
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if name == "zip":
            return [p for a in args for p in _iterated_values(a)]
        if name in ("enumerate", "reversed", "iter", "list", "tuple") and args:
            return _iterated_values(args[0])
        if name == "range":
            return []
    part = iterated_part(iterable, None)
    return [part] if part is not None else []


def _size_of(expr: cst.BaseExpression) -> bool:
    """``t.shape``, ``t.size()``: iterating those goes over dimensions, not elements."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _SIZES
    )


def _bound_by(
    model: SemanticModel, tensors: Tensors, loop: LoopInfo, iterable: cst.BaseExpression
) -> str | None:
    """Where an index loop's bound comes from: "tensor" for a tensor's size (``range(len(t))``,
    ``range(t.size(0))``, ``range(n)`` after ``n = t.shape[0]`` or ``B, T = t.shape``);
    "collection" for the length of another collection (``enumerate(rows)``,
    ``range(len(rows))``); None for a literal, a parameter or a configuration attribute
    (``range(self.num_heads)``), which may be a handful."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        name = iterable.func.value
        args = [a.value for a in iterable.args if a.keyword is None]
        if name in ("enumerate", "zip"):
            return "collection"
        if name == "reversed" and args:
            return _bound_by(model, tensors, loop, args[0])
        if name == "range" and len(args) == 3:
            return None  # ``range(0, n, chunk)``: micro-batches, each a slice of the batch
        if name == "range" and args:
            bound = args[1] if len(args) > 1 else args[0]
            return _sized_by(tensors, bound, loop, 0)
    return None


def _sized_by(
    tensors: Tensors, bound: cst.BaseExpression, loop: LoopInfo, depth: int
) -> str | None:
    if depth > 3:
        return None
    if isinstance(bound, cst.BinaryOperation):
        left = _sized_by(tensors, bound.left, loop, depth + 1)
        return left or _sized_by(tensors, bound.right, loop, depth + 1)
    if isinstance(bound, cst.Call):
        func = bound.func
        if isinstance(func, cst.Name) and func.value == "len" and bound.args:
            return "tensor" if tensors.is_tensor(bound.args[0].value, loop.scope) else "collection"
        if isinstance(func, cst.Attribute) and func.attr.value in _SIZES:
            return "tensor"
        return None
    if (
        isinstance(bound, cst.Subscript)
        and isinstance(bound.value, cst.Attribute)
        and bound.value.attr.value == "shape"
    ):
        return "tensor"
    if isinstance(bound, cst.Name):
        for binding in loop.scope.lookup(bound.value):
            value = binding.expr
            if not isinstance(value, cst.BaseExpression) or binding.scope.function is None:
                continue
            if (
                binding.kind is BindingKind.UNPACK
                and isinstance(value, cst.Attribute)
                and value.attr.value == "shape"
            ):
                return "tensor"  # ``B, T = t.shape``
            if binding.kind is BindingKind.VALUE:
                found = _sized_by(tensors, value, loop, depth + 1)
                if found is not None:
                    return found
    return None


def _parameter_updates(model: SemanticModel, loop: LoopInfo) -> cst.Call | None:
    """The in-place update of a loop over a module's parameters (``for p in
    model.parameters(): p.mul_(d)``), if that is what the loop is."""
    iterable = next(loop_iterables(loop))
    if not _over_parameters(iterable):
        return None
    targets = loop_targets(loop, every_name=True)
    for site in loop.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _IN_PLACE:
            continue
        root = func.value
        while isinstance(root, cst.Attribute | cst.Call | cst.Subscript):
            root = root.func if isinstance(root, cst.Call) else root.value
        if isinstance(root, cst.Name) and root.value in targets:
            return site.node
    return None


def _over_parameters(iterable: cst.BaseExpression) -> bool:
    if isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PARAMETERS:
            return True
        if isinstance(func, cst.Name) and func.value in ("zip", "enumerate", "list"):
            return any(_over_parameters(a.value) for a in iterable.args)
    return False


def _calls_foreach(model: SemanticModel, loop: LoopInfo) -> bool:
    for site in loop.calls:
        qualified = model.qualify(site.node.func, site.scope) or ""
        if qualified.startswith("torch._foreach_") or any(
            arg.keyword is not None
            and arg.keyword.value == "foreach"
            and isinstance(arg.value, cst.Name)
            and arg.value.value == "True"
            for arg in site.node.args
        ):
            return True
    return False


def _calls_log_softmax(model: SemanticModel, loop: LoopInfo) -> bool:
    for site in loop.calls:
        func = site.node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if name == "log_softmax":
            return True
    return False


def _host_read(model: SemanticModel, loop: LoopInfo) -> cst.Call | None:
    """The first ``.item()``/``.tolist()``/``.cpu()``/``.numpy()`` in the loop's body."""
    for site in loop.calls:
        func = site.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in HOST_READS
            and not site.node.args
            and model.contains(loop.body, site.node)
        ):
            return site.node
    return None


def _whole_row(read: cst.Call) -> bool:
    """``row.tolist()``/``.cpu()``/``.numpy()``: a whole row converted at once (``.item()`` is
    one element)."""
    func = read.func
    return isinstance(func, cst.Attribute) and func.attr.value != "item"


def _step_syncs(model: SemanticModel, step: TorchStep, loop: LoopInfo) -> bool:
    """Whether the step reads a tensor on the host anywhere but in ``loop``: then the CPU work
    cannot run ahead of the GPU's."""
    calls: list[CallSite] = []
    if step.loop is not None:
        calls.extend(step.loop.calls)
    if step.hook is not None:
        calls.extend(step.hook.calls)
    if step.via is not None:
        calls.extend(step.via.calls)
    for site in calls:
        func = site.node.func
        if model.contains(loop.node, site.node):
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in _SYNCS and not site.node.args:
            return True
    return False
