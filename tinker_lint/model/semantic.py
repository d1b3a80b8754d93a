"""The semantic model of one module: what is a Tinker client, a future, a submit, a wait, a hot loop.

Built from one libcst traversal (``_Collector``) that records scopes, bindings, functions, loops and
call sites with their context; types are then inferred on demand and memoised. No libcst metadata
provider besides positions is used: see ``shared/performance-notes.md``.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import re
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import libcst as cst
from libcst import MaybeSentinel

from tinker_lint.model import sdk
from tinker_lint.model.cadence import is_cadence_test
from tinker_lint.model.imports import ImportMap, dotted_name
from tinker_lint.model.names import CONTAINER_GETS, CONTAINER_VIEWS, names_hot_call
from tinker_lint.model.sdk import Returns, Role, SdkMethod
from tinker_lint.model.types import ARRAY, TOKENIZER, Kind, TType, client, future, result_of

FunctionNode = cst.FunctionDef
LoopNode = cst.For | cst.While
CompNode = cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp

TOKENIZER_FACTORIES = frozenset(
    {
        "transformers.AutoTokenizer.from_pretrained",
        "transformers.PreTrainedTokenizerFast.from_pretrained",
        "tinker_cookbook.tokenizer_utils.get_tokenizer",
    }
)
# Container methods that store their (last) argument: as one element, or each of its elements.
_CONTAINER_STORES = {
    "append": "element",
    "appendleft": "element",
    "add": "element",
    "insert": "element",
    "put": "element",
    "put_nowait": "element",
    "extend": "elements",
}
# Container methods that give back an element (not ``get``: ``asyncio.Queue.get()`` is a
# coroutine, and ``await queue.get()`` must not read as a wait on the future it returns), and
# builtins that keep a sequence's elements.
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "reversed", "sorted", "iter"})

# A value named ``tokenizer``, ``self._tokenizer``, ``renderer.tokenizer``, ``teacher_tokenizer`` is
# a tokenizer when dataflow says nothing else. Lower case only: ``Tokenizer`` is a class, and
# ``tokenizer_name`` / ``tokenizer_path`` are strings.
_TOKENIZER_NAME = re.compile(r"(?:^|_)tokenizer$")
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

# Modules whose functions make or compute arrays (``np.array``, ``torch.tensor``, ``F.softmax``).
_ARRAY_MODULES = frozenset(
    {"numpy", "numpy.linalg", "torch", "torch.nn.functional", "torch.linalg", "torch.special"}
)
# Functions of those modules whose result is not an array.
_NOT_ARRAY_FUNCTIONS = frozenset(
    {
        "no_grad",
        "inference_mode",
        "enable_grad",
        "set_grad_enabled",
        "device",
        "dtype",
        "finfo",
        "iinfo",
        "errstate",
        "manual_seed",
        "seed",
        "load",
        "save",
        "compile",
        "is_tensor",
        "isscalar",
        "set_printoptions",
        "get_default_dtype",
        "set_default_dtype",
    }
)
# Array methods whose result is a Python value, not an array.
_ARRAY_SCALAR_METHODS = frozenset(
    {"item", "tolist", "size", "dim", "numel", "nelement", "element_size", "is_contiguous"}
)


@dataclass(eq=False)
class Binding:
    """One place a name gets a value: ``x = expr``, ``x: T``, ``for x in expr``, ``with e as x``."""

    # "value" | "annotation" | "iter" | "def" | "unknown"; "unpack" / "iter-unpack": position
    # ``index`` of a ``size``-long unpacking of the value / of an element of the iterable;
    # "element": ``expr`` is stored into the container (``xs.append(expr)``, ``xs[k] = expr``);
    # "elements": every element of ``expr`` is (``xs.extend(expr)``).
    kind: str
    expr: cst.CSTNode | None
    scope: Scope
    function: FunctionInfo | None = None  # for kind == "def"
    index: int = 0
    size: int = 0


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "function" | "class"
    node: cst.CSTNode
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    function: FunctionInfo | None = None
    class_name: str | None = None
    # Every binding of the module, in the order made (``SemanticModel.bindings``).
    registry: list[Binding] | None = None

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)
        if self.registry is not None:
            self.registry.append(binding)

    def lookup(self, name: str) -> list[Binding]:
        scope: Scope | None = self
        first = True
        while scope is not None:
            # Names bound in a class body are not visible from its methods.
            if (first or scope.kind != "class") and name in scope.bindings:
                return scope.bindings[name]
            first = False
            scope = scope.parent
        return []


@dataclass(eq=False)
class FunctionInfo:
    node: FunctionNode
    scope: Scope
    parent: FunctionInfo | None
    class_name: str | None
    self_name: str | None
    returns: list[cst.BaseExpression] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def is_async(self) -> bool:
        return self.node.asynchronous is not None


@dataclass(eq=False)
class LoopInfo:
    node: LoopNode | CompNode
    scope: Scope
    function: FunctionInfo | None
    parent: LoopInfo | None
    guarded: bool
    calls: list[CallSite] = field(default_factory=list)
    guard_depth: int = 0  # cadence guards around the loop inside its function

    @property
    def is_comprehension(self) -> bool:
        return not isinstance(self.node, cst.For | cst.While)

    @property
    def body(self) -> cst.CSTNode:
        if isinstance(self.node, cst.For | cst.While):
            return self.node.body
        return self.node


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    scope: Scope
    function: FunctionInfo | None
    loops: tuple[LoopInfo, ...]  # enclosing loops in the same function, outermost first
    guarded: bool  # under a cadence guard inside its function
    guard_depth: int = 0  # how many: more than a loop's means a guard inside that loop

    def guarded_in(self, loop: LoopInfo) -> bool:
        """Under a cadence guard inside ``loop``: runs on some iterations only."""
        return self.guard_depth > loop.guard_depth


@dataclass(frozen=True)
class SdkCall:
    """A call of a Tinker SDK method, and why we believe the receiver is a Tinker client."""

    node: cst.Call
    method: SdkMethod
    evidence: str  # "dataflow" | "distinctive" | "name" | "keyword"
    on_client_future: bool = False  # the receiver is 0.38's future of a client, used as the client
    receiver_origin: cst.CSTNode | None = None  # for on_client_future: the factory call


# Layout and punctuation: never asked about, so neither indexed nor entered (about half the nodes).
_TRIVIA: frozenset[type[cst.CSTNode]] = frozenset(
    {
        cst.Comment,
        cst.EmptyLine,
        cst.Newline,
        cst.ParenthesizedWhitespace,
        cst.SimpleWhitespace,
        cst.TrailingWhitespace,
        cst.Comma,
        cst.Colon,
        cst.Semicolon,
        cst.Dot,
        cst.AssignEqual,
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
    }
)
_CHILD_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
# What a field's value is, by its exact type: memoised, since ``isinstance`` on libcst's abstract
# classes is slow.
_NODE, _MANY, _OTHER = "node", "many", "other"
_KINDS: dict[type, str] = {tuple: _MANY, list: _MANY, str: _OTHER, type(None): _OTHER}


def _kind(value_type: type) -> str:
    if issubclass(value_type, cst.CSTNode):
        kind = _OTHER if value_type in _TRIVIA else _NODE
    else:
        kind = _MANY if issubclass(value_type, tuple | list) else _OTHER
    _KINDS[value_type] = kind
    return kind


class _FieldOrder(cst.CSTVisitor):
    """Records the fields libcst visits, in its order (the source order), without descending."""

    def __init__(self) -> None:
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.fields:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def child_fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The fields of ``node``'s class that may hold child nodes other than layout, in libcst's
    visiting order.

    Asked of libcst once per class (it reports every field it visits, empty or not), so walking the
    tree needs neither libcst's visitor machinery, which rebuilds every node it passes, nor
    ``node.children``, which does the same. Fields whose declared type admits only layout or
    punctuation (``lpar``, ``whitespace_after_func``) or no node at all are left out."""
    cls = type(node)
    found = _CHILD_FIELDS.get(cls)
    if found is None:
        probe = _FieldOrder()
        node._visit_and_replace_children(probe)
        declared = {f.name: f.type for f in dataclasses.fields(node)}
        # A field libcst skips when empty (FormattedStringExpression.format_spec) comes last.
        order = [*probe.fields, *(name for name in declared if name not in probe.fields)]
        found = tuple(name for name in order if _may_hold_node(declared.get(name, object)))
        _CHILD_FIELDS[cls] = found
    return found


