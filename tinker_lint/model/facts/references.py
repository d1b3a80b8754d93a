"""References: each use of a name in a module, and the bindings it resolves to by Python's
scoping rules.

The pass (``collect.py``) records each binding of every site in its scope's ``Scope.names``
(``BindingSite``), the comprehensions' scopes among the others, and the tree index. The
references of a scope are made from those, on the first question about that scope: its ``Name``
nodes, in source order, from the tree index (``uses``), each a read, a write (the target of a
binding: ``x = ...``, a parameter, ``import x``, ``except E as x``...), a ``del``, or no reference
at all (an attribute's name, a keyword argument, a module name in an import, a ``global``
declaration). ``x += 1`` is a read, then a write.

A read resolves to a scope as Python's compiler does: the innermost scope with a binding of the
name, skipping class scopes from the code nested in them (a method does not see its class's
names; a comprehension in a class body sees them in its first iterable only), following
``global`` to the module and ``nonlocal`` to the enclosing function. Its ``bindings`` are every
binding of the name in that scope, those made through ``global``/``nonlocal`` from other scopes
included: which of them can reach the read is ``analyses/dataflow.py``'s question
(``reaching_definitions``), not a fact.

What is not seen: names inside a ``lambda`` (the pass does not enter them: their body runs later)
and names in string annotations. Builtins resolve to no scope.

Made lazily, a scope at a time: a lint whose rules ask nothing of references pays only for what
the pass records of bindings (their site, target, scope and order, the name tables, the
comprehensions' scopes): 6-8% of the pass. Recorded in the pass, references cost more than the
10% allowed (the pass over the cookbook's 303 files, in one process, CPU time, the variants taking
turns on each file, 10-12 rounds): noting each scope's ``Name`` nodes there (a list append each,
a third of the nodes) made it 14-17% slower, making every ``Reference`` as well 80-87%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import libcst as cst

from tinker_lint.model.facts.scopes import Binding, BindingSite, Scope
from tinker_lint.model.facts.tree import TreeIndex

_DECLARATIONS = (BindingSite.GLOBAL, BindingSite.NONLOCAL)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_OWNERS = (cst.FunctionDef, cst.ClassDef, *_COMPREHENSIONS)  # a node of one makes a scope


class Context(Enum):
    """What a reference does with the name."""

    READ = "read"
    WRITE = "write"  # the target of a binding (``Reference.bindings``: those it makes)
    DELETE = "del"


@dataclass(eq=False)
class Reference:
    """One use of a name."""

    node: cst.Name
    scope: Scope  # the scope whose code it is in (its ``uses``)
    context: Context
    # A read: the bindings it may resolve to, every binding of the name in ``resolved``, in the
    # order made; a write or a ``del``: the bindings it makes.
    bindings: tuple[Binding, ...]
    # The scope the name is found in, by Python's rules (None: a builtin, or bound nowhere in the
    # module): for a write under ``global x``, the module's.
    resolved: Scope | None
    order: int  # its place among its scope's references (source order)

    @property
    def name(self) -> str:
        return self.node.value


def _declaration(found: Sequence[Binding]) -> BindingSite | None:
    for binding in found:
        if binding.site is BindingSite.GLOBAL or binding.site is BindingSite.NONLOCAL:
            return binding.site
    return None


def _in_import(attribute: cst.Attribute, parent_of: dict[int, cst.CSTNode]) -> bool:
    """``a`` of ``import a.b as c``, ``from a.b import c``: a module's name, no reference."""
    node: cst.CSTNode | None = attribute
    while type(node) is cst.Attribute:
        node = parent_of.get(id(node))
    return type(node) is cst.ImportAlias or type(node) is cst.ImportFrom


def _is_reference(
    node: cst.Name, parent: cst.CSTNode | None, parent_of: dict[int, cst.CSTNode]
) -> bool:
    """Whether a name that binds nothing is a read (its parent says)."""
    kind = type(parent)
    if kind is cst.Attribute:
        assert isinstance(parent, cst.Attribute)
        return parent.value is node and not _in_import(parent, parent_of)
    if kind is cst.Arg:
        assert isinstance(parent, cst.Arg)
        return parent.keyword is not node  # ``f(key=...)``
    if kind is cst.Param:
        assert isinstance(parent, cst.Param)
        return parent.name is not node  # a parameter is its function's (a default is a read)
    if kind is cst.MatchKeywordElement:
        assert isinstance(parent, cst.MatchKeywordElement)
        return parent.key is not node  # ``case Point(x=...)``
    # ``import a as b`` (``a``), ``from m import x as y`` (``m``, ``x``), ``global x``.
    return kind not in (cst.ImportAlias, cst.ImportFrom, cst.AsName, cst.NameItem)


