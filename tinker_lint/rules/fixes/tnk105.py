"""TNK105's fix: call the plain method instead of its deprecated ``*_async`` twin.

Why it is safe (tinker 0.38, every ``*_async`` method read in ``tests/test_fix_sdk.py``):
- a "future after one await" method's body is ``return self.<plain>(<same arguments>)``, so
  ``await tc.forward_backward_async(x)`` and ``tc.forward_backward(x)`` give the same future: the
  fix renames the call and drops the ``await``;
- a "value after one await" method's body is ``return await self.<plain>(<same arguments>)``, and
  the plain method returns an awaitable future, so ``await sc.sample_async(x)`` and
  ``await sc.sample(x)`` give the same value: the fix renames and keeps the ``await``.
The two forms have the same parameters. Only a directly awaited call is rewritten safely. A
coroutine handed to ``asyncio.gather`` is rewritten only as an unsafe fix (the plain form submits at
once and raises at once, which ``return_exceptions=True`` would have caught); elsewhere (stored,
``create_task``, ``asyncio.run``) a coroutine and a future behave differently: no fix.
Methods whose plain form returns a plain value (``get_info``) or is itself deprecated
(``load_state``) get no fix.
"""

from __future__ import annotations

import libcst as cst

from tinker_lint.fix.plan import SAFE, UNSAFE, FixPlan
from tinker_lint.model.query import Returns, SdkCall, SemanticModel, lookup

_AWAITABLE = (Returns.FUTURE, Returns.CLIENT_FUTURE)
_FUNCTION_EDGES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def plan_plain_method(model: SemanticModel, call: SdkCall) -> FixPlan | None:
    method = call.method
    plain = lookup(method.client, method.plain_name)
    func = call.node.func
    if plain is None or plain.deprecated or not isinstance(func, cst.Attribute):
        return None
    renamed = call.node.with_changes(
        func=func.with_changes(attr=func.attr.with_changes(value=plain.name))
    )
    # A receiver known only by its name or a keyword could be some other library's object.
    applicability = SAFE if call.evidence in ("dataflow", "distinctive") else UNSAFE
    caveat = "" if applicability == SAFE else "the receiver is a Tinker client only by its name"
    parent = model.parent(call.node)
    if isinstance(parent, cst.Await) and parent.expression is call.node:
        if method.returns is Returns.FUTURE_AFTER_AWAIT and plain.returns is Returns.FUTURE:
            if _in_generator_expression(model, parent):
                return None  # dropping the await could turn an async generator into a sync one
            unwrapped = renamed.with_changes(
                lpar=[*parent.lpar, *renamed.lpar], rpar=[*renamed.rpar, *parent.rpar]
            )
            return FixPlan(
                f"Replace `await ….{method.name}(…)` with `….{plain.name}(…)`",
                applicability,
                ((parent, unwrapped),),
                caveat,
            )
        if method.returns is Returns.VALUE_AFTER_AWAIT and plain.returns in _AWAITABLE:
            return FixPlan(
                f"Replace `{method.name}` with `{plain.name}`",
                applicability,
                ((call.node, renamed),),
                caveat,
            )
        return None
    if (
        method.returns is Returns.VALUE_AFTER_AWAIT
        and plain.returns in _AWAITABLE
        and _gathered(model, call.node)
    ):
        return FixPlan(
            f"Replace `{method.name}` with `{plain.name}`",
            UNSAFE,
            ((call.node, renamed),),
            "the plain method submits when called and raises at once, "
            "which `asyncio.gather(..., return_exceptions=True)` would have caught",
        )
    return None


def _in_generator_expression(model: SemanticModel, node: cst.CSTNode) -> bool:
    current = model.parent(node)
    while current is not None and not isinstance(current, _FUNCTION_EDGES):
        if isinstance(current, cst.GeneratorExp):
            return True
        current = model.parent(current)
    return False


def _gathered(model: SemanticModel, call: cst.Call) -> bool:
    """``asyncio.gather(sc.sample_async(p), ...)`` or ``asyncio.gather(*[sc.sample_async(p) ...])``."""
    parent = model.parent(call)
    if isinstance(parent, cst.ListComp | cst.GeneratorExp) and parent.elt is call:
        arg = model.parent(parent)
        if not (isinstance(arg, cst.Arg) and arg.star == "*"):
            return False
    elif (
        isinstance(parent, cst.Arg)
        and parent.value is call
        and not parent.star
        and not parent.keyword
    ):
        arg = parent
    else:
        return False
    gather = model.parent(arg)
    site = model.call_site_of.get(id(gather)) if isinstance(gather, cst.Call) else None
    return site is not None and isinstance(gather, cst.Call) and model.is_gather(gather, site.scope)
