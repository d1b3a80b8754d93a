"""TNK106's fix: wait for the client where its factory is called (``.result()``, or ``await`` in
``async def``).

Why it is safe: in tinker 0.38 the factory returns a ``Backcompat*ClientFuture`` whose client methods
each call ``self.result()`` and forward to the client, so the first use already blocks until the
client exists; waiting at the factory gives the same client to the same calls, earlier, without the
warnings. That holds only if every use of the value is a use as a client, so the plan checks them
all (across the whole module, any function, any binding of the same name):
- every use is a call of a client method (``tc.forward_backward(...)``): safe;
- some use may be something else (passed to a function, an attribute read): unsafe;
- other bindings of the name are not uses of this value: they do not count;
- some use treats it as a future (``.result()``, ``await tc``, ``.future()``...): no fix, that use
  would break.
``await`` is only added where it is legal and keeps meaning: directly in the ``async def`` (also in a
list, set or dict comprehension), never in a lambda, a class body or a generator expression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.fix.plan import SAFE, UNSAFE, FixPlan
from tinker_lint.model.query import FUTURE_METHODS, CallSite, Client, SdkCall, SemanticModel, lookup
from tinker_lint.rules.fixes.names import name_index, owner_of

if TYPE_CHECKING:  # the rules import the fixes
    from tinker_lint.rules.base import Context

# What a client-future offers that the client does not (APIFuture's and concurrent.futures').
_FUTURE_ONLY = FUTURE_METHODS | {
    "done",
    "cancel",
    "cancelled",
    "running",
    "exception",
    "add_done_callback",
}


def plan_wait_for_client(
    ctx: Context, origin: cst.Call, site: CallSite | None, factory: SdkCall | None
) -> FixPlan | None:
    model = ctx.model
    if site is None or factory is None or factory.method.makes is None:
        return None
    makes = factory.method.makes
    function = site.function
    in_async = function is not None and function.is_async
    if function is not None and in_async and not _await_allowed(model, origin, function.node):
        return None
    parent = model.parent(origin)
    if isinstance(parent, cst.Attribute) and parent.value is origin:
        # ``svc.create_lora_training_client(...).forward_backward(...)``
        if _use(origin, parent, model.parent(parent), makes) != SAFE:
            return None
        applicability, needs_parens = SAFE, True
    elif isinstance(parent, cst.Assign) and parent.value is origin and len(parent.targets) == 1:
        target = parent.targets[0].target
        index = name_index(ctx)
        if isinstance(target, cst.Name):
            found = index.same_variable(target.value, owner_of(model, parent))
        elif isinstance(target, cst.Attribute):
            found = index.attributes.get(target.attr.value, [])
        else:
            return None
        verdicts = {
            _use(o.node, o.parent, o.grandparent, makes) for o in found if o.node is not target
        }
        if None in verdicts:
            return None
        applicability, needs_parens = (UNSAFE if UNSAFE in verdicts else SAFE), False
    else:
        return None

    if in_async:
        replacement: cst.BaseExpression = (
            cst.Await(expression=origin, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            if needs_parens
            else cst.Await(expression=origin)
        )
        message = f"Add `await` to `{factory.method.name}(…)`"
    else:
        replacement = cst.Call(func=cst.Attribute(value=origin, attr=cst.Name("result")))
        message = f"Add `.result()` to `{factory.method.name}(…)`"
    caveat = "" if applicability == SAFE else "the value is also used other than as a client"
    return FixPlan(message, applicability, ((origin, replacement),), caveat)


def _use(
    node: cst.CSTNode, parent: cst.CSTNode | None, grandparent: cst.CSTNode | None, makes: Client
) -> str | None:
    """SAFE: a client-method call, or no use of the value (a binding, a declaration); UNSAFE:
    something else; None: a use as a future."""
    if _binds(node, parent):
        return SAFE
    if isinstance(parent, cst.Await) and parent.expression is node:
        return None
    if isinstance(parent, cst.Attribute) and parent.value is node:
        name = parent.attr.value
        if name in _FUTURE_ONLY:
            return None
        called = isinstance(grandparent, cst.Call) and grandparent.func is parent
        return SAFE if called and lookup(makes, name) is not None else UNSAFE
    return UNSAFE


def _binds(node: cst.CSTNode, parent: cst.CSTNode | None) -> bool:
    """``x = ...``, ``for x in``, ``as x``, ``global x``, ``del x``: these do not read the value."""
    if isinstance(parent, cst.AssignTarget | cst.AnnAssign | cst.For | cst.NamedExpr):
        return parent.target is node
    if isinstance(parent, cst.AsName):
        return parent.name is node
    return isinstance(parent, cst.NameItem | cst.Param | cst.Del)


def _await_allowed(model: SemanticModel, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    current = model.parent(node)
    while current is not None and current is not function:
        if isinstance(current, cst.Lambda | cst.ClassDef | cst.FunctionDef | cst.GeneratorExp):
            return False
        current = model.parent(current)
    return current is function
