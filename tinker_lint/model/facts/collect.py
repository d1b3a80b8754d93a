"""The one pass over a module: scopes, bindings, functions, loops, call sites, imports and cadence
guards, and the tree index (children and parents), so that later walks never re-enter libcst.

``collect(module)`` gives a ``ModuleIndex``; the semantic model answers every question from it.

In an editor (``collect(module, key=...)``, the server's lint on every edit), the pass is made per
top-level statement, and what each statement added is kept (``_Statement``). The next parse hands
back the statements an edit did not touch as the same node objects (``syntax/parse.py``); for
those, the records are added again instead of walking the statement: the same ``Binding``,
``FunctionInfo``, ``LoopInfo`` and ``CallSite`` objects, pointed at the new module scope, the call
sites numbered again in module order. That gives what a walk would because what one statement adds
depends on nothing outside it: the pass writes the module-wide tables (imports, classes, methods,
``self.x`` attributes), and reads only one thing that another statement wrote, the module scope's
bindings, when ``xs.append(fut)`` looks ``xs`` up there; a statement that does is walked again every
time (``replayable``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import libcst as cst

from tinker_lint.model.facts.cadence import holds_optimizer_step, is_cadence_test
from tinker_lint.model.facts.carry import Carry
from tinker_lint.model.facts.imports import ImportMap
from tinker_lint.model.facts.references import ReferenceIndex
from tinker_lint.model.facts.scopes import (
    Binding,
    BindingKind,
    BindingSite,
    CallSite,
    CompNode,
    FunctionInfo,
    LoopInfo,
    LoopNode,
    Scope,
)
from tinker_lint.model.facts.tree import (
    CHILDREN,
    KINDS,
    MANY,
    NODE,
    TreeIndex,
    children_getter,
    kind_of,
    no_children,
)

# Container methods that store their (last) argument: as one element, or each of its elements.
_CONTAINER_STORES = {
    "append": BindingKind.ELEMENT,
    "appendleft": BindingKind.ELEMENT,
    "add": BindingKind.ELEMENT,
    "insert": BindingKind.ELEMENT,
    "put": BindingKind.ELEMENT,
    "put_nowait": BindingKind.ELEMENT,
    "extend": BindingKind.ELEMENTS,
}

# Where a climb from a node stops: it is in a statement of a body (not in a ``def``'s header).
_STATEMENT_PARTS = (
    cst.IndentedBlock,
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.Module,
)
# Per node class: its ``visit_*`` and ``leave_*`` (or None), its children getter, and the method
# that walks its children when ``visit`` does not (``If``, ``IndentedBlock``).
_Plan = tuple[
    Callable[[Any], bool | None] | None,
    Callable[[Any], None] | None,
    Callable[[cst.CSTNode], tuple[Any, ...]],
    Callable[[Any], None] | None,
]


def _only_exits(body: cst.BaseSuite) -> bool:
    """A block that only leaves: ``return``, ``continue``, ``raise`` (a ``pass`` or a log call
    does not count as work)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    exits = False
    for statement in statements:
        smalls = (
            statement.body
            if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite)
            else None
        )
        if smalls is None:
            return False
        for small in smalls:
            if isinstance(small, cst.Return | cst.Continue | cst.Raise):
                exits = True
            elif not isinstance(small, cst.Pass):
                return False
    return exits


