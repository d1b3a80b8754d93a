"""TNK401 host-sync-in-step."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Protocol

import libcst as cst

from tinker_lint.model.query import (
    GUARD,
    HOST_READS,
    NEEDS_VALUE,
    RETURNED,
    BindingKind,
    CallSite,
    SemanticModel,
    TorchStep,
    chain_root,
    dotted_name,
    indexes,
    to_cpu,
)
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import callee, code_of
from tinker_lint.rules.torchloop import calls_on_every_step, every_torch_step, in_torch_step


class _MakeFinding(Protocol):
    """``HostSyncInStep._finding``: a finding of a kind (the rule's ``variants``) at a node, from
    the step and what the code shows."""

    def __call__(
        self, ctx: Context, node: cst.CSTNode, step: TorchStep, variant: str, **fields: str
    ) -> Finding: ...


# ``float(loss)``: a conversion of the loss reads it on the host.
_CONVERSIONS = frozenset({"float", "int", "bool"})
_TIMERS = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time"})
_GUARDS = frozenset({"math.isnan", "math.isinf", "math.isfinite", "numpy.isnan", "numpy.isfinite"})

_COST = "it waits for the GPU to finish and stops the CPU running ahead (4-18% of step time in public fixes)"
# A read on the host, in the code as written: "`loss.item()` waits for the GPU in the training
# loop on line 12".
_READ = "`{call}` waits for the GPU {in_step}"
_RUNS = "It runs {every_torch_step}: "
# Preview's reads whose result's size the GPU decides (``x[mask]``, ``nonzero``).
_SIZE = (
    _RUNS + "the result's size is decided on the GPU, so " + _COST + ": keep the shape fixed "
    "(`torch.where(mask, x, 0)`, `(x * mask).sum() / mask.sum()`) where the code allows it"
)


class HostSyncInStep(Rule):
    code = "TNK401"
    name = "host-sync-in-step"
    level = "warning"
    needs_tinker = False
    summary = (
        "Read tensors on the host on a cadence: `.item()`, `.cpu()`, `.tolist()` or "
        "`torch.cuda.synchronize()` on every training step make the CPU wait for the GPU"
    )
    # A read's kind is its fix, by what the value is used for (logging, a guard, timing, nothing);
    # an f-string of a tensor and preview's reads of a size decided on the GPU have their own.
    variants = {
        "logging": (
            _READ,
            _RUNS + _COST + ": accumulate on the device (`running += loss.detach()`) and read it "
            "inside your logging cadence (`if step % log_every == 0:`)",
        ),
        "guard": (
            _READ,
            _RUNS + _COST + ": check it on the device (`torch.isfinite(loss)`) and read the flag "
            "every N steps",
        ),
        "timing": (
            _READ,
            _RUNS + _COST + ": time with `torch.cuda.Event(enable_timing=True)`, or synchronize "
            "only on the log step",
        ),
        "sync": (_READ, _RUNS + _COST + ": remove it, or synchronize only on the log step"),
        "f-string": (
            "`{{{name}}}` in an f-string waits for the GPU {in_step}",
            _RUNS + "formatting a tensor reads it on the host, and " + _COST + ": format "
            "`{name}.item()` on the log step only (`if step % log_every == 0:`), or accumulate "
            "on the device",
        ),
        "nonzero": (_READ, _SIZE),
        "where": ("`torch.where(cond)` with one argument waits for the GPU {in_step}", _SIZE),
        "mask": ("`{code}` (boolean-mask indexing) waits for the GPU {in_step}", _SIZE),
    }
    message, help = variants["logging"]
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
            words({*HOST_READS, *_CONVERSIONS, "synchronize"}) | TORCH_STEP,
        ),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, call, step in calls_on_every_step(ctx, partial(host_read, model)):
            if not _reported(model, site):
                continue
            yield self._finding(ctx, site.node, step, _how(model, site), call=call)
        yield from _formatted_tensors(ctx, self._finding)
        if ctx.preview:
            yield from _mask_reads(ctx, self._finding)

    def _finding(
        self, ctx: Context, node: cst.CSTNode, step: TorchStep, variant: str, **fields: str
    ) -> Finding:
        return self.finding(
            node,
            None,
            variant,
            in_step=in_torch_step(ctx, step),
            every_torch_step=every_torch_step(ctx, step),
            **fields,
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
        variant = ""
        fields: dict[str, str] = {}
        if (isinstance(func, cst.Attribute) and func.attr.value == "nonzero" and not qualified) or (
            qualified == "torch.nonzero"
        ):
            found, variant, fields = node, "nonzero", {"call": callee(model, node)}
        elif qualified == "torch.where" and len(node.args) == 1:
            found, variant = node, "where"
        elif isinstance(func, cst.Attribute):
            subscript = _masked(model, func.value, site)
            if subscript is not None:
                found, variant = subscript, "mask"
                fields = {"code": code_of(model, subscript)}
        if (
            found is None
            or id(found) in seen
            or model.tensors.on_cpu(
                chain_root(found, attributes=False), site.scope, any_binding=True
            )
        ):
            continue
        if not _reported(model, site):
            continue  # ``int(torch.nonzero(m)[0].item())`` as an offset the code iterates
        step = steps.step_of(site)
        if step is None:
            continue
        seen.add(id(found))
        yield finding(ctx, found, step, variant, **fields)


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
                yield finding(ctx, part, step, "f-string", name=name)


def _step_tensor(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """The loss ``.backward()`` is called on in this function, or a ``clip_grad_norm_`` result
    bound in it."""
    if model.tensors.is_loss(expr, site.function, through_chains=True):
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
    """ "loss.item()" (the call's code) if ``site`` reads a tensor on the host (or
    synchronises), else None."""
    node = site.node
    func = node.func
    # Asked of every call: exact types (``isinstance`` on libcst's classes is slow).
    if type(func) is cst.Attribute:
        method = func.attr.value
        if method in HOST_READS and not node.args:
            if _inner_read(func.value) or model.tensors.on_cpu(
                func.value, site.scope, any_binding=True
            ):
                return None  # ``x.cpu().numpy()``: the first read is the one reported
            return callee(model, node)
        if method == "to" and to_cpu(node):
            if model.tensors.on_cpu(func.value, site.scope, any_binding=True):
                return None
            return callee(model, node)
        if method == "synchronize" and not node.args:
            qualified = model.qualify(func, site.scope) or ""
            if qualified.startswith("torch.") or isinstance(func.value, cst.Call):
                return code_of(model, node)
        return None
    if type(func) is not cst.Name:
        return None
    if (
        func.value in _CONVERSIONS
        and len(node.args) == 1
        and model.tensors.is_loss(node.args[0].value, site.function, through_chains=True)
    ):
        return code_of(model, node)
    if not node.args and _sync_alias(model, func):
        return code_of(model, node)
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
        if expr.func.attr.value in HOST_READS or expr.func.attr.value == "to":
            return True
        expr = expr.func.value
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
        if indexes(parent, child):
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
        if non_blocking and (func.attr.value in ("cpu", "copy_") or to_cpu(other.node)):
            return True
    return False


def _needed_on_host(model: SemanticModel, statement: cst.CSTNode, site: CallSite) -> bool:
    """The value read is branched on, iterated, or (returned) used so by a caller of the
    function: the program needs it on the host (``dataflow.uses``)."""
    dataflow = model.dataflow
    kinds = dataflow.later_uses(statement, site.scope, site.function, guards=_GUARDS)
    if isinstance(statement, cst.Return):
        kinds.add(RETURNED)
    holder = dataflow.appended_to(site.node)
    if holder is not None:  # ``offsets.append(int(t.item()))``: then how ``offsets`` is used
        kinds |= dataflow.uses(
            {holder}, statement, site.scope, site.function, guards=_GUARDS, follow=1
        )
    if kinds & NEEDS_VALUE:
        return True
    if RETURNED in kinds and site.function is not None:
        for caller in model.torch_steps.callers_of(site.function):
            held = dataflow.statement_of(caller.node)
            if held is None:
                continue
            if dataflow.in_index(caller.node) or (
                dataflow.later_uses(held, caller.scope, caller.function, guards=_GUARDS)
                & NEEDS_VALUE
            ):
                return True
    return False


def _how(model: SemanticModel, site: CallSite) -> str:
    """The fix, by what the read is used for (the rule's ``variants``): a guard, a timing, a bare
    sync, or logging."""
    statement = model.dataflow.statement_of(site.node)
    if _is_guard(model, site) or (
        statement is not None
        and GUARD in model.dataflow.later_uses(statement, site.scope, site.function, guards=_GUARDS)
    ):
        return "guard"
    if _is_sync(model, site):
        return "timing" if _times(model, site) else "sync"
    return "logging"


def _is_guard(model: SemanticModel, site: CallSite) -> bool:
    """The read is a check: an argument of a guard (``math.isnan(loss.item())``) within its
    statement, the test of an ``if``/``while``, or in an ``assert``."""
    node: cst.CSTNode = site.node
    for _, parent in model.dataflow.up_to_statement(site.node):
        if isinstance(parent, cst.Arg):
            call = model.parent(parent)
            if isinstance(call, cst.Call) and model.qualify(call.func, site.scope) in _GUARDS:
                return True
        node = parent
    statement = model.parent(node)
    return (isinstance(statement, cst.If | cst.While) and statement.test is node) or isinstance(
        statement, cst.Assert
    )


def _times(model: SemanticModel, site: CallSite) -> bool:
    """A ``time.time()``/``perf_counter()`` in the same loop: the sync is for a timing."""
    calls = site.loops[-1].calls if site.loops else (site.function.calls if site.function else [])
    return any(model.qualify(other.node.func, other.scope) in _TIMERS for other in calls)
