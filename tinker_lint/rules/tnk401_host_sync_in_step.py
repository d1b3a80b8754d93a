"""TNK401 host-sync-in-step."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import libcst as cst

from tinker_lint.model.analyses.dataflow import assigned_names, chain_root
from tinker_lint.model.analyses.torch_steps import TorchStep
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import CPU_TENSOR_MAKERS
from tinker_lint.model.facts.scopes import FunctionInfo
from tinker_lint.model.query import BindingKind, CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import callee, code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step

# ``HostSyncInStep._finding``: a finding at a node, from the step, what is read, why it waits and
# the fix.
_MakeFinding = Callable[[Context, cst.CSTNode, TorchStep, str, str, str], Finding]

# Methods that copy a tensor to the host, so the CPU waits for the GPU to finish everything queued.
_TO_HOST = frozenset({"item", "tolist", "cpu", "numpy"})
_CONVERSIONS = frozenset({"float", "int", "bool"})
# Values that are on the CPU already: ``.cpu()``/``.numpy()`` of them is a no-op (spec trap 4).
_TIMERS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time"})
_GUARDS = frozenset({"math.isnan", "math.isinf", "math.isfinite", "numpy.isnan", "numpy.isfinite"})

_COST = "it waits for the GPU to finish and stops the CPU running ahead (4-18% of step time in public fixes)"


class HostSyncInStep(Rule):
    code = "TNK401"
    name = "host-sync-in-step"
    level = "warning"
    needs_tinker = False
    summary = (
        "Read tensors on the host on a cadence: `.item()`, `.cpu()`, `.tolist()` or "
        "`torch.cuda.synchronize()` on every training step make the CPU wait for the GPU"
    )
    # ``what``: "`loss.item()`"; ``cost``: why the read waits; ``how``: the fix for its use
    # (logging, a guard, timing).
    message = "{what} waits for the GPU {in_step}"
    help = "It runs {every_torch_step}: {cost}: {how}"
    why = """
A CUDA kernel launch returns at once; the CPU runs ahead and queues the next step's work while the
GPU computes. Reading a value on the host (`.item()`, `.tolist()`, `.cpu()`, `.numpy()`,
`float(loss)`, `torch.cuda.synchronize()`) drains that queue: the CPU waits for every kernel
queued so far, then the GPU waits for the CPU to queue the next ones. The PyTorch tuning guide and
Lightning's "Things to Avoid" say to keep such reads off the per-step path; public fixes measured
4% to 18% of step time, 40-50 ms per step in torchtune's profile, worse when the read comes before
`backward()` is queued.

