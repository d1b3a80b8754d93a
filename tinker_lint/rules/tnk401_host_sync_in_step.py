"""TNK401 host-sync-in-step."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.imports import dotted_name
from tinker_lint.model.semantic import CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TORCH_STEP
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import callee, code_of
from tinker_lint.rules.torchloop import every_torch_step

# Methods that copy a tensor to the host, so the CPU waits for the GPU to finish everything queued.
_TO_HOST = frozenset({"item", "tolist", "cpu", "numpy"})
_CONVERSIONS = frozenset({"float", "int", "bool"})
# Values that are on the CPU already: ``.cpu()``/``.numpy()`` of them is a no-op (spec trap 4).
_CPU_MAKERS = frozenset(
    {"torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.load", "numpy.array"}
)
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
    # ``what``: "`loss.item()`"; ``how``: the fix for its use (logging, a guard, timing).
    message = "{what} {every_torch_step}: {cost}: {how}"
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
of the module; or the body of a per-step hook such as `training_step`), outside a cadence guard
(`if step % log_every == 0:`, `if not should_log(step): return`):

- a value that only reaches logging: accumulate on the device and read it on the log step;
- a guard (`if`, `assert`, `math.isnan`): check on the device, read it every N steps;
- a timing `synchronize()`: use CUDA events, or synchronize only on the log step.

Not reported: eval-only code (`@torch.no_grad`, `with torch.no_grad():` without a backward,
`evaluate`-style functions), tensors already on the CPU (`torch.from_numpy`, `torch.tensor(...)`
without `device=`, numpy), a value the next call needs on the host (`env.step(action.cpu()...)`),
outputs of `generate(...)` (which synchronises every token anyway), the outer loop of an epoch or
update (once per many steps), and `len(t)`, `t.shape`, `t.detach()`, which do not sync.
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

    # A step (``backward``/``step``) and a read on the host.
    prefilter = Needs(text=(TORCH_STEP, words({*_TO_HOST, *_CONVERSIONS, "synchronize"})))

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        steps = model.torch_steps
        for site in model.calls:
            what = host_read(model, site)
            if what is None:
                continue
            step = steps.of_call(site)
            if step is None or not _reported(model, site):
                continue
            yield Finding(
                site.node,
                f"{what} {every_torch_step(ctx, step)}: {_COST}: {_how(model, site)}",
            )


def host_read(model: SemanticModel, site: CallSite) -> str | None:
    """ "`loss.item()`" if ``site`` reads a tensor on the host (or synchronises), else None."""
    node = site.node
    func = node.func
    if isinstance(func, cst.Attribute):
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
    if (
        isinstance(func, cst.Name)
        and func.value in _CONVERSIONS
        and len(node.args) == 1
        and _is_loss(model, node.args[0].value, site)
    ):
        return f"`{code_of(model, node)}`"
    return None


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


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x.detach().float()[0]`` -> ``x``."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        else:
            return expr


def _on_cpu(model: SemanticModel, expr: cst.BaseExpression, site: CallSite, depth: int = 0) -> bool:
    """Made on the CPU in this function: ``torch.from_numpy``, ``torch.tensor`` without
    ``device=``, ``torch.load(map_location="cpu")``, numpy, or what ``generate`` returned (which
    synchronised every token already), followed back through a few assignments."""
    root = _root(expr)
    if not isinstance(root, cst.Name) or depth > 3:
        return False
    for binding in site.scope.lookup(root.value):
        value = binding.expr
        if binding.kind not in ("value", "unpack") or not isinstance(value, cst.BaseExpression):
            continue
        if isinstance(_root(value), cst.Name) and _on_cpu(model, value, site, depth + 1):
            return True  # ``completion_ids = out[:, n:]`` after ``out = model.generate(...)``
        value = _root_call(value)
        if not isinstance(value, cst.Call):
            continue
        qualified = model.qualify(value.func, site.scope) or ""
        on_device = any(a.keyword is not None and a.keyword.value == "device" for a in value.args)
        if (qualified in _CPU_MAKERS or qualified.startswith("numpy.")) and not on_device:
            return True
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "generate":
            return True
    return False


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
    name = dotted_name(_root(expr))
    if name is None or site.function is None:
        return False
    for call in site.function.calls:
        func = call.node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "backward"
            and dotted_name(_root(func.value)) == name
        ):
            return True
    return False


def _reported(model: SemanticModel, site: CallSite) -> bool:
    """Not a value the next call needs on the host (``env.step(action.cpu().numpy())``)."""
    node: cst.CSTNode | None = model.parent(site.node)
    while node is not None and not isinstance(
        node, cst.BaseSmallStatement | cst.BaseCompoundStatement
    ):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "step"
            and node.args
        ):
            return False
        node = model.parent(node)
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


def _how(model: SemanticModel, site: CallSite) -> str:
    """The fix for what the read is used for: a guard, a timing, or logging."""
    if _is_guard(model, site):
        return "check it on the device (`torch.isfinite(loss)`) and read the flag every N steps"
    func = site.node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "synchronize" and _times(model, site):
        return (
            "time with `torch.cuda.Event(enable_timing=True)`, or synchronize only on the log step"
        )
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
