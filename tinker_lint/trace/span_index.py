"""Which traced span covers a source line (spec §6(a), join key 3: "a span->source index").

The cookbook names a span after a ``@scope`` function (``func.__name__``) or after the literal of a
``scope_span("name")`` / ``scope_span_sync("name")`` block. Read from the source with ``ast`` (the
code is never imported), each such region is a ``SourceSpan``: its name, and the span it opens
directly inside when that is in the same function (a block in a ``@scope`` function, or a block in
a block), which is how the trace's instances of a shared name (``compute_metrics`` in several
functions, spec D5) are told apart. Only names imported from ``tinker_cookbook.utils.trace`` count:
a project's own ``scope`` decorator opens no cookbook span.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

TRACE_MODULE = "tinker_cookbook.utils.trace"
DECORATOR = "scope"
BLOCKS = ("scope_span", "scope_span_sync")


@dataclass(frozen=True)
class SourceSpan:
    name: str  # the span's name in the trace
    parent: str | None  # the span it opens directly inside, when the source shows it
    first: int  # the lines it covers (a function's from its ``def``, a block's from its ``with``)
    last: int

    def label(self) -> str:
        return f"{self.parent}>{self.name}" if self.parent else self.name


def source_spans(text: str) -> list[SourceSpan]:
    """Every cookbook span region of a module, outermost first; none if it does not parse."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names = _trace_names(module)
    if not names:
        return []
    found: list[SourceSpan] = []
    _visit(module, None, names, found)
    return found


def innermost(spans: list[SourceSpan], line: int) -> SourceSpan | None:
    """The innermost region holding ``line`` (regions nest, so it is the one that starts last)."""
    holding = [span for span in spans if span.first <= line <= span.last]
    return max(holding, key=lambda span: (span.first, -span.last)) if holding else None


@dataclass(frozen=True)
class _Names:
    """How this module spells the cookbook's tracing API: bare names and module aliases."""

    bare: dict[str, str]  # local name -> the API name (``scope``, ``scope_span``...)
    modules: frozenset[str]  # local names bound to the trace module (``trace``, ``t``)

    def api(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.bare.get(node.id)
        if isinstance(node, ast.Attribute) and _dotted(node.value) in self.modules:
            return node.attr
        return None

    def __bool__(self) -> bool:
        return bool(self.bare or self.modules)


def _trace_names(module: ast.Module) -> _Names:
    bare: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                local = alias.asname or alias.name
                if node.module == TRACE_MODULE and alias.name in (DECORATOR, *BLOCKS):
                    bare[local] = alias.name
                elif f"{node.module}.{alias.name}" == TRACE_MODULE:
                    modules.add(local)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == TRACE_MODULE:
                    modules.add(alias.asname or alias.name)
    return _Names(bare, frozenset(modules))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _visit(node: ast.AST, parent: str | None, names: _Names, found: list[SourceSpan]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scoped = any(names.api(_callee(d)) == DECORATOR for d in child.decorator_list)
            if scoped:
                found.append(SourceSpan(child.name, None, child.lineno, _last_line(child)))
            # A function's body runs in its own call: an enclosing block is not its parent.
            _visit(child, child.name if scoped else None, names, found)
        elif isinstance(child, (ast.Lambda, ast.ClassDef)):
            _visit(child, None, names, found)
        elif isinstance(child, (ast.With, ast.AsyncWith)):
            inner = parent
            for name in _block_names(child, names):
                found.append(SourceSpan(name, inner, child.lineno, _last_line(child)))
                inner = name
            _visit(child, inner, names, found)
        else:
            _visit(child, parent, names, found)


def _block_names(node: ast.With | ast.AsyncWith, names: _Names) -> Iterator[str]:
    for item in node.items:
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and names.api(call.func) in BLOCKS
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
        ):
            yield call.args[0].value


def _callee(decorator: ast.expr) -> ast.expr:
    return decorator.func if isinstance(decorator, ast.Call) else decorator


def _last_line(node: ast.stmt) -> int:
    return node.end_lineno if node.end_lineno is not None else node.lineno
