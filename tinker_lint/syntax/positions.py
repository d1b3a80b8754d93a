"""Line and column of the nodes a finding points at: libcst's ``PositionProvider``, for those nodes only.

``PositionProvider`` regenerates the module's code and records a range for every node, splitting
every token with a regex and allocating two objects per node: about eight times the cost of
generating the code (measured on the cookbook files with findings). Here the same code generation
runs, but only the requested nodes (and the child nodes libcst takes their start or end from) note
where they begin and end, as token indices, and it stops after the last of them; lines and columns
are counted once at the end, token by token as ``PositionProvider`` counts them, so the results are
the same (tests/test_positions.py).

With the lines where the module's statements start (``statement_starts``: the top-level ones and,
recursively, those of every indented block, from CPython's tree of the same text, which the
engine has from its pre-filter), only the innermost such statement that holds a node is generated:
a statement's code depends on nothing before it but its indentation, so the node's place in it,
moved to the statement's line, is its place in the module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

try:  # the base every libcst code generation state derives from; not exported
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - a libcst without it: use the provider itself
    CodegenState = None  # type: ignore[assignment,misc]

_NEWLINE = re.compile(r"\r\n?|\n")  # as libcst.metadata.position_provider counts lines
_NOTHING = nullcontext()


class NodePositions:
    """The positions of a module's nodes, each worked out when first asked for: ``positions[node]``
    as with ``PositionProvider``'s mapping. ``want(nodes)`` works out several in one pass that stops
    after the last of them. After a few such passes, one complete pass notes where every node
    begins and ends (as token indices, cheaply), so that many separate questions (a rule naming the
    line of another node in each message) cost one code generation, not one each."""

    PASSES_BEFORE_ALL = 2

    def __init__(
        self,
        module: cst.Module,
        statement_starts: Mapping[int, tuple[int, tuple[str, ...]]] | None = None,
        parent: Callable[[cst.CSTNode], cst.CSTNode | None] | None = None,
    ) -> None:
        self.module = module
        self._ranges: dict[int, CodeRange] = {}
        self._passes = 0
        self._all: tuple[dict[int, tuple[int, int]], list[CodePosition]] | None = None
        # The statement-by-statement way (needs where statements start, and the parents of nodes
        # to find their statement).
        self._starts = statement_starts if parent is not None and CodegenState is not None else None
        self._parent = parent
        self._statement_passes: set[int] = set()

    def want(self, nodes: Iterable[cst.CSTNode]) -> None:
        missing = [node for node in nodes if id(node) not in self._ranges]
        if not missing or self._all is not None:
            return
        if self._starts is not None and self._want_by_statement(missing):
            return
        self._passes += 1
        if self._passes <= self.PASSES_BEFORE_ALL:
            self._ranges.update(node_positions(self.module, missing))
        elif CodegenState is not None:
            state = _generate(self.module, None)
            self._all = (state.spans, list(_positions(state.tokens, range(len(state.tokens) + 1))))
        else:  # pragma: no cover
            self._ranges.update(node_positions(self.module, None))

    def _want_by_statement(self, nodes: list[cst.CSTNode]) -> bool:
        """Place ``nodes`` by generating only their statements; False (nothing placed) if one is
        not inside a statement the parents lead to."""
        groups: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
        for node in nodes:
            statement = self._statement_of(node)
            if statement is None:
                return False
            groups.setdefault(id(statement), (statement, []))[1].append(node)
        placed: dict[int, CodeRange] = {}
        for statement, group in groups.values():
            found = self._place_in_statement(statement, group)
            if found is None:
                self._starts = None  # a statement did not start where expected: never again
                return False
            placed.update(found)
        self._ranges.update(placed)
        return True

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement with a known start that holds ``node``."""
        assert self._parent is not None and self._starts is not None
        current: cst.CSTNode | None = node
        while current is not None:
            if id(current) in self._starts:
                return current
            current = self._parent(current)
        return None

    def _place_in_statement(
        self, statement: cst.CSTNode, nodes: list[cst.CSTNode]
    ) -> dict[int, CodeRange] | None:
        """The ranges of ``nodes`` (all of the statement's, if it was asked about before)."""
        assert self._starts is not None
        line, indents = self._starts[id(statement)]
        everything = id(statement) in self._statement_passes
        self._statement_passes.add(id(statement))
        wanted = None if everything else {id(node) for node in nodes}
        state = _generate(self.module, wanted, statement, indents)
        anchor = state.spans.get(id(statement))
        if anchor is None and wanted is not None:
            # A node before the statement's own start (a comment line above it, a decorator):
            # the generation stopped before the start was noted. All of it, then.
            wanted = None
            state = _generate(self.module, None, statement, indents)
            anchor = state.spans.get(id(statement))
        if anchor is None:
            return None
        spans = (
            state.spans
            if wanted is None
            else {k: state.spans[k] for k in wanted if k in state.spans}
        )
        marks = sorted({anchor[0], *(mark for span in spans.values() for mark in span)})
        at = dict(zip(marks, _positions(state.tokens, marks), strict=True))
        start = at[anchor[0]]
        if start.column != sum(map(len, indents)):
            return None
        shift = line - start.line
        return {
            key: CodeRange(
                CodePosition(at[first].line + shift, at[first].column),
                CodePosition(at[last].line + shift, at[last].column),
            )
            for key, (first, last) in spans.items()
        }

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._ranges.get(id(node))
        if found is None:
            self.want((node,))
            found = self._ranges.get(id(node))
            if found is None and self._all is not None:
                spans, at = self._all
                span = spans.get(id(node))
                if span is not None:
                    found = self._ranges[id(node)] = CodeRange(at[span[0]], at[span[1]])
            if found is None:
                raise KeyError(node)
        return found

    def __contains__(self, node: object) -> bool:
        try:
            self[node]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def get(self, node: cst.CSTNode, default: CodeRange | None = None) -> CodeRange | None:
        try:
            return self[node]
        except KeyError:
            return default