def _may_hold_node(annotation: object) -> bool:
    """False only when ``annotation`` surely admits nothing but layout nodes and plain values;
    anything unrecognised (a string annotation, a forward reference) may hold a node."""
    if isinstance(annotation, type):
        if issubclass(annotation, cst.CSTNode):
            return not _only_layout(annotation)
        return not issubclass(annotation, str | bool | int | float | type(None) | MaybeSentinel)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return False
    if origin in (typing.Union, types.UnionType) or (
        isinstance(origin, type) and issubclass(origin, Sequence)
    ):
        return any(_may_hold_node(arg) for arg in typing.get_args(annotation))
    return True


def _only_layout(cls: type[cst.CSTNode]) -> bool:
    # By name: libcst's ``add_slots`` leaves the class it replaced among the subclasses.
    if (cls.__module__, cls.__qualname__) in _TRIVIA_NAMES:
        return True
    subclasses = cls.__subclasses__()
    return inspect.isabstract(cls) and bool(subclasses) and all(map(_only_layout, subclasses))


_TRIVIA_NAMES = frozenset((cls.__module__, cls.__qualname__) for cls in _TRIVIA)


_IF = cst.If
_LEAF = object()  # a class without children (Name, Integer, ...)
# Per class: a function giving the values of its child fields, in order, at once.
_CHILDREN: dict[type[cst.CSTNode], Callable[[cst.CSTNode], tuple[Any, ...]] | object] = {}


def _children_getter(node: cst.CSTNode) -> Callable[[cst.CSTNode], tuple[Any, ...]] | object:
    fields = child_fields(node)
    if not fields:
        getter: Callable[[cst.CSTNode], tuple[Any, ...]] | object = _LEAF
    elif len(fields) == 1:
        one = operator.attrgetter(fields[0])
        getter = lambda node: (one(node),)  # noqa: E731 - attrgetter of one field gives no tuple
    else:
        getter = operator.attrgetter(*fields)
    _CHILDREN[type(node)] = getter
    return getter


