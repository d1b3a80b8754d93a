"""Which values of a PyTorch training step are tensors, and which are known to be on the CPU, by
dataflow in the module (TNK404; the device hints of spec §10.4).

A value is a tensor when it is followed back, through a few assignments, to:

- what the type inference already calls an array (a ``torch``/``numpy`` function's result, a
  method of one: ``torch.zeros(n)``, ``F.softmax(x)``, ``t.float()``);
- a ``.to(...)``/``.cuda()`` result;
- the output of a ``torch.nn.Module`` call or an attribute of it (``model(x).logits``), where the
  callee is a module by what the code does with it: ``model.parameters()``, ``model.train()``,
  ``model.eval()``, ``model.zero_grad()`` somewhere in the module, or a ``torch.nn`` layer built
  here;
- the value a ``.backward()`` is called on (the loss), in the same function;
- an item of a ``DataLoader`` built in this module with the default collate (``for x, y in
  loader``), and its fields (``batch["input_ids"]``);
- a row or element of a tensor (``t[i]``, ``for row in t``).

A tensor is on the CPU when it is made by a factory without ``device=`` (``torch.tensor(list)``,
``torch.zeros(n)``, ``torch.from_numpy``), by ``.cpu()``/``.numpy()``, or is a numpy array; a
``.to()``/``.cuda()`` result, a model output, a loss or a batch is maybe on a GPU. TNK401 asks an
older form of that question (``on_cpu(..., any_binding=True)``): one assignment of the value that
made it on the CPU, a tokenizer's output or what ``generate`` returned is enough (issue 31: the
two are kept apart, each as its rule had it, until a commit of its own unifies them).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.bindings import argument, parameters
from tinker_lint.model.analyses.dataflow import chain_root, root_call
from tinker_lint.model.facts.arguments import has_keyword, passed
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import ARRAY_SCALAR_METHODS, CPU_TENSOR_MAKERS, array_function
from tinker_lint.model.facts.scopes import Binding, BindingKind, FunctionInfo, Scope
from tinker_lint.model.facts.types import Kind

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

_MODULE_METHODS = frozenset(
    {"parameters", "named_parameters", "train", "eval", "zero_grad", "state_dict", "modules"}
)
_MOVES = frozenset({"to", "cuda"})
# Methods of a mapping, not of a tensor: a model's output is often a dict or a ``ModelOutput``.
_MAPPING_METHODS = frozenset({"items", "keys", "values", "get", "pop"})
_TO_HOST = frozenset({"cpu", "numpy"})
_MAX_DEPTH = 8
# Factories that build a tensor from Python data or sizes (on the CPU without ``device=``).
_FACTORIES = frozenset(
    "torch." + name
    for name in (
        *("tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange"),
        *("eye", "rand", "randn", "randint", "randperm", "linspace", "logspace"),
    )
)
_SPLITS = frozenset({"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split"})
_SPLIT_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split"})
_DATALOADER = "torch.utils.data.DataLoader"
# Bindings ``on_cpu(..., any_binding=True)`` follows back to where a value was made: ``x = ...``,
# ``a, b = ...``, ``for x in ...``, ``for a, b in zip(...)``.
_FOLLOWED = frozenset({"value", "unpack", "iter", "iter-unpack"})


class Tensors:
    """The tensor questions of one module, memoised."""

    def __init__(self, model: ModelView) -> None:
        self.model = model

    @cached_property
    def _modules(self) -> frozenset[tuple[object, str]]:
        """Values the module uses as a ``torch.nn.Module`` (``model``, ``self.policy``), keyed by
        where their name is bound: the same name may be a module in one function and a plain
        function in another (trl's ``reward_func``)."""
        model = self.model
        found: set[tuple[object, str]] = set()
        for site in model.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_METHODS:
                name = dotted_name(func.value)
                if name is not None:
                    found.add((_owner(name, site.scope), name))
        for binding in model.bindings:
            if binding.kind is not BindingKind.VALUE or not isinstance(binding.expr, cst.Call):
                continue
            qualified = model.qualify(binding.expr.func, binding.scope) or ""
            if qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper():
                for name, bindings in binding.scope.bindings.items():
                    if binding in bindings:
                        found.add((_owner(name, binding.scope), name))
        return frozenset(found)

    def is_module(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        name = dotted_name(expr)
        return name is not None and (_owner(name, scope), name) in self._modules

    # ======================================================================================
    def is_tensor(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """Whether ``expr`` is a tensor by dataflow (see the module doc)."""
        model = self.model
        if depth > _MAX_DEPTH:
            return False
        if not isinstance(expr, cst.Name | cst.Subscript) and any(
            t.kind is Kind.ARRAY for t in model.types(expr, scope)
        ):
            return True  # a names' bindings are judged below, in order
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in _MOVES:
                    return True
                if func.attr.value in ARRAY_SCALAR_METHODS or func.attr.value in _MAPPING_METHODS:
                    return False  # ``t.size()``, ``model_out.items()`` (a dict of outputs)
                return self.is_tensor(func.value, scope, depth + 1)  # ``t.float()``
            return self.is_module(func, scope)
        if isinstance(expr, cst.Attribute):
            # ``model(x).logits``, ``outputs.loss``: a field of a model's output.
            return self._model_output(expr.value, scope, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, scope, depth + 1) or self._batch(
                expr.value, scope, depth + 1
            )
        if isinstance(expr, cst.Name):
            if self.is_loss(expr, scope.function) or self._batch(expr, scope, depth):
                return True
            bindings = scope.lookup(expr.value)
            if self._tensor_argument(expr.value, bindings, depth):
                return True
            for binding in bindings:
                value = binding.expr
                if not isinstance(value, cst.BaseExpression) or not self._precedes(value, expr):
                    continue  # ``rewards = torch.cat(rewards)`` after the loop: not yet a tensor
                if any(t.kind is Kind.ARRAY for t in model.binding_types(binding)):
                    return True
                if binding.kind in (BindingKind.VALUE, BindingKind.UNPACK) and self.is_tensor(
                    value, scope, depth + 1
                ):
                    return True
                if binding.kind in (BindingKind.ITER, BindingKind.ITER_UNPACK):
                    part = iterated_part(
                        value, binding.index if binding.kind is not BindingKind.ITER else None
                    )
                    if part is not None and self.is_tensor(part, scope, depth + 1):
                        return True  # ``for row in t``, ``for a, b in zip(t1, t2)``
        return False

    def _precedes(self, value: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Whether a binding's value starts on or before the line of a use of the name (a use in
        a loop sees a later binding in the same loop only on the next iteration: not counted)."""
        if self.model.contains(value, use):
            return False  # ``xs = [f(x) for x in xs]``: the use reads the binding before
        try:
            return self.model.line_of(value) <= self.model.line_of(use)
        except KeyError:
            return True  # a node made by a test, not of the module: no position to compare

    def _tensor_argument(self, name: str, bindings: list[Binding], depth: int) -> bool:
        """A parameter of a function of this module that every call of it in the module passes
        a tensor for (``clip(scores)`` with ``scores = model(batch).scores``)."""
        function = bindings[0].scope.function if bindings else None
        if function is None or bindings[0].scope is not function.scope:
            return False
        if name not in parameters(function):
            return False
        calls = self.model.torch_steps.callers_of(function)
        found = False
        for site in calls:
            arg = argument(function, site, name)
            if arg is None or not self.is_tensor(arg, site.scope, depth + 1):
                return False
            found = True
        return found

    def pieces(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """A tuple of tensors cut from one (``torch.split(t, sizes)``, ``t.chunk(k)``,
        ``t.unbind(0)``): iterating it goes over the pieces, a handful or one per example."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            if self.model.qualify(func, scope) in _SPLITS:
                return True
            return isinstance(func, cst.Attribute) and func.attr.value in _SPLIT_METHODS
        if isinstance(expr, cst.Name):
            values = [
                b.expr
                for b in scope.lookup(expr.value)
                if b.kind is BindingKind.VALUE
                and isinstance(b.expr, cst.BaseExpression)
                and self._precedes(b.expr, expr)
            ]
            return bool(values) and all(self.pieces(v, scope, depth + 1) for v in values)
        return False

    def direct_model_output(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """A model's output itself (``model(x)``, or a name only bound to one), not a field of
        it: a tensor, or as often a tuple, list or dict of them (iterating it may go over
        outputs, not rows)."""
        if isinstance(expr, cst.Call):
            return self.is_module(expr.func, scope)
        if not isinstance(expr, cst.Name):
            return False
        values = [
            b.expr
            for b in scope.lookup(expr.value)
            if b.kind is BindingKind.VALUE and isinstance(b.expr, cst.BaseExpression)
        ]
        return bool(values) and all(
            isinstance(v, cst.Call) and self.is_module(v.func, scope) for v in values
        )

    def _model_output(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            return self.is_module(expr.func, scope)
        if isinstance(expr, cst.Name):
            for binding in scope.lookup(expr.value):
                if (
                    binding.kind is BindingKind.VALUE
                    and isinstance(binding.expr, cst.BaseExpression)
                    and self._model_output(binding.expr, scope, depth + 1)
                ):
                    return True
        return False

    def is_loss(
        self,
        expr: cst.BaseExpression,
        function: FunctionInfo | None,
        *,
        through_chains: bool = False,
    ) -> bool:
        """The value ``.backward()`` is called on in ``function``: ``loss`` for ``loss.backward()``.
        ``through_chains`` (TNK401's reading): both sides go back to the dotted name a chain of
        calls and subscripts starts from (``float(self.loss)`` for ``self.loss.mean().backward()``);
        without it, a plain name and a plain receiver only."""
        if through_chains:
            name = dotted_name(chain_root(expr, attributes=False))
        else:
            name = expr.value if isinstance(expr, cst.Name) else None
        if name is None or function is None:
            return False
        for site in function.calls:
            func = site.node.func
            if not isinstance(func, cst.Attribute) or func.attr.value != "backward":
                continue
            if through_chains:
                if dotted_name(chain_root(func.value, attributes=False)) == name:
                    return True
            elif isinstance(func.value, cst.Name) and func.value.value == name:
                return True
        return False

    def _batch(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        """An item of a ``DataLoader`` built in this module with the default collate."""
        if not isinstance(expr, cst.Name) or depth > _MAX_DEPTH:
            return False
        for binding in scope.lookup(expr.value):
            if binding.kind not in (BindingKind.ITER, BindingKind.ITER_UNPACK) or not isinstance(
                binding.expr, cst.BaseExpression
            ):
                continue
            loader = iterated_part(
                binding.expr, binding.index if binding.kind is BindingKind.ITER_UNPACK else None
            )
            if loader is None:
                loader = binding.expr  # ``for x, y in loader``: the batch's parts
            if isinstance(loader, cst.Name) and self._default_loader(loader, scope):
                return True
        return False

    def _default_loader(self, name: cst.Name, scope: Scope) -> bool:
        model = self.model
        for binding in scope.lookup(name.value):
            value = binding.expr
            if binding.kind is not BindingKind.VALUE or not isinstance(value, cst.Call):
                continue
            if model.qualify(value.func, binding.scope) == _DATALOADER and not has_keyword(
                value, "collate_fn"
            ):
                return True
        return False

    # ======================================================================================
    def on_cpu(
        self, expr: cst.BaseExpression, scope: Scope, depth: int = 0, *, any_binding: bool = False
    ) -> bool:
        """Whether the tensor ``expr`` is known to be on the CPU (see the module doc): every
        value it may hold is, an op's where its tensor inputs are (TNK404).

        ``any_binding`` (TNK401's question, kept as it was): the value a chain of calls and
        subscripts starts from was made on the CPU by one of its assignments or loop targets,
        followed back three times: ``torch.from_numpy``, ``torch.tensor`` without ``device=``,
        ``torch.load(map_location="cpu")``, any numpy function, a tokenizer's or processor's output
        (``return_tensors="pt"``), a ``.cpu()``/``.numpy()``/``.tolist()`` result, or what
        ``generate`` returned (which synchronised every token already), directly or through a
        function of the module. Ops and arithmetic are not followed."""
        if any_binding:
            return self._made_on_cpu(expr, scope, depth)
        model = self.model
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in _TO_HOST:
                    return True
                if method in _MOVES and not _casts_only(model, expr, scope):
                    return False  # ``.to(device)``: maybe a GPU now (``.to(torch.long)`` is not)
                qualified = model.qualify(func, scope)
                if qualified is None:
                    return self.on_cpu(func.value, scope, depth + 1)
            qualified = model.qualify(func, scope) or ""
            if qualified.startswith("numpy."):
                return True
            if array_function(qualified) is not None:
                if any(a.keyword is not None and a.keyword.value == "device" for a in expr.args):
                    return False
                if qualified in _FACTORIES:
                    # Built from Python data or sizes: on the CPU, unless from a tensor that
                    # may be on a GPU (``torch.as_tensor(t)``).
                    return all(
                        not self.is_tensor(a.value, scope) or self.on_cpu(a.value, scope, depth + 1)
                        for a in expr.args
                    )
                # An op (``torch.cat([a, b])``, ``torch.where(m, x, y)``) is where its tensor
                # inputs are: on the CPU only when each is known to be.
                inputs = [
                    e.value
                    for a in expr.args
                    if a.keyword is None
                    for e in (
                        a.value.elements if isinstance(a.value, cst.List | cst.Tuple) else [a]
                    )
                    if not isinstance(e.value, cst.Integer | cst.Float | cst.SimpleString)
                ]
                return bool(inputs) and all(self.on_cpu(v, scope, depth + 1) for v in inputs)
            return False
        if isinstance(expr, cst.Subscript):
            return self.on_cpu(expr.value, scope, depth + 1)
        if isinstance(expr, cst.BinaryOperation | cst.Comparison):
            # ``full - completion`` is where its tensor operands are.
            operands = (
                [expr.left, expr.right]
                if isinstance(expr, cst.BinaryOperation)
                else [expr.left, *(c.comparator for c in expr.comparisons)]
            )
            tensors = [o for o in operands if self.is_tensor(o, scope)]
            return bool(tensors) and all(self.on_cpu(o, scope, depth + 1) for o in tensors)
        if isinstance(expr, cst.Name):
            bindings = [
                b
                for b in scope.lookup(expr.value)
                if b.kind
                in (
                    BindingKind.VALUE,
                    BindingKind.UNPACK,
                    BindingKind.ITER,
                    BindingKind.ITER_UNPACK,
                )
            ]
            parts = [
                b.expr
                if b.kind in (BindingKind.VALUE, BindingKind.UNPACK)
                else iterated_part(b.expr, b.index if b.kind is BindingKind.ITER_UNPACK else None)
                for b in bindings
                if isinstance(b.expr, cst.BaseExpression)
            ]
            return bool(parts) and all(
                isinstance(p, cst.BaseExpression) and self.on_cpu(p, scope, depth + 1)
                for p in parts
            )
        return False

    def data_root(self, expr: cst.BaseExpression, scope: Scope) -> cst.BaseExpression:
        """What a tensor's chain is made from: ``batch["x"].float()[0]`` -> ``batch``,
        ``torch.from_numpy(b)`` -> ``b`` (a CPU maker without ``device=``: the data it wraps). A
        copy in the chain (``.to``, ``.cuda``) is kept: what it gives is on the device already."""
        return chain_root(
            expr, attributes=True, keep=_MOVES, into=lambda call: self._cpu_wrapped(call, scope)
        )

    def _cpu_wrapped(self, call: cst.Call, scope: Scope) -> cst.BaseExpression | None:
        """The data ``torch.from_numpy(b)``, ``np.asarray(b)`` make a CPU tensor or array of."""
        if (
            call.args
            and self.model.qualify(call.func, scope) in CPU_TENSOR_MAKERS
            and passed(call, "device") is None
        ):
            return call.args[0].value
        return None

    def is_cpu_device(
        self, expr: cst.BaseExpression, scope: Scope, *, with_index: bool = False
    ) -> bool:
        """``expr`` names the host: ``"cpu"``, ``torch.device("cpu")``, or a name every assignment
        of which is one. ``with_index`` (TNK403's reading): ``"cpu:0"`` too; without (TNK405's),
        ``"cpu"`` alone."""
        if self._cpu_literal(expr, scope, with_index):
            return True
        if not isinstance(expr, cst.Name):
            return False
        bindings = scope.lookup(expr.value)
        return bool(bindings) and all(
            b.kind == "value"
            and isinstance(b.expr, cst.BaseExpression)
            and self._cpu_literal(b.expr, scope, with_index)
            for b in bindings
        )

    def _cpu_literal(self, expr: cst.BaseExpression, scope: Scope, with_index: bool) -> bool:
        if isinstance(expr, cst.SimpleString):
            value = expr.evaluated_value
            if with_index:
                return isinstance(value, str) and value.split(":")[0] == "cpu"
            return value == "cpu"
        if isinstance(expr, cst.Call) and self.model.qualify(expr.func, scope) == "torch.device":
            return bool(expr.args) and self._cpu_literal(expr.args[0].value, scope, with_index)
        return False

    def _made_on_cpu(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> bool:
        root = chain_root(expr, attributes=False)
        if not isinstance(root, cst.Name) or depth > 3:
            return False
        for binding in scope.lookup(root.value):
            value = binding.expr
            if binding.kind not in _FOLLOWED or not isinstance(value, cst.BaseExpression):
                continue
            if binding.kind == "iter-unpack":
                # ``for row, mask in zip(ids_cpu, masks)``
                value = iterated_part(value, binding.index, wrappers=False)
                if value is None:
                    continue
            if isinstance(chain_root(value, attributes=False), cst.Name) and self._made_on_cpu(
                value, scope, depth + 1
            ):
                return True  # ``completion_ids = out[:, n:]`` after ``out = model.generate(...)``
            if _host_result(value):
                return True  # ``ids = t.cpu()``: reading ``ids`` later costs nothing
            value = root_call(value)
            if not isinstance(value, cst.Call):
                continue
            if self._cpu_call(value, scope):
                return True
        return False

    def _cpu_call(self, call: cst.Call, scope: Scope) -> bool:
        """A call whose result is made on the CPU (``on_cpu(..., any_binding=True)``)."""
        model = self.model
        qualified = model.qualify(call.func, scope) or ""
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
        # Functions of the module that call ``generate`` (themselves or through another): what
        # they return came out of sampling (``self._generate(model, ...)``).
        target = model.resolve_function(call.func, scope)
        return target is not None and target in model.torch_steps.generating_functions


def to_cpu(call: cst.Call) -> bool:
    """``t.to("cpu")``, ``t.to(device="cpu")``: a copy to the host, by the string ``"cpu"`` (the
    first argument that is one decides; ``torch.device("cpu")`` is not looked at)."""
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.SimpleString) and value.evaluated_value == "cpu":
            return arg.keyword is None or arg.keyword.value == "device"
    return False


def _host_result(value: cst.BaseExpression) -> bool:
    """``t.cpu()``, ``t.detach().cpu().float()``, ``t.numpy()``, ``t.to("cpu")``: on the host."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        method = value.func.attr.value
        if method in ("cpu", "numpy", "tolist") or (method == "to" and to_cpu(value)):
            return True
        value = value.func.value
    return False


def _casts_only(model: ModelView, call: cst.Call, scope: Scope) -> bool:
    """``t.to(torch.long)``, ``t.to(dtype=x)``: a cast that leaves the tensor where it is."""
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value != "to" or not call.args:
        return False
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value != "dtype":
                return False
            continue
        qualified = model.qualify(arg.value, scope) or ""
        if not (qualified.startswith("torch.") and qualified.count(".") == 1):
            return False
    return True


def _owner(name: str, scope: Scope) -> object:
    """Where the head of a dotted name is bound: its class for ``self.x`` (``self`` of a
    method), else the scope that binds the head name (None when nothing here binds it)."""
    head = name.split(".", 1)[0]
    function = scope.function
    if function is not None and head == function.self_name and function.class_name is not None:
        return ("class", function.class_name)
    bindings = scope.lookup(head)
    return id(bindings[0].scope) if bindings else None


def iterated_part(
    iterable: cst.BaseExpression, index: int | None, *, wrappers: bool = True
) -> cst.BaseExpression | None:
    """What a loop variable is an item of: ``t`` for ``row`` in ``for row in t``; for position
    ``index`` of ``for i, row in enumerate(t)``, None (the counter) or ``t``; for ``for a, b in
    zip(t, u)``, ``t`` or ``u``. None when it is not an item of one value.

    ``wrappers``: through ``reversed``/``iter``/``list``/``tuple`` and nested calls too
    (``zip(reversed(t), u)`` -> ``t``). Without (TNK401's reading, kept as it was): one ``zip``
    or ``enumerate`` and a position of it, what it is called with as written (``reversed(t)``)."""
    if not wrappers:
        if index is None or not (
            isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name)
        ):
            return None
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if iterable.func.value == "zip" and index < len(args):
            return args[index]
        if iterable.func.value == "enumerate" and index == 1 and args:
            return args[0]
        return None
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        name = iterable.func.value
        args = [a.value for a in iterable.args if a.keyword is None and not a.star]
        if name in ("reversed", "iter", "list", "tuple") and args:
            iterable = args[0]
        elif name == "enumerate" and args:
            if index is None:
                return None  # ``for pair in enumerate(t)``: a tuple
            if index == 0:
                return None
            iterable, index = args[0], None
        elif name == "zip" and args:
            if index is None or index >= len(args):
                return None
            iterable, index = args[index], None
        else:
            break
    return iterable if index is None else None
