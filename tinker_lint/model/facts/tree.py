"""The tree index: each node's children and parent, walked without re-entering libcst.

``child_fields`` asks libcst once per node class which fields hold children, so the collector
(``collect.py``) can index the whole module in its one pass; ``TreeIndex`` answers the tree
questions from that index. Nodes are keyed by ``id()``: libcst nodes compare by identity, the model
holds the module (so no id is reused while it lives), and ``id`` is the cheapest key there is.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import libcst as cst
from libcst import MaybeSentinel

# Layout and punctuation: never asked about, so neither indexed nor entered (about half the nodes).
TRIVIA: frozenset[type[cst.CSTNode]] = frozenset(
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
NODE, MANY, OTHER = "node", "many", "other"
KINDS: dict[type, str] = {tuple: MANY, list: MANY, str: OTHER, type(None): OTHER}


def kind_of(value_type: type) -> str:
    if issubclass(value_type, cst.CSTNode):
        kind = OTHER if value_type in TRIVIA else NODE
    else:
        kind = MANY if issubclass(value_type, tuple | list) else OTHER
    KINDS[value_type] = kind
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
    if (cls.__module__, cls.__qualname__) in TRIVIA_NAMES:
        return True
    subclasses = cls.__subclasses__()
    return inspect.isabstract(cls) and bool(subclasses) and all(map(_only_layout, subclasses))


TRIVIA_NAMES = frozenset((cls.__module__, cls.__qualname__) for cls in TRIVIA)


Children = Callable[[cst.CSTNode], tuple[Any, ...]]


def no_children(node: cst.CSTNode) -> tuple[Any, ...]:
    """The getter of a class without children (Name, Integer, ...): compared by identity."""
    return ()


# Per class: a function giving the values of its child fields, in order, at once.
CHILDREN: dict[type[cst.CSTNode], Children] = {}


def children_getter(node: cst.CSTNode) -> Children:
    fields = child_fields(node)
    if not fields:
        getter: Children = no_children
    elif len(fields) == 1:
        one = operator.attrgetter(fields[0])
        getter = lambda node: (one(node),)  # noqa: E731 - attrgetter of one field gives no tuple
    else:
        getter = operator.attrgetter(*fields)
    CHILDREN[type(node)] = getter
    return getter


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node``'s children (layout left out), in source order, straight from its child fields:
    for walks outside the model's tree index (which the index's pass would not enter, or before
    there is one). libcst's ``node.children`` rebuilds each node it passes."""
    kids: list[cst.CSTNode] = []
    for value in (CHILDREN.get(type(node)) or children_getter(node))(node):
        kind = KINDS.get(type(value)) or kind_of(type(value))
        if kind is NODE:
            kids.append(value)
        elif kind is MANY:
            kids.extend(
                item for item in value if (KINDS.get(type(item)) or kind_of(type(item))) is NODE
            )
    return kids


# For ``TreeIndex.walk``: skip (a tuple of classes) -> node class -> whether it is one of them.
_SKIPPED: dict[tuple[type, ...], dict[type, bool]] = {}


@dataclasses.dataclass(eq=False)
class TreeIndex:
    """Children and parents of the module's nodes (layout left out), by node id."""

    children_of: dict[int, list[cst.CSTNode]] = dataclasses.field(default_factory=dict)
    parent_of: dict[int, cst.CSTNode] = dataclasses.field(default_factory=dict)

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
        # ``issubclass`` on libcst's abstract classes is slow: the verdicts are kept per ``skip``.
        skipped = _SKIPPED.get(skip)
        if skipped is None:
            skipped = _SKIPPED[skip] = {}
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
