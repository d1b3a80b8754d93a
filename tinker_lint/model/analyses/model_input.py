"""A ``tinker.ModelInput`` built token by token: the one question ``token_by_token_builds``.

``ModelInput.append(chunk)`` returns ``ModelInput(chunks=self.chunks + [chunk])``, and
``append_int(t)`` is ``append(EncodedTextChunk(tokens=[t]))`` (the same in every SDK release from
0.1.0 to 0.38.0): each call copies the chunk list and validates it again, and adds one chunk. So
``mi = mi.append_int(t)`` once per token is quadratic (``bench/model_input_append.py``: ~35 ms for
1k tokens, ~120 ms for 2k, against ~0.05 ms for one chunk), and the request carries one chunk per
token. A list of one-token chunks (``chunks.append(EncodedTextChunk(tokens=[t]))``) is linear to
build (~10 ms for 2k tokens) but sends one chunk per token all the same (a JSON body 8x larger).

Found by dataflow: the receiver is a ``ModelInput`` (``infer.py``), rebound to what the call gives
(``mi = mi.append_int(t)``: a copy per iteration, not one continuation per candidate), inside a loop
whose iteration gives the token (the loop's target, or a name computed from it; in a ``while`` loop,
a name the body changes). Not: one chunk per message or turn (``mi.append(chunk)`` of many tokens),
a separator token appended once per turn (a constant, not the iteration's), a loop that submits a
request every iteration (incremental decoding: the request is the cost).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.batches import loop_iterables
from tinker_lint.model.analyses.flow import names_read, names_written, target_keys
from tinker_lint.model.facts.names import MODEL_INPUT_COPIES
from tinker_lint.model.facts.scopes import CallSite, LoopInfo, is_tinker_name
from tinker_lint.model.facts.types import Kind

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

# What a file must name for a token-by-token build to be in it (TNK203's pre-filter).
TOKEN_BUILD_WORDS = frozenset({"append_int", "EncodedTextChunk"})


@dataclass(frozen=True)
class TokenBuild:
    """One call that adds a single token to a ``ModelInput`` being built, once per iteration."""

    site: CallSite
    # "append_int": ``mi = mi.append_int(t)``; "append": ``mi = mi.append(<one-token chunk>)``;
    # "chunk": ``EncodedTextChunk(tokens=[t])`` made per iteration (a list of one-token chunks).
    how: str
    receiver: cst.BaseExpression | None  # the ``ModelInput`` copied (None for "chunk")
    loop: LoopInfo  # the loop that runs it once per token
    iterable: cst.BaseExpression | None  # what that loop iterates (None for a ``while`` loop)


def token_by_token_builds(model: ModelView) -> Iterator[TokenBuild]:
    """The calls of the module that build a ``ModelInput`` one token per loop iteration, in source
    order. A one-token chunk given to a reported ``append`` is not reported again."""
    copying: set[int] = set()  # the chunks inside reported ``append`` calls
    for site in model.calls:
        if not site.loops:
            continue
        loop = site.loops[-1]
        found = _copy_per_token(model, site, loop) or _chunk_per_token(model, site, loop)
        if found is None or id(site.node) in copying:
            continue
        if found.how == "append":
            copying.add(id(site.node.args[0].value))
        yield found


def _copy_per_token(model: ModelView, site: CallSite, loop: LoopInfo) -> TokenBuild | None:
    """``mi = mi.append_int(t)`` or ``mi = mi.append(EncodedTextChunk(tokens=[t]))``, with ``mi``
    a ``ModelInput`` and ``t`` this iteration's token."""
    call = site.node
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in MODEL_INPUT_COPIES:
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    receiver = func.value
    if not any(t.kind is Kind.MODEL_INPUT for t in model.types(receiver, site.scope)):
        return None
    if not _rebinds(model, call, receiver):
        return None
    token = call.args[0].value
    if func.attr.value == "append":
        single = _single_token(model, token, site)
        if single is None:
            return None  # a whole chunk (a message, a turn): linear in the number of turns
        token = single
    if not _per_iteration(model, token, loop):
        return None
    return TokenBuild(site, func.attr.value, receiver, loop, _iterable(loop))


def _chunk_per_token(model: ModelView, site: CallSite, loop: LoopInfo) -> TokenBuild | None:
    """``EncodedTextChunk(tokens=[t])`` with ``t`` this iteration's token."""
    token = _single_token(model, site.node, site)
    if token is None or not _per_iteration(model, token, loop):
        return None
    return TokenBuild(site, "chunk", None, loop, _iterable(loop))


def _single_token(
    model: ModelView, expr: cst.BaseExpression, site: CallSite
) -> cst.BaseExpression | None:
    """The token of ``EncodedTextChunk(tokens=[t])`` (a Tinker chunk of a one-element list)."""
    if not isinstance(expr, cst.Call):
        return None
    if not is_tinker_name(model.qualify(expr.func, site.scope), "EncodedTextChunk"):
        return None
    for arg in expr.args:
        if arg.keyword is not None and arg.keyword.value == "tokens":
            tokens = arg.value
            if (
                isinstance(tokens, cst.List)
                and len(tokens.elements) == 1
                and not isinstance(tokens.elements[0], cst.StarredElement)
            ):
                return tokens.elements[0].value
    return None


def _rebinds(model: ModelView, call: cst.Call, receiver: cst.BaseExpression) -> bool:
    """``mi = mi.append_int(t)``: the call's value replaces the receiver (``mi: ModelInput = ...``
    too). ``prompt.append_int(t)`` kept apart per candidate is one copy each, not a growing one."""
    statement = model.parent(call)
    if isinstance(statement, cst.Assign) and statement.value is call:
        targets = [t.target for t in statement.targets]
    elif isinstance(statement, cst.AnnAssign) and statement.value is call:
        targets = [statement.target]
    else:
        return False
    code = model.module.code_for_node
    return any(code(target) == code(receiver) for target in targets)


def _per_iteration(model: ModelView, token: cst.BaseExpression, loop: LoopInfo) -> bool:
    """Whether ``token`` is this iteration's: it reads the loop's target or a name computed from it
    in the body (``tok = tokens[i]``); in a ``while`` loop, a name the body changes (``i += 1``).
    A loop that submits a request on every iteration (decoding one token at a time) is not one."""
    if model.loop_submit_roles(loop):
        return False
    node = loop.node
    changed: set[str] = set()
    if isinstance(node, cst.While):
        for statement in _statements(model, node.body):
            changed |= names_written(model, statement)
    elif isinstance(node, cst.For):
        changed = target_keys(node.target)
    else:
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            changed |= target_keys(clause.target)
            clause = clause.inner_for_in
    # Names computed from the iteration's in the body (``tok = tokens[i]``), to a fixed point.
    assignments = [
        s for s in _statements(model, loop.body) if isinstance(s, cst.Assign | cst.AnnAssign)
    ]
    grew = True
    while grew:
        grew = False
        for statement in assignments:
            if statement.value is None or not names_read(model, statement.value) & changed:
                continue
            written = names_written(model, statement)
            if not written <= changed:
                changed |= written
                grew = True
    return bool(names_read(model, token) & changed)


def _statements(model: ModelView, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The small statements inside ``node``, not inside nested functions or classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BaseSmallStatement):
            yield current
            continue
        if isinstance(current, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue
        stack.extend(model.children(current))


def _iterable(loop: LoopInfo) -> cst.BaseExpression | None:
    return next(loop_iterables(loop), None)
