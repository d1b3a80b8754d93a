"""The records of one module: scopes and the bindings in them, functions, loops, call sites, and
the SDK calls found among them; and the name questions asked of a scope (``qualify``).

``eq=False`` dataclasses: a record is its own identity, so it can key a dict or a set directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import cast

import libcst as cst

from tinker_lint.model.facts.imports import ImportMap, dotted_name
from tinker_lint.model.facts.sdk import SdkMethod

FunctionNode = cst.FunctionDef
LoopNode = cst.For | cst.While
CompNode = cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp


class BindingKind(str, Enum):
    """What a binding's value is, read from its ``expr`` (what ``infer.py`` follows).

    A ``str`` enum whose values are the strings the pass used before (``"value"``...), so a
    comparison with the string still holds; compare with the members."""

    VALUE = "value"  # ``expr`` is the value: ``x = expr``, ``(x := expr)``, ``with expr as x``
    ANNOTATION = "annotation"  # ``expr`` is an annotation: ``x: T``, ``def f(x: T)``
    ITER = "iter"  # an element of the iterable ``expr``: ``for x in expr``
    # Position ``index`` of a ``size``-long unpacking of the value (``a, b = expr``) / of an
    # element of the iterable (``for i, x in expr``).
    UNPACK = "unpack"
    ITER_UNPACK = "iter-unpack"
    # ``expr`` is stored into the container: ``xs.append(expr)``, ``xs[k] = expr``.
    ELEMENT = "element"
    ELEMENTS = "elements"  # every element of ``expr`` is (``xs.extend(expr)``)
    DEF = "def"  # ``def``: ``function`` is its record
    CLASS = "class"  # ``class``: ``expr`` is the statement
    UNKNOWN = "unknown"  # a parameter without annotation, a starred or nested target...
    # Only in ``Scope.names``: ``expr`` is the ``ImportAlias``; no value (``del x``, ``global x``).
    IMPORT = "import"
    NONE = "none"


class BindingSite(Enum):
    """The syntax that binds (``Binding.site``): what name resolution and reaching definitions
    read (``facts/references.py``, ``analyses/dataflow.py``); ``Binding.kind`` says what the value
    is."""

    ASSIGNMENT = "assignment"  # ``x = v``; each name of ``a, (b, *c) = v``
    ANNOTATED = (
        "annotated assignment"  # ``x: T = v``: two bindings, the annotation's and the value's
    )
    ANNOTATION = "annotation"  # ``x: T`` alone: makes ``x`` local, gives it no value
    AUGMENTED = "augmented assignment"  # ``x += v``: reads ``x``, then binds it
    WALRUS = "walrus"  # ``(x := v)``; in a comprehension it binds in the scope around it
    FOR_TARGET = "for target"
    COMPREHENSION_TARGET = "comprehension target"  # bound in the comprehension's own scope
    WITH_TARGET = "with target"
    EXCEPT_NAME = "except name"  # ``except E as e`` (unbound again after the handler)
    PARAMETER = "parameter"
    IMPORT = "import"  # ``import a.b`` binds ``a``; ``from m import x as y`` binds ``y``
    FUNCTION_DEF = "function def"
    CLASS_DEF = "class def"
    MATCH_CAPTURE = "match capture"  # ``case Point(x=px)``, ``case [*rest]``, ``case {**kw}``
    DELETION = "del"  # ``del x``: unbinds
    GLOBAL = "global"  # ``global x``: a declaration, no value
    NONLOCAL = "nonlocal"  # ``nonlocal x``: a declaration, no value
    # Bind no name (not in ``Scope.names``): ``xs.append(v)``, ``xs[k] = v`` (kept with ``xs``'s
    # bindings), and ``self.x = v`` or a class body's ``x: T`` (``ModuleIndex.class_attrs``).
    STORE = "container store"
    ATTRIBUTE = "attribute"


@dataclass(eq=False, slots=True)  # slots: the pass makes one per name bound
class Binding:
    """One place a name gets a value: ``x = expr``, ``x: T``, ``for x in expr``, ``with e as x``;
    and, in ``Scope.names`` only, the other places a name is bound or declared (imports, ``except
    ... as e``, ``x += v``, ``del x``, ``global x``, match captures: see ``BindingSite``)."""

    kind: BindingKind
    expr: cst.CSTNode | None
    scope: Scope  # the scope whose ``bindings`` hold it (a comprehension's targets: the one around)
    function: FunctionInfo | None = None  # for BindingKind.DEF
    index: int = 0
    size: int = 0
    site: BindingSite = BindingSite.ASSIGNMENT
    # The target: the ``Name`` bound (``import a.b``: ``a``); the container of a store, the
    # attribute of ``self.x``.
    node: cst.CSTNode | None = None
    # The scope whose ``names`` hold it, by Python's rules: a comprehension's own for its targets,
    # the function around a comprehension for a walrus in it; None for a store or an attribute.
    namespace: Scope | None = None
    # The pass's sequence number: bindings are numbered as they are made, a statement's when the
    # pass enters it (before what it reads), so in one scope this is their statements' order.
    order: int = 0

    @property
    def name(self) -> str | None:
        """The name bound (None for a store or an attribute)."""
        node = self.node
        return node.value if type(node) is cst.Name and self.namespace is not None else None


@dataclass(eq=False)
class Scope:
    # "module" | "function" | "class" | "comprehension" (only in ``namespace`` and ``parent``
    # chains of the name tables: the analyses' ``Binding.scope`` is never a comprehension)
    kind: str
    node: cst.CSTNode
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    function: FunctionInfo | None = None
    class_name: str | None = None
    # Every binding of the module, in the order made (``SemanticModel.bindings``).
    registry: list[Binding] | None = None
    # Where the module scope notes its bindings, by name, while the collector records what one
    # top-level statement binds (``collect.py``, to bind them again in the next lint).
    log: list[tuple[str, Binding]] | None = None
    # Python's name table of the scope: every binding made in it, of every site, by name, in the
    # order made (``facts/references.py`` resolves names with it). ``bindings`` is what the
    # analyses follow: no imports, deletions or declarations, comprehension targets in the scope
    # around, stores into a container with its bindings.
    names: dict[str, list[Binding]] = field(default_factory=dict)
    names_log: list[tuple[str, Binding]] | None = None  # as ``log``, for ``names``

    def bind(self, name: str, binding: Binding) -> None:
        """Enter ``binding`` in ``bindings`` (and in ``names`` when it is a name of this scope)."""
        self.bindings.setdefault(name, []).append(binding)
        if self.registry is not None:
            self.registry.append(binding)
        if self.log is not None:
            self.log.append((name, binding))
        if binding.namespace is self:
            self.names.setdefault(name, []).append(binding)
            if self.names_log is not None:
                self.names_log.append((name, binding))

    def declare(self, name: str, binding: Binding) -> None:
        """Enter ``binding`` in the scope's name table."""
        self.names.setdefault(name, []).append(binding)
        if self.names_log is not None:
            self.names_log.append((name, binding))

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
    # Where it comes in the module: calls are collected in source order, and this counts them.
    # What is ordered by place (the factory calls TNK106 reports) is ordered by it, never by a
    # set's order, which the hash seed and the nodes' addresses decide.
    order: int = 0

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
    # For on_client_future: every factory call whose future the receiver may be, in source order
    # (``sc`` made before a loop and again every few steps in it: both).
    receiver_origins: tuple[cst.CSTNode, ...] = ()


