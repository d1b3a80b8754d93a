"""What runs on every step of a PyTorch training loop: the one owner of "torch hot loop" (TNK4xx).

A torch step is a call that ends one optimisation step on the host: ``loss.backward()``,
``accelerator.backward(loss)``, ``scaler.scale(loss).backward()``, ``optimizer.step()``,
``scaler.step(optimizer)``, ``engine.step()``. A loop is a torch hot loop when its body makes one,
directly or through a function of this module it calls. A place runs on every step when the
innermost such loop around it (in its function, or around the call of the function it is in)
holds it outside a cadence guard (``cadence.py``, early exits included), and it is not eval-only
code (``@torch.no_grad``/``@torch.inference_mode`` functions, ``with torch.no_grad():`` blocks,
functions named like an evaluation that never step). Per-step hooks of frameworks
(``training_step``, ``train_step``, ``compute_loss`` of a ``Trainer`` subclass, ``update``/
``learn`` of an agent) run once per step by definition: their bodies count as a step.

An outer loop around the hot loop (epochs, PPO updates) is not a step: work at its level is
amortised (spec trap 5), so only the innermost loop that holds the step call counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.imports import dotted_name
from tinker_lint.model.scopes import CallSite, FunctionInfo, LoopInfo, functions_reaching

if TYPE_CHECKING:
    from tinker_lint.model.semantic import SemanticModel

# ``.step()`` ends a step on an optimizer or a DeepSpeed engine; ``scheduler.step()`` and
# ``env.step(action)`` do not. Receivers are known by name here: the spec's own test.
_OPTIMIZER = re.compile(r"(^|_)(optim|optimizer|opt|engine|model_engine)s?($|_)|optimi[sz]er", re.I)
_SCALER = re.compile(r"scaler", re.I)
_HOOKS = frozenset({"training_step", "train_step", "run_step", "compute_loss", "update", "learn"})
_EVAL_NAME = re.compile(
    r"(^|_)(eval|evaluate|evaluation|validate|validation|estimate_loss|test)", re.I
)
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})


@dataclass(frozen=True)
class TorchStep:
    """How a place runs on every step of a torch training loop."""

    step_call: CallSite  # the backward/optimizer step that makes the loop (or hook) a step
    loop: LoopInfo | None  # the hot loop; None in a per-step hook's body
    hook: FunctionInfo | None = None  # the per-step hook, when there is no loop
    via: FunctionInfo | None = None  # the function of this module the loop calls, if any


class TorchSteps:
    """The torch step questions of one module, memoised."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self._memo: dict[CallSite, TorchStep | None] = {}

    # ======================================================================================
    def is_step_call(self, site: CallSite) -> bool:
        """``loss.backward()``, ``accelerator.backward(loss)``, ``optimizer.step()``,
        ``scaler.step(opt)``, ``engine.step()``."""
        func = site.node.func
        if not isinstance(func, cst.Attribute):
            return False
        method = func.attr.value
        if method == "backward":
            return True
        if method != "step":
            return False
        receiver = dotted_name(func.value) or ""
        last = receiver.rsplit(".", 1)[-1]
        if _SCALER.search(last):
            return bool(site.node.args)
        return not site.node.args and bool(_OPTIMIZER.search(last))

    @cached_property
    def stepping_functions(self) -> dict[FunctionInfo, CallSite]:
        """Functions of this module that make a step call, themselves or through another
        function of the module: function -> the step call."""
        model = self.model
        return functions_reaching(model.functions, model.methods, self.is_step_call)

    def _step_in(self, loop: LoopInfo) -> CallSite | None:
        """The step call ``loop``'s body makes at its own level (not in a nested loop, which
        would make that nested loop the step), directly or through a function of the module."""
        for site in loop.calls:
            if site.loops[-1] is not loop:
                continue
            if self.is_step_call(site):
                return site
            target = self.model.resolve_function(site.node.func, site.scope)
            if target is not None and target in self.stepping_functions:
                return self.stepping_functions[target]
        return None

    # ======================================================================================
    def of_call(self, site: CallSite) -> TorchStep | None:
        """The torch step ``site`` runs on every iteration of, or None: not in a torch hot loop or
        hook, under a cadence guard there, or in eval-only code."""
        if site in self._memo:
            return self._memo[site]
        result = self._of_call(site)
        self._memo[site] = result
        return result

    def _of_call(self, site: CallSite) -> TorchStep | None:
        if self.eval_only(site):
            return None
        lexical = self._lexical(site.loops, site.guard_depth)
        if lexical is not None:
            return lexical
        function = site.function
        if function is None or site.guard_depth or (site.loops and self._any_hot(site.loops)):
            return None
        # A function of this module called on every step of a hot loop (one level).
        for caller in self._callers.get(function, ()):
            if self.eval_only(caller):
                continue
            step = self._lexical(caller.loops, caller.guard_depth)
            if step is not None:
                return TorchStep(step.step_call, step.loop, via=function)
        # A per-step hook's body.
        if function.name in _HOOKS and function.class_name is not None:
            step_call = self.stepping_functions.get(function)
            if step_call is not None or function.name in ("training_step", "compute_loss"):
                return TorchStep(step_call or site, None, hook=function)
        return None

    def _any_hot(self, loops: tuple[LoopInfo, ...]) -> bool:
        return any(self._step_in(loop) is not None for loop in loops)

    def _lexical(self, loops: tuple[LoopInfo, ...], guard_depth: int) -> TorchStep | None:
        """The innermost loop of ``loops`` whose body steps, unless a cadence guard inside it
        makes the place occasional."""
        for loop in reversed(loops):
            step_call = self._step_in(loop)
            if step_call is None:
                continue
            if guard_depth > loop.guard_depth:
                return None
            return TorchStep(step_call, loop)
        return None

    @cached_property
    def _callers(self) -> dict[FunctionInfo, list[CallSite]]:
        """Calls of each function of this module, from anywhere in it."""
        model = self.model
        found: dict[FunctionInfo, list[CallSite]] = {}
        for site in model.calls:
            target = model.resolve_function(site.node.func, site.scope)
            if target is not None and target is not site.function:
                found.setdefault(target, []).append(site)
        return found

    # ======================================================================================
    def eval_only(self, site: CallSite) -> bool:
        """In code that evaluates and never trains: a ``@torch.no_grad``/``@torch.inference_mode``
        function, a ``with torch.no_grad():`` block, or a function named like an evaluation, none
        of which steps."""
        model = self.model
        function = site.function
        while function is not None:
            if function not in self.stepping_functions and (
                _EVAL_NAME.search(function.name) or self._decorated_no_grad(function)
            ):
                return True
            function = function.parent
        node: cst.CSTNode | None = model.parent(site.node)
        while node is not None and not isinstance(node, cst.FunctionDef):
            if isinstance(node, cst.With) and self._no_grad_with(node):
                return not any(
                    self.is_step_call(inner)
                    for inner in model.calls
                    if model.contains(node, inner.node)
                )
            node = model.parent(node)
        return False

    def _decorated_no_grad(self, function: FunctionInfo) -> bool:
        for decorator in function.node.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if self.model.qualify(expr, function.scope) in _NO_GRAD:
                return True
        return False

    def _no_grad_with(self, node: cst.With) -> bool:
        for item in node.items:
            expr = item.item
            if isinstance(expr, cst.Call):
                expr = expr.func
            scope = self.model.module_scope
            if self.model.qualify(expr, scope) in _NO_GRAD:
                return True
        return False