def statement_starts(
    tree: ast.Module, module: cst.Module
) -> dict[int, tuple[int, tuple[str, ...]]] | None:
    """``id(statement)`` -> (the line it starts on, as ``PositionProvider`` has it; the indents
    libcst writes before it) for the module's top-level statements and, recursively, those of
    every indented block (function and class bodies, loops, ``if``/``elif``/``else``, ``with``,
    ``try`` and its handlers, ``match`` cases), from CPython's tree of the same text: a node deep
    in a long training loop is then placed by generating its own statement, not the whole loop.
    A line of simple statements (``a = 1; b = 2``) is one libcst statement and several of
    CPython's; a decorated definition starts at ``def``/``class``, as CPython's does. None if the
    two trees do not line up."""
    starts: dict[int, tuple[int, tuple[str, ...]]] = {}

    def block(suite: cst.BaseSuite, python: list[ast.stmt], indents: tuple[str, ...]) -> bool:
        if not isinstance(suite, cst.IndentedBlock):
            return True  # ``for x in y: f()``: on the compound statement's line, placed with it
        indent = module.default_indent if suite.indent is None else suite.indent
        return align(suite.body, python, (*indents, indent))

    def inner(statement: cst.BaseStatement, first: ast.stmt, indents: tuple[str, ...]) -> bool:
        """The blocks of a compound statement, each against CPython's list of the same block."""
        pairs = _blocks(statement, first, module.default_indent)
        if pairs is None:
            return False
        return all(block(suite, python, (*indents, *extra)) for suite, python, extra in pairs)

    def align(
        body: Sequence[cst.BaseStatement], python: list[ast.stmt], indents: tuple[str, ...]
    ) -> bool:
        used = 0
        for statement in body:
            count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
            if used + count > len(python):
                return False
            first = python[used]
            starts[id(statement)] = (first.lineno, indents)
            if not isinstance(statement, cst.SimpleStatementLine) and not inner(
                statement, first, indents
            ):
                return False
            used += count
        return used == len(python)

    return starts if align(module.body, tree.body, ()) else None


