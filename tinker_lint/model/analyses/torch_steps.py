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
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import (
    TORCH_BACKWARD_METHOD,
    TORCH_STEP_HOOKS,
    TORCH_STEP_HOOKS_ALONE,
    TORCH_STEP_METHOD,
    torch_step_receiver,
)
from tinker_lint.model.facts.scopes import CallSite, FunctionInfo, LoopInfo, functions_reaching

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

# ``.step()`` ends a step on an optimizer or a DeepSpeed engine; ``scheduler.step()`` and
# ``env.step(action)`` do not. Receivers are known by name here: the spec's own test. The names
# are those the tree pre-filter reads too (``names.py``, ``prefilter/sketch.py``).
_EVAL_NAME = re.compile(
    r"(^|_)(eval|evaluate|evaluation|validate|validation|estimate_loss|test)", re.I
)
# What turns gradients off around a block or a function (``enable_grad`` turns them back on: the
# code under it trains).
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode"})
# How many calls away from the hot loop (or hook) a place may be: a helper of a helper.
_MAX_CALL_DEPTH = 3
# ``is_last``, ``last_step``, ``final_iter``: a name for the last iteration.
_LAST_NAME = re.compile(r"(^|_)(last|final)(_|$)", re.I)


@dataclass(frozen=True)
class TorchStep:
    """How a place runs on every step of a torch training loop."""

    step_call: CallSite  # the backward/optimizer step that makes the loop (or hook) a step
    loop: LoopInfo | None  # the hot loop; None in a per-step hook's body
    hook: FunctionInfo | None = None  # the per-step hook, when there is no loop
    via: FunctionInfo | None = None  # the function of this module the loop calls, if any