@dataclass(eq=False)
class ModuleIndex:
    """Everything the one pass records. Node-keyed tables use ``id(node)`` (see ``tree.py``)."""

    module: cst.Module
    cadence_names: re.Pattern[str] | None
    tree: TreeIndex = field(default_factory=TreeIndex)
    imports: ImportMap = field(default_factory=ImportMap)
    # Every binding of the module, in the order made (types are settled in this order).
    bindings: list[Binding] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    function_of_node: dict[int, FunctionInfo] = field(default_factory=dict)
    methods: dict[str, dict[str, FunctionInfo]] = field(default_factory=dict)  # class -> name
    class_attrs: dict[str, dict[str, list[Binding]]] = field(default_factory=dict)  # ``self.x``
    # Top-level classes: name -> its ``class`` statement (bases, for method resolution).
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    loops: list[LoopInfo] = field(default_factory=list)
    loop_of_node: dict[int, LoopInfo] = field(default_factory=dict)
    calls: list[CallSite] = field(default_factory=list)
    call_site_of: dict[int, CallSite] = field(default_factory=dict)
    guarded_blocks: set[int] = field(default_factory=set)  # bodies of cadence guards
    # Statements after an early exit on the off-steps (``if not should_log(step): return``,
    # ``if step % N: continue``): they run only on the cadence steps.
    guarded_statements: set[int] = field(default_factory=set)
    module_scope: Scope = field(init=False)
    # Every scope, in the order made: the module's, then each class, function and comprehension
    # (``Scope.names``: the name tables ``facts/references.py`` reads).
    scopes: list[Scope] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.module_scope = Scope("module", self.module, None, registry=self.bindings)
        self.scopes.append(self.module_scope)

    @cached_property
    def references(self) -> ReferenceIndex:
        """Each use of a name, and what it resolves to, made from the tree index and
        ``Scope.names`` on first ask, a scope at a time (``references.py``)."""
        return ReferenceIndex(self.module_scope, self.scopes, self.tree)


def collect(
    module: cst.Module, cadence_names: re.Pattern[str] | None = None, carry: Carry | None = None
) -> ModuleIndex:
    """``carry``: the buffer's carry-over (an editor's buffer, ``carry.py``): what each top-level
    statement added is kept for the next pass in it, and what the last one kept is added again
    for the statements this module still has."""
    index = ModuleIndex(module, cadence_names)
    collector = _Collector(index)
    if carry is None:
        collector.visit(module)
        return index
    pattern = None if cadence_names is None else (cadence_names.pattern, cadence_names.flags)
    kept = cast(_KeptIndex | None, carry.get(_STAGE))
    if kept is not None and kept.cadence != pattern:
        kept = None  # cadence guards are told by the pattern: every statement is walked again
    try:
        records = collector.visit_module(module, kept)
    except BaseException:
        # Records replayed before the failure point at this pass's module scope, no longer at
        # the kept one's: none may be taken over again (a walk too deep for the stack, say).
        carry.pop(_STAGE)
        raise
    carry.put(_STAGE, _KeptIndex(records, index.module_scope, pattern))
    return index


@dataclass(eq=False)
class _Statement:
    """What the pass added for one top-level statement: its own part of each table (those keyed
    by node), and the slices of the module-wide lists it appended to, in order."""

    node: cst.CSTNode
    tree: TreeIndex = field(default_factory=TreeIndex)  # its subtree's children and parents
    imports: ImportMap = field(default_factory=ImportMap)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    methods: dict[str, dict[str, FunctionInfo]] = field(default_factory=dict)
    class_attrs: dict[str, dict[str, list[Binding]]] = field(default_factory=dict)
    function_of_node: dict[int, FunctionInfo] = field(default_factory=dict)
    loop_of_node: dict[int, LoopInfo] = field(default_factory=dict)
    call_site_of: dict[int, CallSite] = field(default_factory=dict)
    guarded_blocks: set[int] = field(default_factory=set)
    guarded_statements: set[int] = field(default_factory=set)
    bindings: list[Binding] = field(default_factory=list)  # its slice of the registry
    module_bindings: list[tuple[str, Binding]] = field(default_factory=list)  # of those, by name
    functions: list[FunctionInfo] = field(default_factory=list)
    loops: list[LoopInfo] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    # The class, function and comprehension scopes made in it.
    scopes: list[Scope] = field(default_factory=list)
    made: list[Binding] = field(default_factory=list)  # every binding made, numbered from ``first``
    first: int = 0
    module_names: list[tuple[str, Binding]] = field(default_factory=list)  # its module ``names``
    # False when walking it read the module scope's bindings (``_store_element``): what it adds
    # then depends on the statements before it.
    replayable: bool = True


# The tables a statement's walk fills in place of the module's (then merged into them).
_OWN_TABLES = (
    "imports",
    "classes",
    "methods",
    "class_attrs",
    "function_of_node",
    "loop_of_node",
    "call_site_of",
    "guarded_blocks",
    "guarded_statements",
)