def _blocks(
    statement: cst.BaseStatement, first: ast.stmt, default_indent: str
) -> list[tuple[cst.BaseSuite, list[ast.stmt], tuple[str, ...]]] | None:
    """(libcst block, CPython's statements of it, the indents libcst adds between the statement
    and the block's own) for each block of a compound statement; None if CPython's statement is
    not of the same kind."""
    pairs: list[tuple[cst.BaseSuite, list[ast.stmt], tuple[str, ...]]] = []

    def add(suite: cst.BaseSuite, python: list[ast.stmt], extra: tuple[str, ...] = ()) -> None:
        pairs.append((suite, python, extra))

    def orelse(node: cst.Else | None, python: list[ast.stmt]) -> None:
        if node is not None:
            add(node.body, python)

    if isinstance(statement, cst.FunctionDef | cst.ClassDef):
        if not isinstance(first, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return None
        add(statement.body, first.body)
    elif isinstance(statement, cst.For | cst.While):
        if not isinstance(first, ast.For | ast.AsyncFor | ast.While):
            return None
        add(statement.body, first.body)
        orelse(statement.orelse, first.orelse)
    elif isinstance(statement, cst.If):
        current: cst.If = statement
        python: ast.stmt = first
        while True:  # ``elif`` is an ``If`` in the ``else`` of the one before, in both trees
            if not isinstance(python, ast.If):
                return None
            add(current.body, python.body)
            following = current.orelse
            if isinstance(following, cst.If):
                if len(python.orelse) != 1:
                    return None
                current, python = following, python.orelse[0]
                continue
            orelse(following, python.orelse)
            break
    elif isinstance(statement, cst.With):
        if not isinstance(first, ast.With | ast.AsyncWith):
            return None
        add(statement.body, first.body)
    elif isinstance(statement, cst.Try | cst.TryStar):
        if not isinstance(first, ast.Try) and type(first).__name__ != "TryStar":
            return None
        handlers: list[ast.excepthandler] = first.handlers  # type: ignore[attr-defined]
        own: Sequence[cst.ExceptHandler | cst.ExceptStarHandler] = statement.handlers
        if len(own) != len(handlers):
            return None
        add(statement.body, first.body)  # type: ignore[attr-defined]
        for handler, python_handler in zip(own, handlers, strict=True):
            assert isinstance(python_handler, ast.ExceptHandler)
            add(handler.body, python_handler.body)
        orelse(statement.orelse, first.orelse)  # type: ignore[attr-defined]
        if statement.finalbody is not None:
            add(statement.finalbody.body, first.finalbody)  # type: ignore[attr-defined]
    elif isinstance(statement, cst.Match):
        if not isinstance(first, ast.Match) or len(statement.cases) != len(first.cases):
            return None
        # The cases are indented inside ``match``, and each case's block inside its case.
        cases = (default_indent if statement.indent is None else statement.indent,)
        for case, python_case in zip(statement.cases, first.cases, strict=True):
            add(case.body, python_case.body, cases)
    # Any other compound statement (none in today's grammar): no blocks, placed as a whole.
    return pairs


def node_positions(module: cst.Module, nodes: Iterable[cst.CSTNode] | None) -> dict[int, CodeRange]:
    """``id(node)`` -> its range (1-based lines, 0-based columns), as ``PositionProvider`` gives;
    for every node of the module if ``nodes`` is None."""
    wanted = None if nodes is None else {id(node): node for node in nodes}
    if CodegenState is None:  # pragma: no cover
        provided = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {
            id(node): provided[node] for node in (provided if wanted is None else wanted.values())
        }
    if wanted is not None and not wanted:
        return {}
    state = _generate(module, None if wanted is None else set(wanted))
    spans = (
        state.spans if wanted is None else {k: state.spans[k] for k in wanted if k in state.spans}
    )
    marks = sorted({mark for span in spans.values() for mark in span})
    at = dict(zip(marks, _positions(state.tokens, marks), strict=True))
    return {key: CodeRange(at[start], at[end]) for key, (start, end) in spans.items()}


def _generate(
    module: cst.Module,
    wanted: set[int] | None,
    node: cst.CSTNode | None = None,
    indents: Sequence[str] = (),
) -> _State:
    """Generate the module's code (or only ``node``'s, one of its statements, written after
    ``indents``), noting the token indices where the ``wanted`` nodes (every node if None) begin
    and end; with ``wanted``, stop after the last of them. ``node``'s own start is noted in any
    case."""
    state = _State(module.default_indent, module.default_newline, wanted or set(), wanted is None)
    state.indent_tokens.extend(indents)
    if node is not None and wanted is not None:
        state.wanted.add(id(node))  # for its start only: it does not hold the generation up
    with suppress(_AllFound):  # raised once all are placed: the rest is not generated
        (module if node is None else node)._codegen(state)
    return state


def _positions(tokens: list[str], marks: Iterable[int]) -> Iterator[CodePosition]:
    """The (line, column) before each token index in ``marks`` (ascending)."""
    line, column, index = 1, 0, 0
    for mark in marks:
        for token in tokens[index:mark]:
            if "\n" in token or "\r" in token:
                segments = _NEWLINE.split(token)
                line += len(segments) - 1
                column = len(segments[-1])
            else:
                column += len(token)
        index = mark
        yield CodePosition(line, column)


class _AllFound(Exception):
    """Raised from the code generation once every requested node is placed."""


class _Span:
    """``record_syntactic_position`` for a wanted node: note the token indices it spans."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _State,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc_info: object) -> None:
        spans = self.state.spans
        start = self.start if self.start_node is None else spans[id(self.start_node)][0]
        end = len(self.state.tokens)
        if self.end_node is not None:
            # Not generated when the generation stopped early (its end is not asked for then).
            end = spans.get(id(self.end_node), (start, end))[1]
        spans[id(self.node)] = (start, end)


if CodegenState is not None:

    class _State(CodegenState):
        def __init__(
            self,
            default_indent: str,
            default_newline: str,
            wanted: set[int],
            everything: bool = False,
        ) -> None:
            super().__init__(default_indent, default_newline)
            self.wanted = wanted
            self.everything = everything
            self.unplaced = set(wanted)  # requested nodes not yet generated
            self.spans: dict[int, tuple[int, int]] = {}
            self.starts: list[int] = []

        def pop_trailing_newline(self) -> None:
            pass  # positions count it, as PositionProvider's do; the code itself is not kept

        def before_codegen(self, node: cst.CSTNode) -> None:
            if self.everything or id(node) in self.wanted:
                self.starts.append(len(self.tokens))

        def after_codegen(self, node: cst.CSTNode) -> None:
            key = id(node)
            if self.everything:
                start = self.starts.pop()
                if key not in self.spans:
                    self.spans[key] = (start, len(self.tokens))
            elif key in self.wanted:
                start = self.starts.pop()
                # A syntactic range, if the node recorded one, wins (as in PositionProvider).
                if key not in self.spans:
                    self.spans[key] = (start, len(self.tokens))
                self.unplaced.discard(key)
                if not self.unplaced:
                    raise _AllFound

        # libcst's is a @contextmanager generator; any context manager does, and a plain one is
        # cheaper for the nodes not wanted.
        def record_syntactic_position(  # type: ignore[override]
            self,
            node: cst.CSTNode,
            *,
            start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None,
        ) -> AbstractContextManager[None]:
            if not self.everything and id(node) not in self.wanted:
                return _NOTHING
            # The children it takes its bounds from are generated inside this block: want them.
            for bound in (start_node, end_node):
                if bound is not None:
                    self.wanted.add(id(bound))
            return _Span(self, node, start_node, end_node)