Reported on every step of a torch training loop (a loop whose body calls `loss.backward()`,
`accelerator.backward(...)`, `optimizer.step()`, `scaler.step(...)`, directly or through a function
of the module; or the body of a per-step hook such as `training_step` or `compute_loss`), and in
the module's functions those call, up to three calls away (an override counts where the base
class's loop calls the method), outside a cadence guard (`if step % log_every == 0:`, `if not
should_log(step): return`, `if step == num_steps - 1:`). A guard that holds the optimizer step
itself (`if (idx + 1) % grad_accum == 0: optimizer.step()`) is the step, not a cadence.

- a value that only reaches logging: accumulate on the device and read it on the log step;
- a guard (`if`, `assert`, `math.isnan`, a value later checked with `math.isfinite`): check on
  the device, read it every N steps;
- a timing `synchronize()` (also through a module-level alias such as `synchronize =
  torch.cuda.synchronize if cuda else lambda: None`): use CUDA events, or synchronize only on the
  log step; a `synchronize()` with no timing: remove it;
- an f-string that formats the loss or a `clip_grad_norm_` result (`f"{loss:.4f}"`): formatting
  a tensor reads it on the host.

With preview on, boolean-mask indexing (`x[labels != -100]`), `nonzero()` and one-argument
`torch.where` too: the result's size is decided on the GPU, but such code is often needed.

Not reported: eval-only code (`@torch.no_grad` functions, a `with torch.no_grad():` region around
a loop without a backward, `evaluate`-style functions; a `no_grad` block inside the step runs every
step and is reported), tensors already on the CPU (`torch.from_numpy`, `torch.tensor(...)`
without `device=`, `torch.load(..., map_location="cpu")`, tokenizer outputs, `.cpu()` results,
numpy), values the program needs on the host (`env.step(action.cpu()...)`, an index or slice
bound, a value branched on or iterated later, a helper's result its caller slices with, a
`synchronize()` after a `non_blocking` copy to the host), outputs of `generate(...)`, also
through a helper of the module (which synchronises every token anyway), error paths (a branch
ending in `raise`, `except` handlers), the outer loop of an epoch or update (once per many
steps), and `len(t)`, `t.shape`, `t.detach()`, which do not sync.
"""
    fix_description = (
        "Accumulate on the device (`running += loss.detach()`) and call `.item()` under the "
        "logging cadence (`if step % log_every == 0:`); check NaNs with `torch.isfinite` on the "
        "device and read the flag every N steps; time with `torch.cuda.Event(enable_timing=True)`."
    )
    INVALID = (
        Example(
            """\
for step, batch in enumerate(loader):
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
""",
            expect=((6, 19),),
        ),
    )
    VALID = (
        Example(
            """\
running = 0.0
for step, batch in enumerate(loader):
    loss = model(batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    running += loss.detach()
    if step % log_every == 0:
        print((running / log_every).item())
        running = 0.0
"""
        ),
    )

    # A step, and a read on the host. (An f-string of the loss or of a ``clip_grad_norm_`` result,
    # and preview's mask reads, need no word of their own: any word of a step admits the file.)
    prefilter = Needs(
        text=(
            TORCH_STEP,
            TORCH_STEP_RECEIVER,
            words({*_TO_HOST, *_CONVERSIONS, "synchronize"}) | TORCH_STEP,
        ),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, what, step in calls_on_every_step(ctx, partial(host_read, model)):
            if not _reported(model, site):
                continue
            yield self._finding(ctx, site.node, step, what, _COST, _how(model, site))
        yield from _formatted_tensors(ctx, self._finding)
        if ctx.preview:
            yield from _mask_reads(ctx, self._finding)

    def _finding(
        self, ctx: Context, node: cst.CSTNode, step: TorchStep, what: str, cost: str, how: str
    ) -> Finding:
        return self.finding(
            node,
            what=what,
            in_step=in_torch_step(ctx, step),
            every_torch_step=every_torch_step(ctx, step),
            cost=cost,
            how=how,
        )


def _mask_reads(ctx: Context, finding: _MakeFinding) -> Iterator[Finding]:
    """Preview: ``x[mask]`` (a boolean mask: a comparison, ``.bool()``, or a name bound to one),
    ``x.nonzero()``, ``torch.nonzero(x)``, one-argument ``torch.where(cond)``: the size of the
    result is decided on the GPU, so the host waits for it. Often needed, hence preview only."""
    model = ctx.model
    steps = model.torch_steps
    seen: set[int] = set()
    for site in model.calls:
        node = site.node
        func = node.func
        qualified = model.qualify(func, site.scope) or ""
        found: cst.BaseExpression | None = None
        what = ""
        if (isinstance(func, cst.Attribute) and func.attr.value == "nonzero" and not qualified) or (
            qualified == "torch.nonzero"
        ):
            found, what = node, f"`{callee(model, node)}`"
        elif qualified == "torch.where" and len(node.args) == 1:
            found, what = node, "`torch.where(cond)` with one argument"
        elif isinstance(func, cst.Attribute):
            subscript = _masked(model, func.value, site)
            if subscript is not None:
                found, what = subscript, f"`{code_of(model, subscript)}` (boolean-mask indexing)"
        if (
            found is None
            or id(found) in seen
            or _on_cpu(model, chain_root(found, attributes=False), site)
        ):
            continue
        if not _reported(model, site):
            continue  # ``int(torch.nonzero(m)[0].item())`` as an offset the code iterates
        step = steps.step_of(site)
        if step is None:
            continue
        seen.add(id(found))
        yield finding(
            ctx,
            found,
            step,
            what,
            f"the result's size is decided on the GPU, so {_COST}",
            "keep the shape fixed (`torch.where(mask, x, 0)`, `(x * mask).sum() / mask.sum()`) "
            "where the code allows it",
        )


def _masked(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> cst.Subscript | None:
    """``x[mask]`` in a receiver chain (``x[mask].mean()``), when the index is a boolean mask."""
    while True:
        if isinstance(expr, cst.Subscript):
            index = expr.slice[0].slice if len(expr.slice) == 1 else None
            if isinstance(index, cst.Index) and _is_mask(model, index.value, site, 0):
                return expr
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return None


def _is_mask(model: SemanticModel, expr: cst.BaseExpression, site: CallSite, depth: int) -> bool:
    if isinstance(expr, cst.Comparison):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value == "bool" and not expr.args
    if isinstance(expr, cst.Name) and depth < 2:
        bindings = site.scope.lookup(expr.value)
        return bool(bindings) and all(
            b.kind is BindingKind.VALUE
            and isinstance(b.expr, cst.BaseExpression)
            and _is_mask(model, b.expr, site, depth + 1)
            for b in bindings
        )
    return False


def _formatted_tensors(ctx: Context, finding: _MakeFinding) -> Iterator[Finding]:
    """``print(f"loss {loss:.4f}")``: formatting a tensor reads it on the host (``__format__``
    calls ``.item()``). Only for the tensors the step makes for sure (the one ``.backward()`` is
    called on, a ``clip_grad_norm_`` result), in an f-string passed to a call on every step."""
    model = ctx.model
    steps = model.torch_steps
    if not steps.may_step:
        return  # no place of the module runs on a torch step (``step_of`` says None to all)
    for site in model.calls:
        for arg in site.node.args:
            if not isinstance(arg.value, cst.FormattedString):
                continue
            for part in arg.value.parts:
                if not isinstance(part, cst.FormattedStringExpression):
                    continue
                name = dotted_name(part.expression)
                if name is None or not _step_tensor(model, part.expression, site):
                    continue
                step = steps.step_of(site)
                if step is None:
                    continue
                yield finding(
                    ctx,
                    part,
                    step,
                    f"`{{{name}}}` in an f-string",
                    f"formatting a tensor reads it on the host, and {_COST}",
                    f"format `{name}.item()` on the log step only (`if step % log_every == 0:`), "
                    "or accumulate on the device",
                )


def _step_tensor(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """The loss ``.backward()`` is called on in this function, or a ``clip_grad_norm_`` result
    bound in it."""
    if _is_loss(model, expr, site):
        return True
    if not isinstance(expr, cst.Name):
        return False
    for binding in site.scope.lookup(expr.value):
        value = binding.expr
        if binding.kind is BindingKind.VALUE and isinstance(value, cst.Call):
            qualified = model.qualify(value.func, site.scope) or ""
            if qualified.endswith("clip_grad_norm_"):
                return True
    return False


def host_read(model: SemanticModel, site: CallSite) -> str | None:
    """ "`loss.item()`" if ``site`` reads a tensor on the host (or synchronises), else None."""
    node = site.node
    func = node.func
    # Asked of every call: exact types (``isinstance`` on libcst's classes is slow).
    if type(func) is cst.Attribute:
        method = func.attr.value
        if method in _TO_HOST and not node.args:
            if _inner_read(func.value) or _on_cpu(model, func.value, site):
                return None  # ``x.cpu().numpy()``: the first read is the one reported
            return f"`{callee(model, node)}`"
        if method == "to" and _to_cpu(node):
            if _on_cpu(model, func.value, site):
                return None
            return f"`{callee(model, node)}`"
        if method == "synchronize" and not node.args:
            qualified = model.qualify(func, site.scope) or ""
            if qualified.startswith("torch.") or isinstance(func.value, cst.Call):
                return f"`{code_of(model, node)}`"
        return None
    if type(func) is not cst.Name:
        return None
    if (
        func.value in _CONVERSIONS
        and len(node.args) == 1
        and _is_loss(model, node.args[0].value, site)
    ):
        return f"`{code_of(model, node)}`"
    if not node.args and _sync_alias(model, func):
        return f"`{code_of(model, node)}`"
    return None


def _sync_alias(model: SemanticModel, func: cst.Name) -> bool:
    """``synchronize()`` after ``synchronize = torch.cuda.synchronize if cuda else lambda: None``
    at module level: every binding of the name is a torch ``synchronize`` or a no-op lambda."""
    bindings = model.module_scope.bindings.get(func.value, [])
    found = False
    for binding in bindings:
        value = binding.expr
        if binding.kind is not BindingKind.VALUE or not isinstance(value, cst.BaseExpression):
            return False
        branches = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        for branch in branches:
            if isinstance(branch, cst.Lambda):
                continue
            qualified = model.qualify(branch, model.module_scope) or ""
            if not (qualified.startswith("torch.") and qualified.endswith(".synchronize")):
                return False
            found = True
    return found


def _inner_read(expr: cst.BaseExpression) -> bool:
    """``x.cpu()`` / ``x.detach().cpu()``: the value is on the host already."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in _TO_HOST or expr.func.attr.value == "to":
            return True
        expr = expr.func.value
    return False


def _to_cpu(call: cst.Call) -> bool:
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu":
            return arg.keyword is None or arg.keyword.value == "device"
    return False


def _on_cpu(model: SemanticModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """Made on the CPU in this function: ``torch.from_numpy``, ``torch.tensor`` without
    ``device=``, ``torch.load(map_location="cpu")``, numpy, a tokenizer's or processor's output
    (``return_tensors="pt"``), a ``.cpu()``/``.numpy()`` result, or what ``generate`` returned
    (which synchronised every token already), directly or through a function of the module;
    followed back through a few assignments and loop targets."""
    root = chain_root(expr, attributes=False)
    if not isinstance(root, cst.Name) or depth > 3:
        return False
    for binding in site.scope.lookup(root.value):
        value = binding.expr
        if binding.kind not in _FOLLOWED or not isinstance(value, cst.BaseExpression):
            continue
        if binding.kind is BindingKind.ITER_UNPACK:
            value = _zipped(value, binding.index)  # ``for row, mask in zip(ids_cpu, masks)``
            if value is None:
                continue
        if isinstance(chain_root(value, attributes=False), cst.Name) and _on_cpu(
            model, value, site, depth + 1
        ):
            return True  # ``completion_ids = out[:, n:]`` after ``out = model.generate(...)``
        if _host_result(value):
            return True  # ``ids = t.cpu()``: reading ``ids`` later costs nothing
        value = _root_call(value)
        if not isinstance(value, cst.Call):
            continue
        if _made_on_cpu(model, value, site):
            return True
    return False


# Bindings followed back to where a value was made: ``x = ...``, ``a, b = ...``, ``for x in ...``.
_FOLLOWED = frozenset(
    {BindingKind.VALUE, BindingKind.UNPACK, BindingKind.ITER, BindingKind.ITER_UNPACK}
)


def _zipped(iterable: cst.BaseExpression, index: int) -> cst.BaseExpression | None:
    """What position ``index`` of ``zip(a, b)`` / ``enumerate(a)`` iterates over."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if iterable.func.value == "zip" and index < len(args):
            return args[index]
        if iterable.func.value == "enumerate" and index == 1 and args:
            return args[0]
    return None


def _host_result(value: cst.BaseExpression) -> bool:
    """``t.cpu()``, ``t.detach().cpu().float()``, ``t.numpy()``, ``t.to("cpu")``: on the host."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        if method in ("cpu", "numpy", "tolist") or (method == "to" and _to_cpu(value)):
            return True
        value = value.func.value
    return False


def _made_on_cpu(model: SemanticModel, call: cst.Call, site: CallSite) -> bool:
    qualified = model.qualify(call.func, site.scope) or ""
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if "device" in keywords:
        return False
    if qualified == "torch.load":
        location = keywords.get("map_location")
        return isinstance(location, cst.SimpleString) and location.evaluated_value == "cpu"
    if qualified in CPU_TENSOR_MAKERS or qualified.startswith("numpy."):
        return True
    if "return_tensors" in keywords:
        return True  # a tokenizer's or processor's tensors are made on the CPU
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "generate":
        return True
    target = model.resolve_function(call.func, site.scope)
    return target is not None and target in _generating(model)


def _generating(model: SemanticModel) -> dict[FunctionInfo, CallSite]:
    """Functions of the module that call ``generate`` (themselves or through another): what they
    return came out of sampling, which synchronised every token (``self._generate(model, ...)``)."""
    return model.torch_steps.generating_functions


def _root_call(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.tensor(x).float().view(-1)`` -> ``torch.tensor(x)``."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and isinstance(expr.func.value, cst.Call)
    ):
        expr = expr.func.value
    return expr


def _is_loss(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """The value ``.backward()`` is called on in this function (``float(loss)``)."""
    name = dotted_name(chain_root(expr, attributes=False))
    if name is None or site.function is None:
        return False
    for call in site.function.calls:
        func = call.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "backward"
            and dotted_name(chain_root(func.value, attributes=False)) == name
        ):
            return True
    return False


def _reported(model: SemanticModel, site: CallSite) -> bool:
    """Not a value the program needs on the host: the next call's argument
    (``env.step(action.cpu().numpy())``), an index or slice bound (``x[t.item():]``,
    ``range(n.item())``), or a value the code branches on later (``if n_tokens != expected:``)."""
    for child, parent in model.dataflow.up_to_statement(site.node):
        if (
            isinstance(parent, cst.Call)
            and isinstance(parent.func, cst.Attribute)
            and parent.func.attr.value == "step"
            and parent.args
        ):
            return False
        if _indexes(model, parent, child, site):
            return False
    node = model.dataflow.statement_of(site.node)
    if node is not None and _needed_on_host(model, node, site):
        return False
    if _is_sync(model, site) and _copies_to_host_async(site):
        return False  # what a ``non_blocking`` copy to the host wrote is garbage until this sync
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = dotted_name(node.targets[0].target)
        if target is not None and site.loops:
            for other in site.loops[-1].calls:
                func = other.node.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value == "step"
                    and any(dotted_name(a.value) == target for a in other.node.args)
                ):
                    return False
    return True


def _is_sync(model: SemanticModel, site: CallSite) -> bool:
    func = site.node.func
    if isinstance(func, cst.Attribute):
        return func.attr.value == "synchronize"
    return isinstance(func, cst.Name) and _sync_alias(model, func)


def _copies_to_host_async(site: CallSite) -> bool:
    """A ``.to("cpu", non_blocking=True)`` / ``.cpu(non_blocking=True)`` / ``copy_(...,
    non_blocking=True)`` in the same function (or loop, at module level)."""
    calls = (
        site.function.calls
        if site.function is not None
        else (site.loops[-1].calls if site.loops else [])
    )
    for other in calls:
        func = other.node.func
        if not isinstance(func, cst.Attribute):
            continue
        non_blocking = any(
            a.keyword is not None and a.keyword.value == "non_blocking" for a in other.node.args
        )
        if non_blocking and (func.attr.value in ("cpu", "copy_") or _to_cpu(other.node)):
            return True
    return False


def _indexes(model: SemanticModel, node: cst.CSTNode, child: cst.CSTNode, site: CallSite) -> bool:
    """``child`` is an index or slice bound of ``node`` (``x[a.item():b.item()]``), or an argument
    of ``range``/``slice``: Python needs the number itself."""
    if isinstance(node, cst.SubscriptElement):
        return True
    if isinstance(node, cst.Call) and isinstance(child, cst.Arg):
        return isinstance(node.func, cst.Name) and node.func.value in ("range", "slice")
    return False


# How a value read on the host is used later: "branch" (a condition, an index or slice bound, a
# ``range`` argument), "data" (iterated: CPU-side processing of the rows), "guard" (checked for
# NaNs), "returned" (the function's result: its callers decide).
_REQUIRED_USES = frozenset({"branch", "data"})


def _later_uses(model: SemanticModel, statement: cst.CSTNode, site: CallSite) -> set[str]:
    """How the names ``statement`` assigns are used later in the function."""
    return _uses(model, assigned_names(statement), statement, site, 0)


def _uses(
    model: SemanticModel, names: set[str], statement: cst.CSTNode, site: CallSite, depth: int
) -> set[str]:
    """How ``names`` are used after ``statement``, followed through a couple of assignments and
    list appends (``offsets.append(start)``, then ``zip(offsets, ...)``). A branch or an iteration
    means the program needs the value itself, with no device equivalent (an adaptive
    coefficient, a truncation check, token lists for a request)."""
    kinds: set[str] = set()
    if not names:
        return kinds
    scope_node = site.function.node if site.function is not None else model.module
    for name, first in model.dataflow.reads_after(scope_node, names, statement):
        if _length_only(model, first):
            continue  # ``if len(losses) > 0:`` reads how many, not the values
        node: cst.CSTNode = name
        parent: cst.CSTNode | None = first
        appended_to: str | None = None
        while parent is not None and not isinstance(
            parent, cst.BaseSmallStatement | cst.BaseCompoundStatement
        ):
            if _indexes(model, parent, node, site):
                return {"branch"}
            if isinstance(parent, cst.CompFor) and node is parent.iter:
                return {"data"}
            if isinstance(parent, cst.Arg):
                call = model.parent(parent)
                if isinstance(call, cst.Call) and model.qualify(call.func, site.scope) in _GUARDS:
                    kinds.add("guard")  # ``if math.isnan(loss_value):``: a guard, reported as one
                    break
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in ("append", "extend")
                    and isinstance(call.func.value, cst.Name)
                ):
                    appended_to = call.func.value.value
            node, parent = parent, model.parent(parent)
        else:
            if isinstance(parent, cst.If | cst.While) and node is parent.test:
                return {"branch"}
            if isinstance(parent, cst.For) and node is parent.iter:
                return {"data"}
            if isinstance(parent, cst.Return):
                kinds.add("returned")
            elif depth < 2 and parent is not None:
                # ``x = value * 2``, then ``x``'s uses; ``xs.append(value)``, then ``xs``'s.
                followed = {appended_to} if appended_to is not None else assigned_names(parent)
                kinds |= _uses(model, followed, parent, site, depth + 1)
            if kinds & _REQUIRED_USES:
                return kinds
    return kinds


def _needed_on_host(model: SemanticModel, statement: cst.CSTNode, site: CallSite) -> bool:
    """The value read is branched on, iterated, or (returned) used so by a caller of the
    function: the program needs it on the host."""
    kinds = _later_uses(model, statement, site)
    if isinstance(statement, cst.Return):
        kinds.add("returned")
    holder = _appended_to(model, site.node)
    if holder is not None:  # ``offsets.append(int(t.item()))``: then how ``offsets`` is used
        kinds |= _uses(model, {holder}, statement, site, 1)
    if kinds & _REQUIRED_USES:
        return True
    if "returned" in kinds and site.function is not None:
        for caller in model.torch_steps.callers_of(site.function):
            held = model.dataflow.statement_of(caller.node)
            if held is None:
                continue
            if _in_index(model, caller) or _later_uses(model, held, caller) & _REQUIRED_USES:
                return True
    return False


def _length_only(model: SemanticModel, parent: cst.CSTNode) -> bool:
    """A name's use as the one argument of ``len(...)``."""
    call = model.parent(parent) if isinstance(parent, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "len"
        and len(call.args) == 1
    )


def _appended_to(model: SemanticModel, node: cst.CSTNode) -> str | None:
    """``xs`` when ``node`` is (inside) the argument of ``xs.append(...)`` / ``xs.extend(...)``."""
    for _, parent in model.dataflow.up_to_statement(node):
        if isinstance(parent, cst.Arg):
            call = model.parent(parent)
            if (
                isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in ("append", "extend")
                and isinstance(call.func.value, cst.Name)
            ):
                return call.func.value.value
    return None


def _in_index(model: SemanticModel, site: CallSite) -> bool:
    return any(
        _indexes(model, node, child, site)
        for child, node in model.dataflow.up_to_statement(site.node)
    )


def _how(model: SemanticModel, site: CallSite) -> str:
    """The fix for what the read is used for: a guard, a timing, a bare sync, or logging."""
    statement = model.dataflow.statement_of(site.node)
    if _is_guard(model, site) or (
        statement is not None and "guard" in _later_uses(model, statement, site)
    ):
        return "check it on the device (`torch.isfinite(loss)`) and read the flag every N steps"
    if _is_sync(model, site):
        if _times(model, site):
            return (
                "time with `torch.cuda.Event(enable_timing=True)`, or synchronize only on the "
                "log step"
            )
        return "remove it, or synchronize only on the log step"
    return (
        "accumulate on the device (`running += loss.detach()`) and read it inside your logging "
        "cadence (`if step % log_every == 0:`)"
    )


def _is_guard(model: SemanticModel, site: CallSite) -> bool:
    node: cst.CSTNode | None = site.node
    while node is not None:
        parent = model.parent(node)
        if isinstance(parent, cst.If | cst.While) and parent.test is node:
            return True
        if isinstance(parent, cst.Assert):
            return True
        if isinstance(parent, cst.Arg):
            call = model.parent(parent)
            if isinstance(call, cst.Call) and model.qualify(call.func, site.scope) in _GUARDS:
                return True
        if isinstance(parent, cst.BaseSmallStatement | cst.BaseCompoundStatement) or parent is None:
            return False
        node = parent
    return False


def _times(model: SemanticModel, site: CallSite) -> bool:
    """A ``time.time()``/``perf_counter()`` in the same loop: the sync is for a timing."""
    calls = site.loops[-1].calls if site.loops else (site.function.calls if site.function else [])
    return any(model.qualify(other.node.func, other.scope) in _TIMERS for other in calls)