class TorchSteps:
    """The torch step questions of one module, memoised."""

    def __init__(self, model: ModelView) -> None:
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
        if method == TORCH_BACKWARD_METHOD:
            return True
        if method != TORCH_STEP_METHOD:
            return False
        receiver = dotted_name(func.value) or ""
        return torch_step_receiver(receiver.rsplit(".", 1)[-1], bool(site.node.args))

    @cached_property
    def stepping_functions(self) -> dict[FunctionInfo, CallSite]:
        """Functions of this module that make a step call, themselves or through another
        function of the module: function -> the step call."""
        model = self.model
        return functions_reaching(model.functions, model.methods, self.is_step_call)

    @cached_property
    def generating_functions(self) -> dict[FunctionInfo, CallSite]:
        """Functions of this module that call ``generate`` (themselves or through another): what
        they return came out of sampling (``self._generate(model, prompts)``)."""
        model = self.model
        return functions_reaching(
            model.functions,
            model.methods,
            lambda s: (
                isinstance(s.node.func, cst.Attribute) and s.node.func.attr.value == "generate"
            ),
        )

    def step_in(self, loop: LoopInfo) -> CallSite | None:
        """The step call ``loop``'s body makes at its own level (not in a nested loop, which
        would make that nested loop the step), directly or through a function of the module.
        Not a loop that repeats fixed work to time it (``_repeats_fixed_work``)."""
        if _repeats_fixed_work(loop, self):
            return None
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
    def step_of(self, site: CallSite) -> TorchStep | None:
        """The torch step ``site`` runs on every iteration of, or None: not in a torch hot loop or
        hook, under a cadence guard there, or in eval-only code."""
        if site in self._memo:
            return self._memo[site]
        result = self._of_call(site)
        self._memo[site] = result
        return result

    def _of_call(self, site: CallSite) -> TorchStep | None:
        if not self.may_step or self.eval_only(site):
            return None
        return self._every_step(site, 0, frozenset())

    @cached_property
    def may_step(self) -> bool:
        """Whether any place of the module can run on every torch step: some call steps, or a
        hook counts as a step without one (``_every_step``'s last case). Most modules a Tinker
        rule reads have neither, and every loop of theirs is asked about (TNK404)."""
        model = self.model
        return any(
            function.class_name is not None and function.name in TORCH_STEP_HOOKS_ALONE
            for function in model.functions
        ) or any(self.is_step_call(site) for site in model.calls)

    def _every_step(
        self, site: CallSite, depth: int, seen: frozenset[FunctionInfo]
    ) -> TorchStep | None:
        """``step_of`` without the eval-only test: in a hot loop of its function, or in a function
        that a place running every step calls, up to ``_MAX_CALL_DEPTH`` calls away."""
        for loop in reversed(site.loops):
            step_call = self.step_in(loop)
            if step_call is not None:  # the innermost hot loop decides (outer ones: amortised)
                return None if self._occasional(site, loop) else TorchStep(step_call, loop)
        function = site.function
        if function is None or self._occasional(site, None):
            return None
        # A function of this module called on every step (a metrics helper, ``_compute_loss``
        # of ``compute_loss``, a nested helper of that), or overriding the method called.
        if depth < _MAX_CALL_DEPTH:
            for caller in self._callers.get(function, ()):
                if caller.function in seen or self.eval_only(caller):
                    continue
                step = self._every_step(caller, depth + 1, seen | {function})
                if step is not None:
                    return TorchStep(step.step_call, step.loop, step.hook, via=function)
        # A per-step hook's body.
        if function.name in TORCH_STEP_HOOKS and function.class_name is not None:
            step_call = self.stepping_functions.get(function)
            if step_call is not None or function.name in TORCH_STEP_HOOKS_ALONE:
                return TorchStep(step_call or site, None, hook=function)
        return None

    def _step_sites(self, loop: LoopInfo) -> list[CallSite]:
        """The calls at ``loop``'s own level that step, directly or through a function."""
        found = []
        for site in loop.calls:
            if site.loops[-1] is not loop:
                continue
            if self.is_step_call(site):
                found.append(site)
                continue
            target = self.model.resolve_function(site.node.func, site.scope)
            if target is not None and target in self.stepping_functions:
                found.append(site)
        return found

    def _occasional(self, site: CallSite, loop: LoopInfo | None) -> bool:
        """Under a guard inside ``loop`` (else inside its function) that runs on some steps only:
        a cadence guard (``if step % log_every == 0:``, what follows ``if not should_log(step):
        return``) or a last-step test (``if step == num_steps - 1:``, ``if is_last:``). A guard
        that holds the loop's own step call (``if (idx + 1) % grad_accum == 0:
        optimizer.step()``) is the step boundary, not a cadence: what it guards runs every step.
        A branch that ends in ``raise`` and an ``except`` handler run only when something fails."""
        model = self.model
        stop = loop.node if loop is not None else (site.function.node if site.function else None)
        steps = self._step_sites(loop) if loop is not None else []
        guarded_statements = model.index.guarded_statements
        child: cst.CSTNode = site.node
        node = model.parent(child)
        while node is not None and node is not stop:
            if (
                isinstance(node, cst.If)
                and child is node.body
                and (id(node.body) in model.guarded_blocks or _last_step_test(node.test))
                and not any(model.contains(node.body, s.node) for s in steps)
            ):
                return True
            if isinstance(node, cst.If | cst.Else) and _raises(child):
                return True  # an error path: ``if bad.any(): n = int(bad.sum().item()); raise``
            if isinstance(node, cst.ExceptHandler):
                return True
            elif id(child) in guarded_statements and isinstance(node, cst.IndentedBlock):
                # After an early exit off the cadence steps, in this block.
                later = [b for b in node.body if id(b) in guarded_statements]
                if not any(model.contains(b, s.node) for b in later for s in steps):
                    return True
            child, node = node, model.parent(node)
        return False

    @cached_property
    def _callers(self) -> dict[FunctionInfo, list[CallSite]]:
        """Calls of each function of this module, from anywhere in it; a ``self.m()`` call also
        counts for the overrides of ``m`` in the module's subclasses (``FSDPTrainer`` overriding
        the ``clip_gradient`` that ``BasicTrainer.train`` calls)."""
        model = self.model
        found: dict[FunctionInfo, list[CallSite]] = {}
        for site in model.calls:
            for target in self._targets(site):
                if target is not site.function:
                    found.setdefault(target, []).append(site)
        return found

    def callers_of(self, function: FunctionInfo) -> list[CallSite]:
        """The calls of ``function`` in this module (overrides: where the base method is called)."""
        return self._callers.get(function, [])

    def _targets(self, site: CallSite) -> list[FunctionInfo]:
        model = self.model
        target = model.resolve_function(site.node.func, site.scope)
        targets = [target] if target is not None else []
        func = site.node.func
        function = site.function
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and function is not None
            and function.class_name is not None
            and func.value.value == function.self_name
        ):
            for subclass in self._subclasses.get(function.class_name, ()):
                override = model.methods.get(subclass, {}).get(func.attr.value)
                if override is not None and override not in targets:
                    targets.append(override)
        return targets

    @cached_property
    def _subclasses(self) -> dict[str, list[str]]:
        """Class -> the module's classes deriving from it, directly or not, in source order."""
        classes = self.model.index.classes
        direct: dict[str, list[str]] = {}
        for name, node in classes.items():
            for base in node.bases:
                if isinstance(base.value, cst.Name) and base.value.value in classes:
                    direct.setdefault(base.value.value, []).append(name)
        found: dict[str, list[str]] = {}
        for name in classes:
            todo, seen = list(direct.get(name, ())), []
            while todo:
                sub = todo.pop(0)
                if sub not in seen and sub != name:
                    seen.append(sub)
                    todo.extend(direct.get(sub, ()))
            if seen:
                found[name] = seen
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
                # A ``no_grad`` region is evaluation when it holds a loop around ``site`` and no
                # step (``with torch.no_grad(): for batch in val_loader: ...``). One inside a
                # training step (reference log-probs, a clip fraction) runs on every step.
                block = node
                return any(model.contains(block, loop.node) for loop in site.loops) and not any(
                    self.is_step_call(inner)
                    for inner in model.calls
                    if model.contains(block, inner.node)
                )
            node = model.parent(node)
        return False

    def under_no_grad(self, site: CallSite) -> bool:
        """Whether ``site`` runs with gradients off: inside a ``with torch.no_grad():`` (or
        ``inference_mode``) block, or a function decorated with one, however far out."""
        model = self.model
        node: cst.CSTNode | None = model.parent(site.node)
        while node is not None:
            if isinstance(node, cst.With) and any(
                model.qualify(_called(item.item), site.scope) in NO_GRAD for item in node.items
            ):
                return True
            if isinstance(node, cst.FunctionDef) and any(
                model.qualify(_called(decorator.decorator), site.scope) in NO_GRAD
                for decorator in node.decorators
            ):
                return True
            node = model.parent(node)
        return False

    def _decorated_no_grad(self, function: FunctionInfo) -> bool:
        for decorator in function.node.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call):
                expr = expr.func
            if self.model.qualify(expr, function.scope) in NO_GRAD:
                return True
        return False

    def _no_grad_with(self, node: cst.With) -> bool:
        for item in node.items:
            expr = item.item
            if isinstance(expr, cst.Call):
                expr = expr.func
            scope = self.model.module_scope
            if self.model.qualify(expr, scope) in NO_GRAD:
                return True
        return False