@dataclass(eq=False)
class _KeptIndex:
    statements: list[_Statement]
    module_scope: Scope  # the scope the records' module-level objects point at
    cadence: tuple[str, int] | None


_STAGE = "collect"  # its name in a buffer's carry-over


class _Collector:
    """One pass over the module: scopes, bindings, functions, loops, call sites, imports; and the
    tree index (children and parents), so later walks never re-enter libcst."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.scopes: list[Scope] = [index.module_scope]
        self.functions: list[FunctionInfo | None] = [None]
        self.loops: list[list[LoopInfo]] = [[]]
        self.guards: list[int] = [0]
        self.classes: list[str] = []
        self.children_of = index.tree.children_of
        self.parent_of = index.tree.parent_of
        self.enter: dict[type, Callable[[Any], bool | None]] = {}
        self.leave: dict[type, Callable[[Any], None]] = {}
        self.plans: dict[type, _Plan] = {}
        self.inert: set[type] = set()  # classes ``visit`` does nothing with
        self.record: _Statement | None = None  # the top-level statement being recorded
        # The comprehensions' scopes the walk is in (inside the innermost of ``scopes``).
        self.comprehensions: list[Scope] = []
        self.sequence = 0  # the next binding's ``order``
        for name in dir(type(self)):
            kind, _, node_type = name.partition("_")
            if kind in ("visit", "leave") and node_type and hasattr(cst, node_type):
                table = self.enter if kind == "visit" else self.leave
                table[getattr(cst, node_type)] = getattr(self, name)
        self.specials: dict[type, Callable[[Any], None]] = {
            cst.If: self._visit_if,
            cst.IndentedBlock: self._visit_block,
        }

    # --- per top-level statement, kept from one pass to the next ----------------------------
    def visit_module(self, module: cst.Module, kept: _KeptIndex | None) -> list[_Statement]:
        """``visit(module)``, one top-level statement at a time: each walked and recorded, or, when
        ``kept`` has a replayable record of the same node, that record added again."""
        old = {id(r.node): r for r in kept.statements} if kept is not None else {}
        records: list[_Statement] = []
        kids: list[cst.CSTNode] = []
        for value in (CHILDREN.get(type(module)) or children_getter(module))(module):
            statements = value if (KINDS.get(type(value)) or kind_of(type(value))) is MANY else ()
            if not statements and (KINDS.get(type(value)) or kind_of(type(value))) is NODE:
                statements = (value,)
            for statement in statements:
                if (KINDS.get(type(statement)) or kind_of(type(statement))) is not NODE:
                    continue
                kids.append(statement)
                self.parent_of[id(statement)] = module
                record = old.pop(id(statement), None)
                if record is not None and record.node is statement and record.replayable:
                    assert kept is not None
                    self._replay(record, kept.module_scope)
                else:
                    record = self._walk_recorded(statement)
                records.append(record)
        if kids:
            self.children_of[id(module)] = kids
        return records

    def _walk_recorded(self, statement: cst.CSTNode) -> _Statement:
        """Walk one top-level statement with its own tables, then merge them into the module's."""
        index = self.index
        record = _Statement(statement)
        mine = record.tree
        saved = [getattr(index, name) for name in _OWN_TABLES]
        for name in _OWN_TABLES:
            setattr(index, name, getattr(record, name))
        saved_tree = index.tree
        index.tree = mine
        self.children_of, self.parent_of = mine.children_of, mine.parent_of
        starts = len(index.bindings), len(index.functions), len(index.loops), len(index.calls)
        module_scope = index.module_scope
        module_scope.log = record.module_bindings
        module_scope.names_log = record.module_names
        record.first = self.sequence
        self.record = record
        try:
            self.visit(statement)
        finally:
            self.record = None
            module_scope.log = None
            module_scope.names_log = None
            index.tree = saved_tree
            self.children_of, self.parent_of = saved_tree.children_of, saved_tree.parent_of
            for name, table in zip(_OWN_TABLES, saved, strict=True):
                setattr(index, name, table)
        record.bindings = index.bindings[starts[0] :]
        record.functions = index.functions[starts[1] :]
        record.loops = index.loops[starts[2] :]
        record.calls = index.calls[starts[3] :]
        self._merge(record)
        return record

    def _replay(self, record: _Statement, old_scope: Scope) -> None:
        """Add again what ``record``'s statement added, its module-level objects pointed at this
        module's scope and its call sites numbered where they now come."""
        index = self.index
        scope = index.module_scope
        # Its bindings numbered where they now come (they were made in a row).
        shift = self.sequence - record.first
        record.first = self.sequence
        self.sequence += len(record.made)
        for binding in record.made:  # those of ``record.bindings`` and the others
            binding.order += shift
            if binding.scope is old_scope:
                binding.scope = scope
            if binding.namespace is old_scope:
                binding.namespace = scope
        if old_scope is not scope:
            for made in record.scopes:
                made.registry = index.bindings
                if made.parent is old_scope:
                    made.parent = scope
            for loop in record.loops:
                if loop.scope is old_scope:
                    loop.scope = scope
        for site in record.calls:
            if site.scope is old_scope:
                site.scope = scope
            site.order = len(index.calls)
            index.calls.append(site)
        index.bindings.extend(record.bindings)
        for name, binding in record.module_bindings:
            scope.bindings.setdefault(name, []).append(binding)
        for name, binding in record.module_names:
            scope.names.setdefault(name, []).append(binding)
        index.scopes.extend(record.scopes)
        index.functions.extend(record.functions)
        index.loops.extend(record.loops)
        self._merge(record)

    def _merge(self, record: _Statement) -> None:
        """Merge a statement's own tables into the module's, as the one pass would have filled
        them: later imports and methods win, the first class of a name stays, lists grow."""
        index = self.index
        self.parent_of.update(record.tree.parent_of)
        self.children_of.update(record.tree.children_of)
        index.imports.aliases.update(record.imports.aliases)
        for name, node in record.classes.items():
            index.classes.setdefault(name, node)
        for class_name, methods in record.methods.items():
            index.methods.setdefault(class_name, {}).update(methods)
        for class_name, attrs in record.class_attrs.items():
            mine = index.class_attrs.setdefault(class_name, {})
            for attr, bindings in attrs.items():
                mine.setdefault(attr, []).extend(bindings)
        index.function_of_node.update(record.function_of_node)
        index.loop_of_node.update(record.loop_of_node)
        index.call_site_of.update(record.call_site_of)
        index.guarded_blocks |= record.guarded_blocks
        index.guarded_statements |= record.guarded_statements

    def visit(self, node: cst.CSTNode) -> None:
        """Index ``node``'s subtree, calling ``visit_<Type>`` before and ``leave_<Type>`` after each
        node, as libcst's visitors do; ``visit_*`` returning False skips the children."""
        cls = type(node)
        plan = self.plans.get(cls)
        if plan is None:
            plan = self._plan(node)
        enter, leave, children, special = plan
        if enter is None or enter(node) is not False:
            if special is not None:
                special(node)
            elif children is not no_children:
                kids: list[cst.CSTNode] = []
                parent_of = self.parent_of
                visit = self.visit
                kinds = KINDS
                inert = self.inert
                for value in children(node):
                    kind = kinds.get(type(value)) or kind_of(type(value))
                    if kind is NODE:
                        kids.append(value)
                        parent_of[id(value)] = node
                        if type(value) not in inert:
                            visit(value)
                    elif kind is MANY:
                        for item in value:
                            if (kinds.get(type(item)) or kind_of(type(item))) is NODE:
                                kids.append(item)
                                parent_of[id(item)] = node
                                if type(item) not in inert:
                                    visit(item)
                if kids:
                    self.children_of[id(node)] = kids
        if leave is not None:
            leave(node)

    def _plan(self, node: cst.CSTNode) -> _Plan:
        """What ``visit`` does with a node of this class: one lookup per node, not three."""
        cls = type(node)
        special = self.specials.get(cls)
        children = CHILDREN.get(cls) or children_getter(node)
        plan = (self.enter.get(cls), self.leave.get(cls), children, special)
        self.plans[cls] = plan
        if plan == (None, None, no_children, None):
            self.inert.add(cls)  # ``Name``, ``Integer``, ...: nothing to record, nothing inside
        return plan

    def _visit_block(self, node: cst.IndentedBlock) -> None:
        """A block's statements in order; those after an early exit on the off-steps of a cadence
        (``if not should_log(step): return``) are guarded as an ``if`` body would be."""
        kids: list[cst.CSTNode] = []
        extra = 0
        for at, statement in enumerate(node.body):
            kids.append(statement)
            self.parent_of[id(statement)] = node
            if extra:
                self.index.guarded_statements.add(id(statement))
            self.visit(statement)
            if (
                type(statement) is cst.If
                and self._exits_off_cadence(statement)
                and not holds_optimizer_step(node.body[at + 1 :])
            ):
                extra += 1
                self.guards[-1] += 1
        self.guards[-1] -= extra
        if kids:
            self.children_of[id(node)] = kids

    def _exits_off_cadence(self, node: cst.If) -> bool:
        """``if not should_log(step): return``, ``if step % N: continue``, ``if step % N != 0:
        return``: what follows runs on the cadence steps only."""
        if node.orelse is not None or not _only_exits(node.body):
            return False
        test = node.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        inner = test.expression if isinstance(test, cst.UnaryOperation) and negated else test
        if not is_cadence_test(
            self.index.tree.walk(inner), self.index.cadence_names
        ) or self._modulo_one(inner):
            return False
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Modulo):
            return not negated  # ``step % N`` is true off the cadence steps
        if isinstance(inner, cst.Comparison) and len(inner.comparisons) == 1:
            target = inner.comparisons[0]
            modulo = isinstance(inner.left, cst.BinaryOperation) and isinstance(
                inner.left.operator, cst.Modulo
            )
            if (
                modulo
                and isinstance(target.comparator, cst.Integer)
                and target.comparator.value == "0"
            ):
                equal = isinstance(target.operator, cst.Equal)
                return equal == negated  # ``!= 0`` exits off-cadence; ``not ... == 0`` too
            return False
        return negated  # ``not should_log(step)``, ``not log_every``

    def _modulo_one(self, test: cst.BaseExpression) -> bool:
        """``step % 1 == 0``, or ``step % SYNC_INTERVAL`` with ``SYNC_INTERVAL = 1`` bound once
        at module level before it: true on every step, so no cadence (a real run's sampler refresh
        written for a setting left at 1)."""
        if type(test) is cst.Comparison:
            test = test.left
        if type(test) is not cst.BinaryOperation or type(test.operator) is not cst.Modulo:
            return False
        right = test.right
        if type(right) is cst.Name:
            bindings = self.scope.lookup(right.value)
            module = bindings is self.index.module_scope.bindings.get(right.value)
            if self.record is not None and (not bindings or module):
                self.record.replayable = False  # read what the statements before it bound
            if not module or len(bindings) != 1 or bindings[0].kind != "value":
                return False
            right = bindings[0].expr  # type: ignore[assignment]
        return type(right) is cst.Integer and right.evaluated_value == 1

    def _visit_if(self, node: cst.If) -> None:
        """``visit_If_body``/``leave_If_body``: the cadence guard covers the body, not the else."""
        kids: list[cst.CSTNode] = [node.test, node.body]
        self.parent_of[id(node.test)] = node
        self.visit(node.test)
        guarded = (
            is_cadence_test(self.index.tree.walk(node.test), self.index.cadence_names)
            and not holds_optimizer_step((node.body,))
            and not self._modulo_one(node.test)
        )
        if guarded:
            self.guards[-1] += 1
            self.index.guarded_blocks.add(id(node.body))
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

    def _binding(
        self,
        kind: BindingKind,
        expr: cst.CSTNode | None,
        site: BindingSite,
        node: cst.CSTNode | None,
        namespace: Scope | None,
        *,
        scope: Scope | None = None,
        function: FunctionInfo | None = None,
        index: int = 0,
        size: int = 0,
    ) -> Binding:
        """A new binding, numbered (``Binding.order``), in ``self.scope`` unless ``scope``."""
        order = self.sequence
        self.sequence = order + 1
        binding = Binding(
            kind,
            expr,
            self.scopes[-1] if scope is None else scope,
            function,
            index,
            size,
            site,
            node,
            namespace,
            order,
        )
        if self.record is not None:
            self.record.made.append(binding)
        return binding

    def _declare(
        self, name: cst.Name, site: BindingSite, kind: BindingKind, expr: cst.CSTNode | None
    ) -> None:
        """A binding of ``Scope.names`` only (the analyses' ``bindings`` never had it): a
        statement's, so never in a comprehension."""
        space = self.scopes[-1]
        space.declare(name.value, self._binding(kind, expr, site, name, space))

    def _declare_targets(self, target: cst.CSTNode, site: BindingSite) -> None:
        """Each name of a ``del`` target (``del a, (b, c)``)."""
        if isinstance(target, cst.Name):
            self._declare(target, site, BindingKind.NONE, None)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._declare_targets(element.value, site)

    def _bind_target(
        self,
        target: cst.BaseExpression,
        kind: BindingKind,
        expr: cst.CSTNode | None,
        site: BindingSite,
        index: int = 0,
        size: int = 0,
    ) -> None:
        # Exact types (libcst's node classes are final): ``isinstance`` on them goes through
        # ``ABCMeta``, and every assignment of the module comes here.
        target_type = type(target)
        if target_type is cst.Name:
            name = cast(cst.Name, target).value
            scope = self.scopes[-1]
            # A comprehension's target is its own; ``(x := v)`` in one binds in the scope around.
            if site is BindingSite.COMPREHENSION_TARGET and self.comprehensions:
                space = self.comprehensions[-1]
            else:
                space = scope
            # (``_binding``, inlined: every name an assignment binds comes here)
            order = self.sequence
            self.sequence = order + 1
            binding = Binding(kind, expr, scope, None, index, size, site, target, space, order)
            if self.record is not None:
                self.record.made.append(binding)
            scope.bind(name, binding)  # (in ``names`` too, when ``space`` is ``scope``)
            if space is not scope:
                space.declare(name, binding)
        elif target_type is cst.Tuple or target_type is cst.List:
            elements = cast(cst.Tuple | cst.List, target).elements
            values = (
                [e.value for e in expr.elements]
                if kind is BindingKind.VALUE and (type(expr) is cst.Tuple or type(expr) is cst.List)
                else None
            )
            starred = any(type(e) is cst.StarredElement for e in elements)
            for i, element in enumerate(elements):
                if values is not None and len(values) == len(elements) and not starred:
                    self._bind_target(element.value, kind, values[i], site)
                elif (
                    kind in (BindingKind.VALUE, BindingKind.ITER)
                    and not starred
                    and type(element.value) is not cst.Tuple
                    and type(element.value) is not cst.List
                ):
                    # ``fwd, opt = submit_step(batch)``, ``for i, fut in enumerate(futures)``
                    unpack = (
                        BindingKind.UNPACK if kind is BindingKind.VALUE else BindingKind.ITER_UNPACK
                    )
                    self._bind_target(element.value, unpack, expr, site, i, len(elements))
                else:
                    self._bind_target(element.value, BindingKind.UNKNOWN, None, site)
        elif target_type is cst.StarredElement:
            self._bind_target(
                cast(cst.StarredElement, target).value, BindingKind.UNKNOWN, None, site
            )
        elif target_type is cst.Attribute:
            binding = self._binding(
                kind, expr, BindingSite.ATTRIBUTE, target, None, index=index, size=size
            )
            self._bind_self_attribute(cast(cst.Attribute, target), binding)
        elif target_type is cst.Subscript and kind is BindingKind.VALUE:
            self._store_element(cast(cst.Subscript, target).value, BindingKind.ELEMENT, expr)

    def _store_element(
        self, container: cst.BaseExpression, kind: BindingKind, expr: cst.CSTNode | None
    ) -> None:
        """``xs.append(fut)``, ``xs[k] = fut``: ``xs`` holds what ``fut`` is. Recorded with the
        name's own bindings (wherever it is bound), so a closure's append does not shadow it."""
        if type(container) is cst.Name:
            bindings = self.scope.lookup(container.value)
            if self.record is not None and (
                not bindings or bindings is self.index.module_scope.bindings.get(container.value)
            ):
                self.record.replayable = False  # read what the statements before it bound
            if bindings:
                bindings.append(self._binding(kind, expr, BindingSite.STORE, container, None))
        elif type(container) is cst.Attribute:
            binding = self._binding(kind, expr, BindingSite.STORE, container, None)
            self._bind_self_attribute(container, binding)

    def _bind_self_attribute(self, target: cst.Attribute, binding: Binding) -> None:
        function = self.functions[-1]
        if (
            function is not None
            and function.class_name is not None
            and type(target.value) is cst.Name
            and target.value.value == function.self_name
        ):
            attrs = self.index.class_attrs.setdefault(function.class_name, {})
            attrs.setdefault(target.attr.value, []).append(binding)
            self.index.bindings.append(binding)

    # --- imports ---------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.index.imports.add(node)
        for alias in node.names:
            bound: cst.BaseExpression
            if alias.asname is not None:
                bound = alias.asname.name
            else:
                bound = alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value  # ``import a.b`` binds ``a``
            if isinstance(bound, cst.Name):
                self._declare(bound, BindingSite.IMPORT, BindingKind.IMPORT, alias)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.index.imports.add(node)
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.name if alias.asname is None else alias.asname.name
                if isinstance(bound, cst.Name):
                    self._declare(bound, BindingSite.IMPORT, BindingKind.IMPORT, alias)

    # --- bindings of ``Scope.names`` only -------------------------------------------------
    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            site = BindingSite.EXCEPT_NAME
            self._declare(node.name.name, site, BindingKind.UNKNOWN, node.type)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            site = BindingSite.EXCEPT_NAME
            self._declare(node.name.name, site, BindingKind.UNKNOWN, node.type)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._declare(node.target, BindingSite.AUGMENTED, BindingKind.UNKNOWN, node)

    def visit_Del(self, node: cst.Del) -> None:
        self._declare_targets(node.target, BindingSite.DELETION)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._declare(item.name, BindingSite.GLOBAL, BindingKind.NONE, None)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._declare(item.name, BindingSite.NONLOCAL, BindingKind.NONE, None)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._declare(node.name, BindingSite.MATCH_CAPTURE, BindingKind.UNKNOWN, node)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._declare(node.name, BindingSite.MATCH_CAPTURE, BindingKind.UNKNOWN, node)

    def leave_MatchMapping(self, original_node: cst.MatchMapping) -> None:
        node = original_node  # ``**rest`` comes after the captures of the keys' patterns
        if node.rest is not None:
            self._declare(node.rest, BindingSite.MATCH_CAPTURE, BindingKind.UNKNOWN, node)

    # --- scopes ----------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        space = self.scopes[-1]
        binding = self._binding(BindingKind.CLASS, node, BindingSite.CLASS_DEF, node.name, space)
        space.bind(node.name.value, binding)
        if self.scope.kind == "module":
            self.index.classes.setdefault(node.name.value, node)
        scope = Scope(
            "class", node, self.scope, class_name=node.name.value, registry=self.index.bindings
        )
        self.index.scopes.append(scope)
        if self.record is not None:
            self.record.scopes.append(scope)
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
        scope = Scope("function", node, enclosing, registry=self.index.bindings)
        self.index.scopes.append(scope)
        if self.record is not None:
            self.record.scopes.append(scope)
        info = FunctionInfo(node, scope, self.functions[-1], class_name, self_name)
        scope.function = info
        binding = self._binding(
            BindingKind.DEF,
            None,
            BindingSite.FUNCTION_DEF,
            node.name,
            enclosing,
            scope=enclosing,
            function=info,
        )
        enclosing.bind(node.name.value, binding)
        if class_name is not None:
            self.index.methods.setdefault(class_name, {})[node.name.value] = info
        self.index.functions.append(info)
        self.index.function_of_node[id(node)] = info
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
                kind, expr = BindingKind.ANNOTATION, param.annotation.annotation
            else:
                kind, expr = BindingKind.UNKNOWN, None
            binding = self._binding(
                kind, expr, BindingSite.PARAMETER, param.name, scope, scope=scope
            )
            scope.bind(param.name.value, binding)
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
            self._bind_target(target.target, BindingKind.VALUE, node.value, BindingSite.ASSIGNMENT)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        target = node.target
        annotation = node.annotation.annotation
        if self.scope.kind == "class" and isinstance(target, cst.Name):
            attrs = self.index.class_attrs.setdefault(self.scope.class_name or "", {})
            binding = self._binding(
                BindingKind.ANNOTATION, annotation, BindingSite.ATTRIBUTE, target, None
            )
            attrs.setdefault(target.value, []).append(binding)
            self.index.bindings.append(binding)
        if node.value is None:
            self._bind_target(target, BindingKind.ANNOTATION, annotation, BindingSite.ANNOTATION)
        else:
            self._bind_target(target, BindingKind.ANNOTATION, annotation, BindingSite.ANNOTATED)
            self._bind_target(target, BindingKind.VALUE, node.value, BindingSite.ANNOTATED)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, BindingKind.VALUE, node.value, BindingSite.WALRUS)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(
                node.asname.name, BindingKind.VALUE, node.item, BindingSite.WITH_TARGET
            )

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
        self.index.loops.append(info)
        self.index.loop_of_node[id(node)] = info
        stack.append(info)

    def _leave_loop(self) -> None:
        self.loops[-1].pop()

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, BindingKind.ITER, node.iter, BindingSite.FOR_TARGET)
        self._enter_loop(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop()

    def visit_While(self, node: cst.While) -> None:
        self._enter_loop(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop()

    def visit_CompFor(self, node: cst.CompFor) -> None:
        site = BindingSite.COMPREHENSION_TARGET
        self._bind_target(node.target, BindingKind.ITER, node.iter, site)

    def _enter_comprehension(self, node: CompNode) -> None:
        """A loop, and a scope of names (Python 3's: its targets are its own)."""
        self._enter_loop(node)
        parent = self.comprehensions[-1] if self.comprehensions else self.scopes[-1]
        if parent.kind in ("function", "class"):
            # In a decorator, a default, an annotation or a base: in the scope around.
            inner = self.parent_of.get(id(node))
            while inner is not None and type(inner) not in _STATEMENT_PARTS:
                if inner is parent.node:
                    parent = parent.parent or parent
                    break
                inner = self.parent_of.get(id(inner))
        elif parent.kind == "comprehension":
            # In the first iterable of the one around, it is in the scope around that one.
            outer = cast(CompNode, parent.node).for_in.iter
            inner = node
            while inner is not None and inner is not parent.node and inner is not outer:
                inner = self.parent_of.get(id(inner))
            if inner is outer and parent.parent is not None:
                parent = parent.parent
        space = Scope("comprehension", node, parent, registry=self.index.bindings)
        self.index.scopes.append(space)
        if self.record is not None:
            self.record.scopes.append(space)
        self.comprehensions.append(space)

    def _leave_comprehension(self) -> None:
        self._leave_loop()
        self.comprehensions.pop()

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._enter_comprehension(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._leave_comprehension()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._enter_comprehension(node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._leave_comprehension()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._enter_comprehension(node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._leave_comprehension()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._enter_comprehension(node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._leave_comprehension()

    # --- calls -----------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and len(node.args) == 1 + (func.attr.value == "insert"):
            stored = _CONTAINER_STORES.get(func.attr.value)
            if stored is not None:
                self._store_element(func.value, stored, node.args[-1].value)
        loops = tuple(self.loops[-1])
        depth = self.guards[-1]
        order = len(self.index.calls)
        site = CallSite(node, self.scope, self.functions[-1], loops, depth > 0, depth, order)
        self.index.calls.append(site)
        self.index.call_site_of[id(node)] = site
        if site.function is not None:
            site.function.calls.append(site)
        for loop in loops:
            loop.calls.append(site)