class ReferenceIndex:
    """The references of one module's scopes, made on first ask (``ModuleIndex.references``)."""

    def __init__(self, module_scope: Scope, scopes: list[Scope], tree: TreeIndex) -> None:
        self.module_scope = module_scope
        self.scopes = scopes
        self.tree = tree
        self.parent_of = tree.parent_of
        self._of_scope: dict[int, list[Reference]] = {}
        self._of_node: dict[int, Reference] = {}
        self._bound: dict[int, list[Binding]] | None = None  # id(target name) -> its bindings
        self._scope_by_node: dict[int, Scope] | None = None  # id(a scope's node) -> the scope
        self._writers: dict[tuple[int, str], list[Binding]] | None = None
        self._values: dict[tuple[int, str], tuple[Binding, ...]] = {}

    # --- questions -------------------------------------------------------------------------
    def of_scope(self, scope: Scope) -> list[Reference]:
        """Every reference in ``scope``'s own code, in source order (a parameter's write
        included, nested functions' bodies and comprehensions not: they are scopes of their own)."""
        found = self._of_scope.get(id(scope))
        if found is None:
            found = self._of_scope[id(scope)] = self._make(scope)
        return found

    def of_node(self, node: cst.Name) -> Reference | None:
        """The reference a name is (the read, for ``x += 1``'s ``x``); None for a name that is no
        reference (``obj.attr``'s ``attr``) or one the pass did not see (in a ``lambda``)."""
        scope = self.scope_of(node)
        if scope is None:
            return None
        self.of_scope(scope)
        return self._of_node.get(id(node))

    def uses(self, scope: Scope) -> list[cst.Name]:
        """The ``Name`` nodes of ``scope``'s own code, in source order: a function's parameters
        and body, a nested function's or class's decorators, defaults, annotations and bases (not
        its body), a comprehension's first iterable (not the rest); a comprehension's own code
        but its first iterable. A parameter is the function's (and noted in the scope around,
        where it is no reference)."""
        node = scope.node
        children = self.tree.children
        found: list[cst.Name] = []
        stack: list[cst.CSTNode]
        if isinstance(node, cst.FunctionDef):
            params = node.params
            found.extend(p.name for p in (*params.posonly_params, *params.params))
            if isinstance(params.star_arg, cst.Param):
                found.append(params.star_arg.name)
            found.extend(p.name for p in params.kwonly_params)
            if params.star_kwarg is not None:
                found.append(params.star_kwarg.name)
            stack = [node.body]
        elif isinstance(node, cst.ClassDef):
            stack = [node.body]
        elif isinstance(node, _COMPREHENSIONS):
            stack = self._comprehension_start(node)
        else:
            stack = list(reversed(children(node)))
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is cst.Name:
                found.append(current)  # type: ignore[arg-type]
                continue
            if kind is cst.FunctionDef or kind is cst.ClassDef:
                body = current.body  # type: ignore[attr-defined]
                stack.extend(c for c in reversed(children(current)) if c is not body)
            elif isinstance(current, _COMPREHENSIONS):
                stack.append(current.for_in.iter)  # the rest is the comprehension's own scope
            else:
                stack.extend(reversed(children(current)))
        return found

    def scope_of(self, node: cst.Name) -> Scope | None:
        """The scope whose code ``node`` is in (its ``uses``); None outside the tree index."""
        by_node = self._scopes_by_node()
        parent_of = self.parent_of
        parent = parent_of.get(id(node))
        if parent is None:
            return None
        if type(parent) is cst.Param and parent.name is node:
            function = parent_of.get(id(parent_of.get(id(parent))))
            return by_node.get(id(function))
        child: cst.CSTNode = node
        while parent is not None:
            if isinstance(parent, _OWNERS):
                if isinstance(parent, cst.FunctionDef | cst.ClassDef):
                    inside = child is parent.body
                else:  # not the first iterable (``child`` is its ``CompFor``, seen from there)
                    inside = not (child is parent.for_in and self._in_first_iterable(node, parent))
                if inside:
                    return by_node.get(id(parent))
            elif type(parent) is cst.Module:
                return self.module_scope
            child, parent = parent, parent_of.get(id(parent))
        return None

    def resolve(self, scope: Scope, name: str) -> tuple[Scope | None, tuple[Binding, ...]]:
        """The scope ``name`` read in ``scope`` is found in, and its bindings there."""
        home = self.home(scope, name)
        return home, (() if home is None else self.bindings_in(home, name))

    def home(self, scope: Scope, name: str) -> Scope | None:
        """The scope ``name`` used in ``scope`` belongs to (None: a builtin, or unbound)."""
        current: Scope | None = scope
        first = True
        functions_only = False  # after ``nonlocal``
        while current is not None:
            if not (
                (current.kind == "class" and not first)
                or (functions_only and current.kind != "function")
            ):
                found = current.names.get(name)
                if found:
                    declared = _declaration(found)
                    if declared is BindingSite.GLOBAL:
                        return self.module_scope
                    if declared is BindingSite.NONLOCAL:
                        functions_only = True
                    else:
                        return current
            first = False
            current = current.parent
        return None

    def bindings_in(self, home: Scope, name: str) -> tuple[Binding, ...]:
        """Every binding of ``name`` in ``home`` (its own, and those made from the scopes that
        declare it ``global`` or ``nonlocal`` there), in the order made; no declarations."""
        key = (id(home), name)
        found = self._values.get(key)
        if found is None:
            own = [b for b in home.names.get(name, ()) if b.site not in _DECLARATIONS]
            others = self._writers_of().get(key, [])
            found = self._values[key] = tuple(sorted([*own, *others], key=lambda b: b.order))
        return found

    def to(self, binding: Binding) -> list[Reference]:
        """The reads that may resolve to ``binding`` (flow-insensitive: those of its name in its
        scope and the scopes nested in it that find it there), the binding's scope first, each
        scope's in source order."""
        name = binding.name
        space = binding.namespace
        if name is None or space is None or binding.site in _DECLARATIONS:
            return []
        home = self.home(space, name)
        if home is None:
            return []
        found: list[Reference] = []
        for scope in self.scopes:
            inner: Scope | None = scope
            while inner is not None and inner is not home:
                inner = inner.parent
            if inner is None:
                continue
            for reference in self.of_scope(scope):
                if (
                    reference.context is Context.READ
                    and reference.node.value == name
                    and any(b is binding for b in reference.bindings)
                ):
                    found.append(reference)
        return found

    # --- made on first ask -----------------------------------------------------------------
    def _make(self, scope: Scope) -> list[Reference]:
        bound = self._bound_names()
        parent_of = self.parent_of
        made: list[Reference] = []
        for node in self.uses(scope):
            key = id(node)
            bindings = bound.get(key)
            if bindings is not None:
                site = bindings[0].site
                if site in _DECLARATIONS:
                    continue  # ``global x``: no use
                if site is BindingSite.PARAMETER and bindings[0].namespace is not scope:
                    continue  # noted in the scope around too (with the defaults): its function's
                if site is BindingSite.AUGMENTED:
                    home, values = self.resolve(scope, node.value)
                    made.append(Reference(node, scope, Context.READ, values, home, len(made)))
                context = Context.DELETE if site is BindingSite.DELETION else Context.WRITE
                space = bindings[0].namespace
                home = None if space is None else self.home(space, node.value)
                made.append(Reference(node, scope, context, tuple(bindings), home, len(made)))
            elif _is_reference(node, parent_of.get(key), parent_of):
                home, values = self.resolve(scope, node.value)
                made.append(Reference(node, scope, Context.READ, values, home, len(made)))
        for reference in made:
            self._of_node.setdefault(id(reference.node), reference)
        return made

    def _comprehension_start(
        self, node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp
    ) -> list[cst.CSTNode]:
        """What to walk of a comprehension's own code (a stack: the last is walked first): its
        element and its ``for``s, without the first iterable."""
        children = self.tree.children
        first = node.for_in
        parts = [c for c in children(node) if c is not first]
        parts.extend(c for c in children(first) if c is not first.iter)
        return list(reversed(parts))

    def _in_first_iterable(
        self, node: cst.CSTNode, owner: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp
    ) -> bool:
        outer = owner.for_in.iter
        current: cst.CSTNode | None = node
        while current is not None and current is not owner:
            if current is outer:
                return True
            current = self.parent_of.get(id(current))
        return False

    def _scopes_by_node(self) -> dict[int, Scope]:
        if self._scope_by_node is None:
            self._scope_by_node = {id(scope.node): scope for scope in self.scopes}
        return self._scope_by_node

    def _bound_names(self) -> dict[int, list[Binding]]:
        if self._bound is None:
            self._bound = {}
            for scope in self.scopes:
                for found in scope.names.values():
                    for binding in found:
                        if type(binding.node) is cst.Name:
                            self._bound.setdefault(id(binding.node), []).append(binding)
        return self._bound

    def _writers_of(self) -> dict[tuple[int, str], list[Binding]]:
        """The bindings made through ``global x`` / ``nonlocal x``, by the scope they bind in."""
        if self._writers is None:
            self._writers = {}
            for scope in self.scopes:
                for name, found in scope.names.items():
                    if _declaration(found) is None:
                        continue
                    home = self.home(scope, name)
                    if home is not None:
                        writes = [b for b in found if b.site not in _DECLARATIONS]
                        self._writers.setdefault((id(home), name), []).extend(writes)
        return self._writers