def _called(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.no_grad`` of ``torch.no_grad()``: what a context or a decorator is made by."""
    return expr.func if isinstance(expr, cst.Call) else expr


def _last_step_test(test: cst.BaseExpression) -> bool:
    """``step == num_steps - 1``, ``idx + 1 == len(loader)``, ``is_last``, ``self.is_last_step``
    (``not last_step`` is not): a test true on the last iteration only."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _last_step_test(test.left) or _last_step_test(test.right)
    if isinstance(test, cst.Name | cst.Attribute):
        name = test.value if isinstance(test, cst.Name) else test.attr.value
        return bool(_LAST_NAME.search(name))
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        [comparison] = test.comparisons
        sides = (test.left, comparison.comparator)
        if isinstance(comparison.operator, cst.Equal | cst.GreaterThanEqual) and any(
            _one_off(side, cst.Subtract) for side in sides
        ):
            return True
        if isinstance(comparison.operator, cst.Equal):
            return any(_one_off(side, cst.Add) for side in sides)  # ``idx + 1 == len(loader)``
    return False


def _one_off(expr: cst.BaseExpression, operator: type[cst.BaseBinaryOp]) -> bool:
    """``x + 1`` (``operator`` ``cst.Add``) or ``x - 1`` (``cst.Subtract``)."""
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, operator)
        and isinstance(expr.right, cst.Integer)
        and expr.right.value == "1"
    )


def _raises(block: cst.CSTNode) -> bool:
    """A block whose last statement is ``raise``."""
    if not isinstance(block, cst.IndentedBlock) or not block.body:
        return False
    last = block.body[-1]
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Raise)


def place(model: ModelView, node: cst.CSTNode) -> CallSite:
    """Where ``node`` (a subscript, say) runs, as the record of a call there: its function, its
    enclosing loops in that function and its cadence guards, so that the step questions
    (``torch_steps.step_of``), which only read where a call is, can be asked of it."""
    loops: list[LoopInfo] = []
    guards = 0
    current: cst.CSTNode = node
    function: FunctionInfo | None = None
    guarded = model.index.guarded_statements
    while True:
        parent = model.parent(current)
        if parent is None:
            break
        if id(current) in model.guarded_blocks or id(current) in guarded:
            guards += 1
        loop = model.loop_of_node.get(id(parent))
        if loop is not None and not (isinstance(parent, cst.For) and current is parent.iter):
            loops.append(loop)
        if isinstance(parent, cst.FunctionDef):
            function = model.function_of_node.get(id(parent))
            break
        current = parent
    scope = function.scope if function is not None else model.module_scope
    loops.reverse()
    # A subscript is not a call; the step questions read only the fields set here.
    return CallSite(cast(cst.Call, node), scope, function, tuple(loops), guards > 0, guards)


def _repeats_fixed_work(loop: LoopInfo, steps: TorchSteps) -> bool:
    """``for _ in range(n):`` around a backward with no optimizer step and no ``next(...)``: the
    same forward and backward repeated, as a profiler or a warm-up does (ultralytics'
    ``profile()``), not training: nothing new comes in and nothing is updated, so its syncs are
    the measurement. A loop that steps, or draws its next batch, is training."""
    node = loop.node
    if not (
        isinstance(node, cst.For)
        and isinstance(node.target, cst.Name)
        and node.target.value == "_"
        and isinstance(node.iter, cst.Call)
        and isinstance(node.iter.func, cst.Name)
        and node.iter.func.value == "range"
    ):
        return False
    backward = False
    for site in loop.calls:
        func = site.node.func
        if isinstance(func, cst.Name) and func.value == "next":
            return False
        if steps.is_step_call(site):
            if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
                return False  # an optimizer or scaler step: training
            backward = True
    return backward