def qualify(imports: ImportMap, node: cst.BaseExpression, scope: Scope) -> str | None:
    """``tk.ServiceClient`` -> ``tinker.ServiceClient`` unless the head name is local."""
    dotted = dotted_name(node)
    if dotted is None or scope.lookup(dotted.split(".")[0]):
        return None  # not a name, or one rebound in this module (``tinker = ...``)
    return imports.qualify(node)


def is_tinker_name(qualified: str | None, *names: str) -> bool:
    """``tinker.X`` for one of ``names`` (any submodule: ``tinker.lib.public_interfaces.X``)."""
    if qualified is None or not qualified.startswith("tinker."):
        return False
    return qualified.rsplit(".", 1)[-1] in names


def resolve_function(
    methods: dict[str, dict[str, FunctionInfo]], func: cst.BaseExpression, scope: Scope
) -> FunctionInfo | None:
    """The function of this module that ``func(...)`` calls, when it is plain to see: a name bound
    by a ``def``, or ``self.method`` of the enclosing class (``methods``: class -> name -> def)."""
    # Exact types: ``isinstance`` on libcst's classes goes through ``ABCMeta`` (slow).
    kind = type(func)
    if kind is cst.Name:
        for binding in scope.lookup(cast(cst.Name, func).value):
            if binding.kind is BindingKind.DEF:
                return binding.function
        return None
    if kind is not cst.Attribute:
        return None
    attribute = cast(cst.Attribute, func)
    receiver = attribute.value
    if type(receiver) is cst.Name:
        function = scope.function
        if (
            function is not None
            and function.class_name is not None
            and receiver.value == function.self_name
        ):
            return methods.get(function.class_name, {}).get(attribute.attr.value)
    return None


def self_attribute_bindings(
    expr: cst.Attribute, scope: Scope, class_attrs: dict[str, dict[str, list[Binding]]]
) -> list[Binding]:
    """Where ``self.x`` got its values, for ``self`` of a class of this module (``class_attrs``:
    the module's ``self.x = ...`` bindings by class and attribute); nothing for any other
    attribute."""
    function = scope.function
    if (
        function is not None
        and isinstance(expr.value, cst.Name)
        and expr.value.value == function.self_name
        and function.class_name is not None
    ):
        return class_attrs.get(function.class_name, {}).get(expr.attr.value, [])
    return []


def functions_reaching(
    functions: list[FunctionInfo],
    methods: dict[str, dict[str, FunctionInfo]],
    direct: Callable[[CallSite], bool],
) -> dict[FunctionInfo, CallSite]:
    """Functions whose calls include one ``direct`` picks, themselves or through other functions
    of the module (to a fixpoint): function -> that call (the first found)."""
    found: dict[FunctionInfo, CallSite] = {}
    for function in functions:
        for site in function.calls:
            if direct(site):
                found[function] = site
                break
    changed = True
    while changed:
        changed = False
        for function in functions:
            if function in found:
                continue
            for site in function.calls:
                target = resolve_function(methods, site.node.func, site.scope)
                if target is not None and target in found:
                    found[function] = found[target]
                    changed = True
                    break
    return found
