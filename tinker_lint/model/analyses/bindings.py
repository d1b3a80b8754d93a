"""Which names a region of code binds, and what a call passes for a parameter: the two dataflow
questions behind "does this change from one iteration to the next" (run loops in ``steps.py``,
unchanging reads in TNK205)."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, cast

import libcst as cst

from tinker_lint.model.analyses.flow import NESTED_CODE, names_mutated, target_keys
from tinker_lint.model.facts.scopes import CallSite, FunctionInfo

if TYPE_CHECKING:
    from tinker_lint.model.query import SemanticModel


def bound_in(model: SemanticModel, node: cst.CSTNode) -> set[str]:
    """Write keys of every name ``node`` binds or stores into (assignment, ``for``, comprehension
    and ``with`` targets, ``x.append(...)``); not inside nested functions."""
    keys = set(names_mutated(model, node))
    for current in model.walk(node, NESTED_CODE):
        # Exact types, as ``flow.py``'s walks: a parsed tree holds only libcst's concrete classes,
        # and ``isinstance`` on them goes through ``abc`` (most of this walk's time on a big loop).
        kind = type(current)
        if kind is cst.Assign:
            for target in cast(cst.Assign, current).targets:
                keys |= target_keys(target.target)
        elif kind in _ONE_TARGET:
            keys |= target_keys(cast(_OneTarget, current).target)
        elif kind is cst.AsName:
            name = cast(cst.AsName, current).name
            if isinstance(name, cst.BaseExpression):
                keys |= target_keys(name)
    return keys


_OneTarget = cst.AnnAssign | cst.AugAssign | cst.NamedExpr | cst.For | cst.CompFor
_ONE_TARGET = frozenset(typing.get_args(_OneTarget))


def parameters(function: FunctionInfo) -> list[str]:
    """The function's parameters a caller passes, in order (``self`` left out)."""
    params = function.node.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    if function.self_name is not None and names and names[0] == function.self_name:
        names = names[1:]
    return names


def argument(function: FunctionInfo, call: CallSite, name: str) -> cst.BaseExpression | None:
    """The value ``call`` passes for parameter ``name`` of ``function`` (its default when not
    passed), or None when unpacked arguments hide it or it has none."""
    params = parameters(function)
    if name not in params:
        return None
    index = params.index(name)
    positional = 0
    for arg in call.node.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == index:
                return arg.value
            positional += 1
        elif arg.keyword.value == name:
            return arg.value
    every = function.node.params
    for param in (*every.posonly_params, *every.params, *every.kwonly_params):
        if param.name.value == name and param.default is not None:
            return param.default
    return None