class _Collector:
    """One pass over the module: scopes, bindings, functions, loops, call sites, imports; and the
    tree index (children and parents), so later walks never re-enter libcst."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self.scopes: list[Scope] = [model.module_scope]
        self.functions: list[FunctionInfo | None] = [None]
        self.loops: list[list[LoopInfo]] = [[]]
        self.guards: list[int] = [0]
        self.classes: list[str] = []
        self.children_of = model.children_of
        self.parent_of = model.parent_of
        self.enter: dict[type, Callable[[Any], bool | None]] = {}
        self.leave: dict[type, Callable[[Any], None]] = {}
        for name in dir(type(self)):
            kind, _, node_type = name.partition("_")
            if kind in ("visit", "leave") and node_type and hasattr(cst, node_type):
                table = self.enter if kind == "visit" else self.leave
                table[getattr(cst, node_type)] = getattr(self, name)

    def visit(self, node: cst.CSTNode) -> None:
        """Index ``node``'s subtree, calling ``visit_<Type>`` before and ``leave_<Type>`` after each
        node, as libcst's visitors do; ``visit_*`` returning False skips the children."""
        cls = type(node)
        enter = self.enter.get(cls)
        if enter is None or enter(node) is not False:
            children = _CHILDREN.get(cls) or _children_getter(node)
            if cls is _IF:
                self._visit_if(node)
            elif children is not _LEAF:
                kids: list[cst.CSTNode] = []
                parent_of = self.parent_of
                for value in children(node):
                    kind = _KINDS.get(type(value)) or _kind(type(value))
                    if kind is _NODE:
                        kids.append(value)
                        parent_of[id(value)] = node
                        self.visit(value)
                    elif kind is _MANY:
                        for item in value:
                            if (_KINDS.get(type(item)) or _kind(type(item))) is _NODE:
                                kids.append(item)
                                parent_of[id(item)] = node
                                self.visit(item)
                if kids:
                    self.children_of[id(node)] = kids
        leave = self.leave.get(cls)
        if leave is not None:
            leave(node)

    def _visit_if(self, node: cst.If) -> None:
        """``visit_If_body``/``leave_If_body``: the cadence guard covers the body, not the else."""
        kids: list[cst.CSTNode] = [node.test, node.body]
        self.parent_of[id(node.test)] = node
        self.visit(node.test)
        guarded = is_cadence_test(self.model.walk(node.test), self.model.cadence_names)
        if guarded:
            self.guards[-1] += 1
            self.model.guarded_blocks.add(id(node.body))
        self.parent_of[id(node.body)] = node
        self.visit(node.body)
        if guarded:
            self.guards[-1] -= 1
        if node.orelse is not None:
            kids.append(node.orelse)
            self.parent_of[id(node.orelse)] = node
            self.visit(node.orelse)
        self.children_of[id(node)] = kids

    # --- helpers ---------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def _bind_target(
        self,
        target: cst.BaseExpression,
        kind: str,
        expr: cst.CSTNode | None,
        index: int = 0,
        size: int = 0,
    ) -> None:
        if isinstance(target, cst.Name):
            self.scope.bind(target.value, Binding(kind, expr, self.scope, index=index, size=size))
        elif isinstance(target, cst.Tuple | cst.List):
            elements = target.elements
            values = (
                [e.value for e in expr.elements]
                if kind == "value" and isinstance(expr, cst.Tuple | cst.List)
                else None
            )
            starred = any(isinstance(e, cst.StarredElement) for e in elements)
            for i, element in enumerate(elements):
                if values is not None and len(values) == len(elements) and not starred:
                    self._bind_target(element.value, kind, values[i])
                elif (
                    kind in ("value", "iter")
                    and not starred
                    and not isinstance(element.value, cst.Tuple | cst.List)
                ):
                    # ``fwd, opt = submit_step(batch)``, ``for i, fut in enumerate(futures)``
                    unpack = "unpack" if kind == "value" else "iter-unpack"
                    self._bind_target(element.value, unpack, expr, i, len(elements))
                else:
                    self._bind_target(element.value, "unknown", None)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, "unknown", None)
        elif isinstance(target, cst.Attribute):
            binding = Binding(kind, expr, self.scope, index=index, size=size)
            self._bind_self_attribute(target, binding)
        elif isinstance(target, cst.Subscript) and kind == "value":
            self._store_element(target.value, "element", expr)

    def _store_element(self, container: cst.BaseExpression, kind: str, expr: cst.CSTNode | None):
        """``xs.append(fut)``, ``xs[k] = fut``: ``xs`` holds what ``fut`` is. Recorded with the
        name's own bindings (wherever it is bound), so a closure's append does not shadow it."""
        if isinstance(container, cst.Name):
            bindings = self.scope.lookup(container.value)
            if bindings:
                bindings.append(Binding(kind, expr, self.scope))
        elif isinstance(container, cst.Attribute):
            self._bind_self_attribute(container, Binding(kind, expr, self.scope))

    def _bind_self_attribute(self, target: cst.Attribute, binding: Binding) -> None:
        function = self.functions[-1]
        if (
            function is not None
            and function.class_name is not None
            and isinstance(target.value, cst.Name)
            and target.value.value == function.self_name
        ):
            attrs = self.model.class_attrs.setdefault(function.class_name, {})
            attrs.setdefault(target.attr.value, []).append(binding)
            self.model.bindings.append(binding)

    # --- imports ---------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.model.imports.add(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.model.imports.add(node)

    # --- scopes ----------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.bind(node.name.value, Binding("unknown", None, self.scope))
        scope = Scope(
            "class", node, self.scope, class_name=node.name.value, registry=self.model.bindings
        )
        self.scopes.append(scope)
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        enclosing = self.scope
        class_name = enclosing.class_name if enclosing.kind == "class" else None
        params = [*node.params.posonly_params, *node.params.params]
        self_name = params[0].name.value if class_name and params else None
        scope = Scope("function", node, enclosing, registry=self.model.bindings)
        info = FunctionInfo(node, scope, self.functions[-1], class_name, self_name)
        scope.function = info
        enclosing.bind(node.name.value, Binding("def", None, enclosing, info))
        if class_name is not None:
            self.model.methods.setdefault(class_name, {})[node.name.value] = info
        self.model.functions.append(info)
        self.model.function_of_node[id(node)] = info
        all_params = [
            *params,
            *node.params.kwonly_params,
            *(
                p
                for p in (node.params.star_arg, node.params.star_kwarg)
                if isinstance(p, cst.Param)
            ),
        ]
        for param in all_params:
            if param.annotation is not None:
                scope.bind(
                    param.name.value, Binding("annotation", param.annotation.annotation, scope)
                )
            else:
                scope.bind(param.name.value, Binding("unknown", None, scope))
        self.scopes.append(scope)
        self.functions.append(info)
        self.loops.append([])
        self.guards.append(0)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.functions.pop()
        self.loops.pop()
        self.guards.pop()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # a lambda's body runs later; nothing in it is a step of the loop

    # --- bindings --------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, "value", node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        target = node.target
        if self.scope.kind == "class" and isinstance(target, cst.Name):
            attrs = self.model.class_attrs.setdefault(self.scope.class_name or "", {})
            binding = Binding("annotation", node.annotation.annotation, self.scope)
            attrs.setdefault(target.value, []).append(binding)
            self.model.bindings.append(binding)
        self._bind_target(target, "annotation", node.annotation.annotation)
        if node.value is not None:
            self._bind_target(target, "value", node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, "value", node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, "value", node.item)

    def visit_Return(self, node: cst.Return) -> None:
        function = self.functions[-1]
        if function is not None and node.value is not None:
            function.returns.append(node.value)

    # --- loops and guards ------------------------------------------------------------------
    def _enter_loop(self, node: LoopNode | CompNode) -> None:
        stack = self.loops[-1]
        info = LoopInfo(
            node,
            self.scope,
            self.functions[-1],
            stack[-1] if stack else None,
            self.guards[-1] > 0,
            guard_depth=self.guards[-1],
        )
        self.model.loops.append(info)
        self.model.loop_of_node[id(node)] = info
        stack.append(info)

    def _leave_loop(self) -> None:
        self.loops[-1].pop()

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, "iter", node.iter)
        self._enter_loop(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop()

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, "iter", node.iter)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_loop(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._leave_loop()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._enter_loop(node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._leave_loop()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._enter_loop(node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._leave_loop()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_loop(node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._leave_loop()

    # --- calls -----------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and len(node.args) == 1 + (func.attr.value == "insert"):
            stored = _CONTAINER_STORES.get(func.attr.value)
            if stored is not None:
                self._store_element(func.value, stored, node.args[-1].value)
        loops = tuple(self.loops[-1])
        depth = self.guards[-1]
        site = CallSite(node, self.scope, self.functions[-1], loops, depth > 0, depth)
        self.model.calls.append(site)
        self.model.call_site_of[id(node)] = site
        if site.function is not None:
            site.function.calls.append(site)
        for loop in loops:
            loop.calls.append(site)


class SemanticModel:
    """What one module says about Tinker; rules ask it questions."""

    def __init__(
        self,
        module: cst.Module,
        *,
        cadence_names: re.Pattern[str] | None = None,
        hot_loop_calls: re.Pattern[str] | None = None,
    ) -> None:
        self.module = module
        self.cadence_names = cadence_names
        # Calls (by name) that the project says submit a step, e.g. a wrapper from another module.
        self.hot_loop_calls = hot_loop_calls
        self.imports = ImportMap()
        self.bindings: list[Binding] = []
        self.module_scope = Scope("module", module, None, registry=self.bindings)
        self.functions: list[FunctionInfo] = []
        self.function_of_node: dict[int, FunctionInfo] = {}
        self.methods: dict[str, dict[str, FunctionInfo]] = {}
        self.class_attrs: dict[str, dict[str, list[Binding]]] = {}
        self.loops: list[LoopInfo] = []
        self.loop_of_node: dict[int, LoopInfo] = {}
        self.calls: list[CallSite] = []
        self.call_site_of: dict[int, CallSite] = {}
        self.guarded_blocks: set[int] = set()
        self.children_of: dict[int, list[cst.CSTNode]] = {}
        self.parent_of: dict[int, cst.CSTNode] = {}
        # Memos for the flow questions (tinker_lint.model.flow), keyed by node id.
        self.events_cache: dict[tuple[int, int], list] = {}
        self.reads_cache: dict[int, set[str]] = {}
        self.writes_cache: dict[int, tuple[set[str], set[str], set[str]]] = {}
        self._types: dict[tuple[int, int], frozenset[TType]] = {}
        self._binding_types: dict[int, frozenset[TType]] = {}
        self._sdk_calls: dict[int, SdkCall | None] = {}
        self._in_progress: set[int] = set()
        self._settled = False
        self._hot_entries: dict[int, CallSite | None] = {}
        # Memo for tinker_lint.model.hot (where CPU work runs per step).
        self.hot_cache: dict[object, object] = {}
        _Collector(self).visit(module)

    # ======================================================================================
    # The tree
    # ======================================================================================
    def children(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        return self.children_of.get(id(node), [])

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parent_of.get(id(node))

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        """Whether ``inner`` is ``outer`` or inside it."""
        node: cst.CSTNode | None = inner
        while node is not None:
            if node is outer:
                return True
            node = self.parent_of.get(id(node))
        return False

    def walk(self, node: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
        """``node`` and everything under it, pre-order; subtrees of ``skip`` types not entered."""
        stack = [node]
        children_of = self.children_of
        skipped: dict[type, bool] = {}  # isinstance on libcst's abstract classes is slow: memoise
        while stack:
            current = stack.pop()
            yield current
            if skip and current is not node:
                kind = type(current)
                verdict = skipped.get(kind)
                if verdict is None:
                    verdict = skipped[kind] = issubclass(kind, skip)
                if verdict:
                    continue
            kids = children_of.get(id(current))
            if kids:
                stack.extend(reversed(kids))

    # ======================================================================================
    # Names
    # ======================================================================================
    def qualify(self, node: cst.BaseExpression, scope: Scope) -> str | None:
        """``tk.ServiceClient`` -> ``tinker.ServiceClient`` unless the head name is local."""
        dotted = dotted_name(node)
        if dotted is None or scope.lookup(dotted.split(".")[0]):
            return None  # not a name, or one rebound in this module (``tinker = ...``)
        return self.imports.qualify(node)

    @staticmethod
    def array_function(qualified: str | None) -> str | None:
        """The qualified name of a numpy or torch function that makes or computes an array
        (``np.array``, ``torch.tensor``, ``torch.logsumexp``, ``F.softmax``), else None. Other
        submodules (``torch.nn`` layers, ``torch.cuda``) and helpers (``torch.no_grad``) are not."""
        if qualified is None:
            return None
        module, _, name = qualified.rpartition(".")
        if (
            module not in _ARRAY_MODULES
            or not name
            or not name[0].islower()
            or name in _NOT_ARRAY_FUNCTIONS
        ):
            return None
        return qualified

    def is_tinker_name(self, qualified: str | None, *names: str) -> bool:
        if qualified is None or not qualified.startswith("tinker."):
            return False
        return qualified.rsplit(".", 1)[-1] in names

    # ======================================================================================
    # Types
    # ======================================================================================
    def _settle(self) -> None:
        """Work out every binding's types once, in the order the bindings were made, before any
        other question. Types are inferred through bindings that may refer to each other
        (``tc = await tc``); where such a cycle is cut, what is kept depends on where the inference
        started, so it always starts here: no answer may depend on which rules ran, or in which
        order they asked (the pre-filters choose the rules)."""
        self._settled = True
        for binding in self.bindings:
            self.binding_types(binding)

    def types(self, expr: cst.BaseExpression, scope: Scope) -> frozenset[TType]:
        if not self._settled:
            self._settle()
        key = (id(expr), id(scope))
        cached = self._types.get(key)
        if cached is not None:
            return cached
        if key[0] in self._in_progress:
            return frozenset()
        self._in_progress.add(key[0])
        try:
            result = frozenset(self._infer(expr, scope))
        finally:
            self._in_progress.discard(key[0])
        self._types[key] = result
        return result

    def _infer(self, expr: cst.BaseExpression, scope: Scope) -> Iterator[TType]:
        if isinstance(expr, cst.Name):
            bindings = scope.lookup(expr.value)
            found = [t for binding in bindings for t in self.binding_types(binding)]
            yield from found
            if not found and self._named_tokenizer(expr.value, bindings):
                yield TOKENIZER
        elif isinstance(expr, cst.Attribute):
            found = list(self._infer_attribute(expr, scope))
            yield from found
            if not found and self._named_tokenizer(
                expr.attr.value, self._attr_bindings(expr, scope)
            ):
                yield TOKENIZER
        elif isinstance(expr, cst.Call):
            yield from self._infer_call(expr, scope)
        elif isinstance(expr, cst.Await):
            for t in self.types(expr.expression, scope):
                inner = t.awaited()
                if inner is not None:
                    yield inner
            yield from self._infer_gather(expr, scope)
        elif isinstance(expr, cst.List | cst.Tuple | cst.Set):
            # Both views: a sequence of any of its elements, and (unless starred) each position.
            items: list[frozenset[TType]] = []
            for element in expr.elements:
                value = element.value
                types = self.types(value, scope)
                items.append(types)
                for t in types:
                    if isinstance(element, cst.StarredElement):
                        yield t
                    else:
                        yield TType(Kind.LIST, inner=t)
            starred = any(isinstance(e, cst.StarredElement) for e in expr.elements)
            if not isinstance(expr, cst.Set) and not starred and any(items):
                yield TType(Kind.TUPLE, items=tuple(items))
        elif isinstance(expr, cst.ListComp | cst.SetComp | cst.GeneratorExp):
            for t in self.types(expr.elt, scope):
                yield TType(Kind.LIST, inner=t)
        elif isinstance(expr, cst.Subscript):
            yield from self._infer_subscript(expr, scope)
        elif isinstance(expr, cst.IfExp):
            yield from self.types(expr.body, scope)
            yield from self.types(expr.orelse, scope)
        elif isinstance(expr, cst.BooleanOperation):
            yield from self.types(expr.left, scope)
            yield from self.types(expr.right, scope)
        elif isinstance(expr, cst.NamedExpr):
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
        if not self._settled:
            self._settle()
        key = id(binding)
        cached = self._binding_types.get(key)
        if cached is not None:
            return cached
        if key in self._in_progress:
            return frozenset()
        self._in_progress.add(key)
        try:
            if binding.kind == "value" and isinstance(binding.expr, cst.BaseExpression):
                result = self.types(binding.expr, binding.scope)
            elif binding.kind == "annotation" and isinstance(binding.expr, cst.BaseExpression):
                result = frozenset(self.annotation_types(binding.expr, binding.scope))
            elif binding.kind == "iter" and isinstance(binding.expr, cst.BaseExpression):
                result = _elements(self.types(binding.expr, binding.scope))
            elif binding.kind == "unpack" and isinstance(binding.expr, cst.BaseExpression):
                values = self.types(binding.expr, binding.scope)
                result = _position(values, binding.index, binding.size)
            elif binding.kind == "iter-unpack" and isinstance(binding.expr, cst.BaseExpression):
                values = _elements(self.types(binding.expr, binding.scope))
                result = _position(values, binding.index, binding.size)
            elif binding.kind == "element" and isinstance(binding.expr, cst.BaseExpression):
                values = self.types(binding.expr, binding.scope)
                result = frozenset(TType(Kind.LIST, inner=t) for t in values)
            elif binding.kind == "elements" and isinstance(binding.expr, cst.BaseExpression):
                values = self.types(binding.expr, binding.scope)
                result = frozenset(t for t in values if t.kind is Kind.LIST)
            else:
                result = frozenset()
        finally:
            self._in_progress.discard(key)
        self._binding_types[key] = result
        return result

    def annotation_types(self, ann: cst.BaseExpression, scope: Scope) -> Iterator[TType]:
        if isinstance(ann, cst.SimpleString):
            try:
                parsed = cst.parse_expression(ann.evaluated_value)
            except (cst.ParserSyntaxError, ValueError, TypeError):
                return
            # A string annotation names things imported in this module.
            yield from self.annotation_types(parsed, self.module_scope)
            return
        if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
            yield from self.annotation_types(ann.left, scope)
            yield from self.annotation_types(ann.right, scope)
            return
        if isinstance(ann, cst.Subscript):
            head = dotted_name(ann.value) or ""
            last = head.rsplit(".", 1)[-1]
            args = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
            if last in ("Optional", "Union", "Annotated"):
                for arg in args[:1] if last == "Annotated" else args:
                    yield from self.annotation_types(arg, scope)
            elif last in ("list", "List", "Sequence", "Iterable", "tuple", "Tuple", "deque"):
                for arg in args[:1]:
                    for t in self.annotation_types(arg, scope):
                        yield TType(Kind.LIST, inner=t)
            elif last == "APIFuture" or self._names_tinker_class(ann.value, scope, "APIFuture"):
                inner = [t for arg in args for t in self.annotation_types(arg, scope)]
                yield TType(Kind.FUTURE, inner=inner[0] if inner else TType(Kind.RESULT))
            elif last == "NDArray" and (self.qualify(ann.value, scope) or "").startswith("numpy."):
                yield ARRAY
            return
        qualified = self.qualify(ann, scope) or ""
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("tinker.") or qualified.startswith("tinker_cookbook."):
            if last in sdk.CLIENT_CLASSES:
                yield client(sdk.CLIENT_CLASSES[last])
            elif last == "APIFuture":
                yield TType(Kind.FUTURE, inner=TType(Kind.RESULT))
            elif last == "Tokenizer":
                yield TOKENIZER
        elif last in (
            "PreTrainedTokenizer",
            "PreTrainedTokenizerFast",
            "PreTrainedTokenizerBase",
            "Tokenizer",
        ):
            yield TOKENIZER
        elif qualified in ("torch.Tensor", "numpy.ndarray"):
            yield ARRAY

    def _names_tinker_class(self, node: cst.BaseExpression, scope: Scope, name: str) -> bool:
        return self.is_tinker_name(self.qualify(node, scope), name)

    def _infer_attribute(self, expr: cst.Attribute, scope: Scope) -> Iterator[TType]:
        for binding in self._attr_bindings(expr, scope):
            yield from self.binding_types(binding)

    def _attr_bindings(self, expr: cst.Attribute, scope: Scope) -> list[Binding]:
        """Where ``self.x`` got its values, for ``self`` of a class of this module."""
        function = scope.function
        if (
            function is not None
            and isinstance(expr.value, cst.Name)
            and expr.value.value == function.self_name
            and function.class_name is not None
        ):
            return self.class_attrs.get(function.class_name, {}).get(expr.attr.value, [])
        return []

    def _named_tokenizer(self, name: str, bindings: list[Binding]) -> bool:
        """Whether a value with no inferred type is a tokenizer by its name (spec: "a name
        containing `tokenizer`"), unless a binding shows it is a string, number or container, or
        the name is a function or an import (``get_tokenizer``)."""
        if _TOKENIZER_NAME.search(name) is None or name in self.imports.aliases:
            return False
        for binding in bindings:
            if binding.kind == "def":
                return False
            if binding.kind == "value" and isinstance(binding.expr, _LITERALS):
                return False
            if binding.kind == "annotation" and isinstance(binding.expr, cst.BaseExpression):
                head = binding.expr
                if isinstance(head, cst.Subscript):
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
            if self.array_function(qualified) is not None:
                yield ARRAY
                return
        if isinstance(func, cst.Attribute):
            name = func.attr.value
            receiver = self.types(func.value, scope)
            if name in sdk.FUTURE_METHODS:
                for t in receiver:
                    yield from self._future_method(t, name, call)
            if name in ("to_torch", "to_numpy") or (
                name not in _ARRAY_SCALAR_METHODS and any(t.kind is Kind.ARRAY for t in receiver)
            ):
                yield ARRAY  # ``TensorData.to_torch()``, ``t.float()``, ``a.reshape(...)``
            sdk_call = self.sdk_call(call, scope)
            if sdk_call is not None:
                yield from self._sdk_return(sdk_call.method, call)
            elif name == "get_tokenizer" or (
                name == "from_pretrained" and "tokenizer" in (dotted_name(func.value) or "").lower()
            ):
                yield TOKENIZER
            # A method of this module's class, called on self.
            target = self.resolve_function(func, scope)
            if target is not None:
                yield from self._function_call_types(target)
            if name in CONTAINER_GETS:
                yield from _elements(receiver)
            elif name == "items":
                if values := _elements(receiver):
                    yield TType(Kind.LIST, inner=TType(Kind.TUPLE, items=(frozenset(), values)))
            elif name in CONTAINER_VIEWS:  # values(), copy()
                yield from (t for t in receiver if t.kind is Kind.LIST)
        elif isinstance(func, cst.Name):
            if func.value == "get_tokenizer":
                yield TOKENIZER
            if not scope.lookup(func.value) and call.args:
                yield from self._infer_builtin(func.value, call, scope)
            target = self.resolve_function(func, scope)
            if target is not None:
                yield from self._function_call_types(target)

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
        elif name in ("result_async", "coroutine"):
            yield TType(
                Kind.COROUTINE,
                inner=t.inner,
                method=t.method,
                origin_id=t.origin_id,
                origin=t.origin,
            )
        elif name == "future":
            yield TType(
                Kind.CONCURRENT_FUTURE,
                inner=t.inner,
                method=t.method,
                origin_id=t.origin_id,
                origin=t.origin,
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

    def is_gather(self, call: cst.Call, scope: Scope) -> bool:
        return self.qualify(call.func, scope) == "asyncio.gather"

    # ======================================================================================
    # Calls
    # ======================================================================================
    def resolve_function(self, func: cst.BaseExpression, scope: Scope) -> FunctionInfo | None:
        """The function of this module that ``func(...)`` calls, when it is plain to see."""
        if isinstance(func, cst.Name):
            for binding in scope.lookup(func.value):
                if binding.kind == "def":
                    return binding.function
            return None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            function = scope.function
            if (
                function is not None
                and function.class_name is not None
                and func.value.value == function.self_name
            ):
                return self.methods.get(function.class_name, {}).get(func.attr.value)
        return None

    def sdk_call(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None:
        """The Tinker method ``call`` invokes, if the receiver is (believed to be) a client."""
        if not self._settled:
            self._settle()
        key = id(call)
        if key in self._sdk_calls:
            return self._sdk_calls[key]
        if scope is None:
            site = self.call_site_of.get(key)
            if site is None:
                return None
            scope = site.scope
        self._sdk_calls[key] = None  # guards recursion through the receiver's type
        result = self._classify_sdk_call(call, scope)
        self._sdk_calls[key] = result
        return result

    def _classify_sdk_call(self, call: cst.Call, scope: Scope) -> SdkCall | None:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        name = func.attr.value
        receiver = func.value
        if self.qualify(receiver, scope) is not None:
            # ``tinker.SamplingClient.from_sampler_handle(...)``: a class method, or a module function.
            qualified = self.qualify(receiver, scope) or ""
            last = qualified.rsplit(".", 1)[-1]
            if qualified.startswith("tinker.") and last in sdk.CLIENT_CLASSES:
                method = sdk.lookup(sdk.CLIENT_CLASSES[last], name)
                return SdkCall(call, method, "dataflow") if method else None
            return None
        # A name bound both to a client and to a client's future (``tc = await tc``): taken for
        # the client, whatever order the set gives (a finding must not depend on it).
        for t in sorted(self.types(receiver, scope), key=_client_first):
            if t.kind is Kind.CLIENT and t.client is not None:
                method = sdk.lookup(t.client, name)
                if method is not None:
                    return SdkCall(call, method, "dataflow")
            if t.kind is Kind.CLIENT_FUTURE and t.client is not None:
                if name in sdk.FUTURE_METHODS:
                    return None
                method = sdk.lookup(t.client, name)
                if method is not None:
                    return SdkCall(call, method, "dataflow", True, t.origin)
        if name in sdk.DISTINCTIVE:
            return SdkCall(call, sdk.DISTINCTIVE[name], "distinctive")
        receiver_name = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        for hint, kind in sdk.RECEIVER_NAME_HINTS:
            if hint in receiver_name:
                method = sdk.lookup(kind, name)
                if method is not None:
                    return SdkCall(call, method, "name")
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in sdk.TINKER_ONLY_KEYWORDS:
                method = sdk.lookup(sdk.TINKER_ONLY_KEYWORDS[arg.keyword.value], name)
                if method is not None:
                    return SdkCall(call, method, "keyword")
        return None

    def submit_of(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None:
        """The SDK call if ``call`` submits a request (training, sampling or save)."""
        found = self.sdk_call(call, scope)
        return found if found is not None and found.method.is_submit else None

    def is_constructor(self, call: cst.Call, scope: Scope, *names: str) -> bool:
        return self.is_tinker_name(self.qualify(call.func, scope), *names)

    # ======================================================================================
    # Functions and hot loops
    # ======================================================================================
    @cached_property
    def submitting_functions(self) -> dict[int, CallSite]:
        """Functions of this module that submit a training/sampling request, directly or through
        another function of the module: function node id -> the call site that submits."""
        found: dict[int, CallSite] = {}
        for function in self.functions:
            for site in function.calls:
                if self._is_step_submit(site):
                    found[id(function.node)] = site
                    break
        changed = True
        while changed:
            changed = False
            for function in self.functions:
                if id(function.node) in found:
                    continue
                for site in function.calls:
                    target = self.resolve_function(site.node.func, site.scope)
                    if target is not None and id(target.node) in found:
                        found[id(function.node)] = found[id(target.node)]
                        changed = True
                        break
        return found

    @cached_property
    def function_submit_roles(self) -> dict[int, frozenset[Role]]:
        """Roles of the requests each function of this module submits, directly or through other
        functions of the module: function node id -> roles (only functions that submit)."""
        roles: dict[int, set[Role]] = {}
        for function in self.functions:
            for site in function.calls:
                submit = self.submit_of(site.node, site.scope)
                if submit is not None:
                    roles.setdefault(id(function.node), set()).add(submit.method.role)
        changed = True
        while changed:
            changed = False
            for function in self.functions:
                mine = roles.setdefault(id(function.node), set())
                for site in function.calls:
                    target = self.resolve_function(site.node.func, site.scope)
                    theirs = roles.get(id(target.node)) if target is not None else None
                    if theirs and not theirs <= mine:
                        mine |= theirs
                        changed = True
        return {key: frozenset(value) for key, value in roles.items() if value}

    def roles_submitted_by_call(self, call: cst.Call, scope: Scope) -> frozenset[Role]:
        """What calling ``call`` submits: its own request, or what the module function it calls
        submits."""
        submit = self.submit_of(call, scope)
        if submit is not None:
            return frozenset({submit.method.role})
        target = self.resolve_function(call.func, scope)
        if target is None:
            return frozenset()
        return self.function_submit_roles.get(id(target.node), frozenset())

    def loop_submit_roles(self, loop: LoopInfo) -> frozenset[Role]:
        """Roles of the requests a loop's body submits, directly or through module functions."""
        roles: set[Role] = set()
        for site in loop.calls:
            roles |= self.roles_submitted_by_call(site.node, site.scope)
        return frozenset(roles)

    def _is_step_submit(self, site: CallSite) -> bool:
        submit = self.submit_of(site.node, site.scope)
        if submit is not None and submit.method.role in (Role.TRAIN, Role.SAMPLE):
            return True
        return self.hot_loop_calls is not None and self._names_hot_call(site.node.func)

    def _names_hot_call(self, func: cst.BaseExpression) -> bool:
        name = dotted_name(func)
        if name is None or self.hot_loop_calls is None:
            return False
        return names_hot_call(name, self.hot_loop_calls)

    def hot_submit(self, loop: LoopInfo) -> CallSite | None:
        """The submit that makes ``loop`` hot: a training or sampling submit in its body, or the one
        inside the function of this module that the loop calls. None if the loop is not hot."""
        entry = self.hot_entry(loop)
        if entry is None or self._is_step_submit(entry):
            return entry
        target = self.resolve_function(entry.node.func, entry.scope)
        return self.submitting_functions[id(target.node)] if target is not None else None

    def hot_entry(self, loop: LoopInfo) -> CallSite | None:
        """The call in ``loop`` that makes it hot: the submit itself, or the call of a function of
        this module that submits (``train_step(batch)``). None if the loop is not hot."""
        key = id(loop)
        if key in self._hot_entries:
            return self._hot_entries[key]
        found = None
        for site in loop.calls:
            if self._is_step_submit(site):
                found = site
                break
            target = self.resolve_function(site.node.func, site.scope)
            if target is not None and id(target.node) in self.submitting_functions:
                found = site
                break
        self._hot_entries[key] = found
        return found

    def enclosing_hot_loops(self, site: CallSite) -> list[LoopInfo]:
        return [loop for loop in site.loops if self.hot_submit(loop) is not None]


def _client_first(t: TType) -> int:
    return 0 if t.kind is Kind.CLIENT else 1 if t.kind is Kind.CLIENT_FUTURE else 2


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
