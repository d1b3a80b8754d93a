"""Type inference: what a name, an attribute, a call or an annotation holds (a Tinker client, a
future, a tokenizer, an array, a list or tuple of those), from the bindings the collector recorded.

Types are inferred on demand and memoised; ``settle`` first works out every binding in the order
made, so that no answer depends on which question came first. SDK calls (``sdk_calls.py``) and
types depend on each other: a receiver's type says which method is called, and the method says
what the call returns; ``sdk_call`` is given after both are built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.annotations import annotation_types
from tinker_lint.model.analyses.summaries import Summary
from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.collect import ModuleIndex
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import (
    ARRAY_SCALAR_METHODS,
    CONTAINER_GETS,
    CONTAINER_VIEWS,
    MODEL_INPUT_BUILDERS,
    MODEL_INPUT_COPIES,
    MODEL_INPUT_FACTORIES,
    TOKENIZER_FACTORIES,
    array_function,
)
from tinker_lint.model.facts.scopes import (
    Binding,
    BindingKind,
    FunctionInfo,
    Scope,
    SdkCall,
    is_tinker_name,
    qualify,
    resolve_function,
    self_attribute_bindings,
)
from tinker_lint.model.facts.sdk import Returns, SdkMethod
from tinker_lint.model.facts.types import (
    ARRAY,
    MODEL_INPUT,
    TOKENIZER,
    Kind,
    TType,
    client,
    future,
    instance,
    result_of,
)

if TYPE_CHECKING:
    from tinker_lint.model.analyses.helpers import Helpers

# Builtins that keep a sequence's elements.
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "reversed", "sorted", "iter"})

# A value named ``tokenizer``, ``self._tokenizer``, ``renderer.tokenizer``, ``teacher_tokenizer`` is
# a tokenizer when dataflow says nothing else. Lower case only: ``Tokenizer`` is a class, and
# ``tokenizer_name`` / ``tokenizer_path`` are strings.
_TOKENIZER_NAME = re.compile(r"(?:^|_)tokenizer$")
# Names of functions that give a tokenizer (``get_tokenizer()``, ``self.load_tokenizer()``): calling
# one makes a tokenizer, it does not tokenize.
_TOKENIZER_FACTORY_NAME = re.compile(r"^_?(?:get|load|make|build|create|init|setup|new)_")
# Annotations and literals that say a value is not a tokenizer, whatever its name.
_NOT_TOKENIZER_ANNOTATIONS = frozenset({"str", "bytes", "int", "float", "bool", "Path", "None"})
_LITERALS = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.Dict,
    cst.List,
    cst.Tuple,
)
_LITERAL_TYPES = frozenset(_LITERALS)  # by exact type: the classes are final


class TypeInference:
    """The types of expressions and bindings of one module, memoised (keyed by node id)."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        # Given by the model once the SDK calls are built (they ask these types in turn).
        self.sdk_call: Callable[[cst.Call, Scope], SdkCall | None] = lambda call, scope: None
        self._types: dict[tuple[int, int], frozenset[TType]] = {}
        self._binding_types: dict[int, frozenset[TType]] = {}
        self._in_progress: set[int] = set()
        self.settled = False
        self.cuts = 0  # answers cut short by a cycle (they depend on where it was entered)
        self._qualified: dict[tuple[int, int], str | None] = {}
        # Call resolution (``helpers.py``), given by the model: instances of project classes,
        # and what project functions of other modules return.
        self.helpers: Helpers | None = None

    def qualify(self, node: cst.BaseExpression, scope: Scope) -> str | None:
        # Memoised: the rules ask it of the same call's ``func`` many times, and the imports and
        # bindings it reads are complete once the module is collected.
        key = (id(node), id(scope))
        if key in self._qualified:
            return self._qualified[key]
        qualified = self._qualified[key] = qualify(self.index.imports, node, scope)
        return qualified

    def settle(self) -> None:
        """Work out every binding's types once, in the order the bindings were made, before any
        other question. Types are inferred through bindings that may refer to each other
        (``tc = await tc``); where such a cycle is cut, what is kept depends on where the inference
        started, so it always starts here: no answer may depend on which rules ran, or in which
        order they asked (the pre-filters choose the rules)."""
        self.settled = True
        for binding in self.index.bindings:
            self.binding_types(binding)

    def types(self, expr: cst.BaseExpression, scope: Scope) -> frozenset[TType]:
        """The types ``expr`` may have. A set, in no order to rely on: it hashes ``origin_id``
        (an address) and enums (by the hash seed). Ask whether some type is there; to pick one,
        order them by something of the source (``sdk_calls.py`` does, by ``CallSite.order``)."""
        if not self.settled:
            self.settle()
        key = (id(expr), id(scope))
        cached = self._types.get(key)
        if cached is not None:
            return cached
        if key[0] in self._in_progress:
            self.cuts += 1
            return frozenset()
        self._in_progress.add(key[0])
        try:
            result = frozenset(self._infer(expr, scope))
        finally:
            self._in_progress.discard(key[0])
        self._types[key] = result
        return result

    def _infer(self, expr: cst.BaseExpression, scope: Scope) -> Iterator[TType]:
        # By exact type (libcst's node classes are final): ``isinstance`` on them goes through
        # ``ABCMeta``, and this is asked of every expression a binding or a rule looks at.
        if type(expr) is cst.Name:
            bindings = scope.lookup(expr.value)
            found = [t for binding in bindings for t in self.binding_types(binding)]
            yield from found
            if not found and self._named_tokenizer(expr.value, bindings):
                yield TOKENIZER
        elif type(expr) is cst.Attribute:
            found = list(self._infer_attribute(expr, scope))
            yield from found
            if not found and self._named_tokenizer(
                expr.attr.value, self._attr_bindings(expr, scope)
            ):
                yield TOKENIZER
        elif type(expr) is cst.Call:
            yield from self._infer_call(expr, scope)
        elif type(expr) is cst.Await:
            for t in self.types(expr.expression, scope):
                inner = t.awaited()
                if inner is not None:
                    yield inner
            yield from self._infer_gather(expr, scope)
        elif type(expr) is cst.List or type(expr) is cst.Tuple or type(expr) is cst.Set:
            # Both views: a sequence of any of its elements, and (unless starred) each position.
            items: list[frozenset[TType]] = []
            for element in expr.elements:
                value = element.value
                types = self.types(value, scope)
                items.append(types)
                for t in types:
                    if type(element) is cst.StarredElement:
                        yield t
                    else:
                        yield TType(Kind.LIST, inner=t)
            starred = any(type(e) is cst.StarredElement for e in expr.elements)
            if type(expr) is not cst.Set and not starred and any(items):
                yield TType(Kind.TUPLE, items=tuple(items))
        elif (
            type(expr) is cst.ListComp
            or type(expr) is cst.SetComp
            or type(expr) is cst.GeneratorExp
        ):
            for t in self.types(expr.elt, scope):
                yield TType(Kind.LIST, inner=t)
        elif type(expr) is cst.Subscript:
            yield from self._infer_subscript(expr, scope)
        elif type(expr) is cst.IfExp:
            yield from self.types(expr.body, scope)
            yield from self.types(expr.orelse, scope)
        elif type(expr) is cst.BooleanOperation:
            yield from self.types(expr.left, scope)
            yield from self.types(expr.right, scope)
        elif type(expr) is cst.NamedExpr:
            yield from self.types(expr.value, scope)

    def _infer_subscript(self, expr: cst.Subscript, scope: Scope) -> Iterator[TType]:
        values = self.types(expr.value, scope)
        index = _literal_index(expr)
        if index is not None:
            tuples = [
                v for v in values if v.kind is Kind.TUPLE and -len(v.items) <= index < len(v.items)
            ]
            if tuples:
                for v in tuples:
                    yield from v.items[index]
                return
        for t in values:
            if t.kind is Kind.LIST and t.inner is not None:
                yield t.inner
            elif t.kind is Kind.ARRAY:
                yield ARRAY  # ``t[0]``, ``torch.where(m)[0]``: still an array (or its element)

    def binding_types(self, binding: Binding) -> frozenset[TType]:
        if not self.settled:
            self.settle()
        key = id(binding)
        cached = self._binding_types.get(key)
        if cached is not None:
            return cached
        if key in self._in_progress:
            self.cuts += 1
            return frozenset()
        self._in_progress.add(key)
        try:
            if binding.kind is BindingKind.VALUE and isinstance(binding.expr, cst.BaseExpression):
                result = self.types(binding.expr, binding.scope)
            elif binding.kind is BindingKind.ANNOTATION and isinstance(
                binding.expr, cst.BaseExpression
            ):
                result = frozenset(self.annotation_types(binding.expr, binding.scope))
            elif binding.kind is BindingKind.ITER and isinstance(binding.expr, cst.BaseExpression):
                result = _elements(self.types(binding.expr, binding.scope))
            elif binding.kind is BindingKind.UNPACK and isinstance(
                binding.expr, cst.BaseExpression
            ):
                values = self.types(binding.expr, binding.scope)
                result = _position(values, binding.index, binding.size)
            elif binding.kind is BindingKind.ITER_UNPACK and isinstance(
                binding.expr, cst.BaseExpression
            ):
                values = _elements(self.types(binding.expr, binding.scope))
                result = _position(values, binding.index, binding.size)
            elif binding.kind is BindingKind.ELEMENT and isinstance(
                binding.expr, cst.BaseExpression
            ):
                values = self.types(binding.expr, binding.scope)
                result = frozenset(TType(Kind.LIST, inner=t) for t in values)
            elif binding.kind is BindingKind.ELEMENTS and isinstance(
                binding.expr, cst.BaseExpression
            ):
                values = self.types(binding.expr, binding.scope)
                result = frozenset(t for t in values if t.kind is Kind.LIST)
            else:
                result = frozenset()
        finally:
            self._in_progress.discard(key)
        self._binding_types[key] = result
        return result

    def annotation_types(self, ann: cst.BaseExpression, scope: Scope) -> Iterator[TType]:
        yield from annotation_types(self.index.imports, self.index.module_scope, ann, scope)
        yield from self._annotated_instance(ann, scope)

    def _annotated_instance(self, ann: cst.BaseExpression, scope: Scope) -> Iterator[TType]:
        """``policy: Policy``, ``Policy | None``, ``Optional[Policy]``, ``"Policy"``: an instance
        of a class of the project."""
        if self.helpers is None:
            return
        # Exact types, as in ``_infer``.
        if type(ann) is cst.SimpleString:
            text = str(ann.evaluated_value)
            if text.replace(".", "").replace("_", "").isalnum():
                ann, scope = cst.parse_expression(text), self.index.module_scope
            else:
                return
        if type(ann) is cst.BinaryOperation and type(ann.operator) is cst.BitOr:
            yield from self._annotated_instance(ann.left, scope)
            yield from self._annotated_instance(ann.right, scope)
        elif type(ann) is cst.Subscript:
            if (dotted_name(ann.value) or "").rsplit(".", 1)[-1] == "Optional":
                for element in ann.slice:
                    if type(element.slice) is cst.Index:
                        yield from self._annotated_instance(element.slice.value, scope)
        elif type(ann) is cst.Name or type(ann) is cst.Attribute:
            qualified = self.helpers.is_class(ann, scope)
            if qualified is not None:
                yield instance(qualified)

    def _infer_attribute(self, expr: cst.Attribute, scope: Scope) -> Iterator[TType]:
        for binding in self._attr_bindings(expr, scope):
            yield from self.binding_types(binding)

    def _attr_bindings(self, expr: cst.Attribute, scope: Scope) -> list[Binding]:
        """Where ``self.x`` got its values, for ``self`` of a class of this module."""
        return self_attribute_bindings(expr, scope, self.index.class_attrs)

    def _named_tokenizer(self, name: str, bindings: list[Binding]) -> bool:
        """Whether a value with no inferred type is a tokenizer by its name (spec: "a name
        containing `tokenizer`"), unless a binding shows it is a string, number or container, or
        the name is a function or an import (``get_tokenizer``)."""
        if _TOKENIZER_NAME.search(name) is None or name in self.index.imports.aliases:
            return False
        for binding in bindings:
            if binding.kind is BindingKind.DEF:
                return False
            if binding.kind is BindingKind.VALUE and type(binding.expr) in _LITERAL_TYPES:
                return False
            if binding.kind is BindingKind.ANNOTATION and isinstance(
                binding.expr, cst.BaseExpression
            ):
                head = binding.expr
                if type(head) is cst.Subscript:
                    head = head.value
                if (dotted_name(head) or "").rsplit(".", 1)[-1] in _NOT_TOKENIZER_ANNOTATIONS:
                    return False
        return True

    def _infer_call(self, call: cst.Call, scope: Scope) -> Iterator[TType]:
        func = call.func
        qualified = self.qualify(func, scope)
        if qualified is not None:
            last = qualified.rsplit(".", 1)[-1]
            if qualified.startswith("tinker.") and last in sdk.CLIENT_CLASSES:
                yield client(sdk.CLIENT_CLASSES[last])
                return
            if qualified in TOKENIZER_FACTORIES or (
                qualified.endswith(".from_pretrained") and "Tokenizer" in qualified
            ):
                yield TOKENIZER
                return
            if array_function(qualified) is not None:
                yield ARRAY
                return
            if is_tinker_name(qualified, "ModelInput") or (
                last in MODEL_INPUT_FACTORIES
                and is_tinker_name(qualified.rsplit(".", 1)[0], "ModelInput")
            ):
                yield MODEL_INPUT  # ``tinker.ModelInput(chunks=...)``, ``types.ModelInput.empty()``
                return
        if type(func) is cst.Attribute:
            name = func.attr.value
            receiver = self.types(func.value, scope)
            if name in sdk.FUTURE_METHODS:
                for t in receiver:
                    yield from self._future_method(t, name, call)
            if name in ("to_torch", "to_numpy") or (
                name not in ARRAY_SCALAR_METHODS and any(t.kind is Kind.ARRAY for t in receiver)
            ):
                yield ARRAY  # ``TensorData.to_torch()``, ``t.float()``, ``a.reshape(...)``
            if name in MODEL_INPUT_BUILDERS or (
                name in MODEL_INPUT_COPIES and any(t.kind is Kind.MODEL_INPUT for t in receiver)
            ):
                yield MODEL_INPUT  # ``renderer.build_generation_prompt(m)``, ``mi.append_int(t)``
            sdk_call = self.sdk_call(call, scope)
            if sdk_call is not None:
                yield from self._sdk_return(sdk_call.method, call)
            elif name == "get_tokenizer" or (
                name == "from_pretrained" and "tokenizer" in (dotted_name(func.value) or "").lower()
            ):
                yield TOKENIZER
            # A method of this module's class, called on self.
            target = resolve_function(self.index.methods, func, scope)
            if target is not None:
                yield from self._function_call_types(target)
            if name in CONTAINER_GETS:
                yield from _elements(receiver)
            elif name == "items":
                if values := _elements(receiver):
                    yield TType(Kind.LIST, inner=TType(Kind.TUPLE, items=(frozenset(), values)))
            elif name in CONTAINER_VIEWS:  # values(), copy()
                yield from (t for t in receiver if t.kind is Kind.LIST)
        elif type(func) is cst.Name:
            if func.value == "get_tokenizer":
                yield TOKENIZER
            if not scope.lookup(func.value) and call.args:
                yield from self._infer_builtin(func.value, call, scope)
            target = resolve_function(self.index.methods, func, scope)
            if target is not None:
                yield from self._function_call_types(target)
        if self.helpers is not None and resolve_function(self.index.methods, func, scope) is None:
            yield from self._project_call_types(call, scope)

    def _project_call_types(self, call: cst.Call, scope: Scope) -> Iterator[TType]:
        """A project class's constructor gives an instance; a function of another module (or a
        method of a project class) gives what its summary says it returns."""
        assert self.helpers is not None
        qualified = self.helpers.is_class(call.func, scope)
        if qualified is not None:
            yield instance(qualified)
            return
        target = self.helpers.target(call, scope)
        if isinstance(target, tuple):
            target = target[0]
        if target is None:
            return
        if not isinstance(target, Summary):
            yield from self._function_call_types(target)  # a method through an instance
            return
        made: list[TType] = []
        for ref in target.returns:
            method = ref.method
            if method is not None:
                made.append(future(result_of(method, call), method, call))
        made.extend(client(kind) for kind in sorted(target.returns_clients, key=str))
        for t in made:
            yield TType(Kind.COROUTINE, inner=t) if target.is_async else t

    def _infer_builtin(self, name: str, call: cst.Call, scope: Scope) -> Iterator[TType]:
        """``enumerate``, ``zip``, ``list`` and friends keep track of the futures they carry."""
        if name in _SEQUENCE_BUILTINS:
            yield from (t for t in self.types(call.args[0].value, scope) if t.kind is Kind.LIST)
        elif name == "enumerate":
            inner = _elements(self.types(call.args[0].value, scope))
            if inner:
                yield TType(Kind.LIST, inner=TType(Kind.TUPLE, items=(frozenset(), inner)))
        elif name == "zip":
            items = tuple(_elements(self.types(a.value, scope)) for a in call.args if not a.star)
            if any(items):
                yield TType(Kind.LIST, inner=TType(Kind.TUPLE, items=items))

    def _future_method(self, t: TType, name: str, call: cst.Call) -> Iterator[TType]:
        if not t.is_future or t.inner is None:
            return
        if name == "result":
            yield t.inner
        elif name in ("result_async", "coroutine", "future"):
            # The same request's value, awaited (a coroutine) or as a concurrent.futures.Future.
            kind = Kind.CONCURRENT_FUTURE if name == "future" else Kind.COROUTINE
            yield TType(
                kind, inner=t.inner, method=t.method, origin_id=t.origin_id, origin=t.origin
            )

    def _sdk_return(self, method: SdkMethod, call: cst.Call) -> Iterator[TType]:
        value = result_of(method, call)
        if method.returns is Returns.FUTURE:
            yield future(value, method, call)
        elif method.returns is Returns.CLIENT_FUTURE:
            yield TType(
                Kind.CLIENT_FUTURE,
                client=method.makes,
                inner=value,
                method=method,
                origin_id=id(call),
                origin=call,
            )
        elif method.returns is Returns.FUTURE_AFTER_AWAIT:
            yield TType(
                Kind.COROUTINE,
                inner=future(value, method, call),
                method=method,
                origin_id=id(call),
                origin=call,
            )
        elif method.returns is Returns.VALUE_AFTER_AWAIT:
            yield TType(Kind.COROUTINE, inner=value, method=method, origin_id=id(call), origin=call)
        else:
            yield value

    def function_call_types(self, target: FunctionInfo) -> Iterator[TType]:
        """What a call of the module's function ``target`` gives."""
        if not self.settled:
            self.settle()
        return self._function_call_types(target)

    def _function_call_types(self, target: FunctionInfo) -> Iterator[TType]:
        returned = [t for expr in target.returns for t in self.types(expr, target.scope)]
        if target.node.returns is not None:
            returned.extend(self.annotation_types(target.node.returns.annotation, target.scope))
        for t in returned:
            yield TType(Kind.COROUTINE, inner=t) if target.is_async else t

    def _infer_gather(self, expr: cst.Await, scope: Scope) -> Iterator[TType]:
        inner = expr.expression
        if isinstance(inner, cst.Call) and self.is_gather(inner, scope):
            for arg in inner.args:
                for t in self.types(arg.value, scope):
                    element = t.inner if arg.star == "*" and t.kind is Kind.LIST else t
                    if element is not None and element.awaited() is not None:
                        yield TType(Kind.LIST, inner=element.awaited())

    def is_tokenizer(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return any(t.kind is Kind.TOKENIZER for t in self.types(expr, scope))

    def calls_tokenizer(self, call: cst.Call, scope: Scope) -> bool:
        """``tokenizer(text)``, ``self.tokenizer(text)``: a call of a tokenizer object itself (its
        ``__call__`` tokenizes), not of a function that gives one (``get_tokenizer()``,
        ``tc.get_tokenizer()``, a method of this module)."""
        func = call.func
        if isinstance(func, cst.Name):
            name = func.value
        elif isinstance(func, cst.Attribute):
            name = func.attr.value
        else:
            return False
        if _TOKENIZER_FACTORY_NAME.match(name) is not None:
            return False
        if resolve_function(self.index.methods, func, scope) is not None:
            return False
        return self.is_tokenizer(func, scope)

    def is_gather(self, call: cst.Call, scope: Scope) -> bool:
        return self.qualify(call.func, scope) == "asyncio.gather"


def _elements(types: frozenset[TType]) -> frozenset[TType]:
    """What iterating over a value of one of ``types`` gives."""
    return frozenset(t.inner for t in types if t.kind is Kind.LIST and t.inner is not None)


def _position(types: frozenset[TType], index: int, size: int) -> frozenset[TType]:
    """Position ``index`` of a ``size``-long unpacking: from a tuple of that length if there is
    one, else any element of a sequence (``a, b = futures``)."""
    tuples = [v for v in types if v.kind is Kind.TUPLE and len(v.items) == size]
    if tuples:
        return frozenset(t for v in tuples for t in v.items[index])
    return _elements(types)


def _literal_index(expr: cst.Subscript) -> int | None:
    """``x[1]`` -> 1, ``x[-1]`` -> -1; None for slices and computed indexes."""
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = expr.slice[0].slice.value
    negative = False
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value, negative = value.expression, True
    if isinstance(value, cst.Integer):
        number = int(value.value, 0)
        return -number if negative else number
    return None
