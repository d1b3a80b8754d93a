"""TNK407's fix: build the tensor on the device, ``torch.zeros(n).to(dev)`` -> ``torch.zeros(n,
device=dev)``, ``torch.ones(n).cuda()`` -> ``torch.ones(n, device="cuda")``.

Why it is safe: a constant factory (``zeros``, ``ones``, ``full``, ``empty``, ``arange``, ``eye``)
or ``torch.tensor`` of a literal gives the same values and dtype wherever it is built, and
``.to(dev)``/``.cuda()`` of a fresh tensor keeps neither the CPU copy nor anything else; ``.cuda()``
and ``device="cuda"`` both mean the current CUDA device. A dtype passed to ``.to()`` is folded into
the factory (``dtype=``) only for ``zeros``, ``ones``, ``empty`` and ``eye``, whose values are exact
in any dtype: ``arange`` in another dtype can have a different number of steps, ``full`` and
``torch.tensor`` round their values twice when cast after building.

Unsafe (``--unsafe-fixes``):
- random factories (``rand``, ``randn``, ``randint``): on the device they draw from the device's
  generator, so the same seed gives other numbers;
- a device known only as a name the module does not bind to a device (a parameter ``device``):
  ``.to(x)`` also takes a dtype or a tensor, ``device=`` only a device.

No fix: ``.to()`` with anything but the device and a foldable ``dtype`` (``non_blocking``,
``copy``, ``memory_format``), a factory that already has ``dtype=`` when ``.to()`` passes one, or
``**kwargs``; ``.cuda()`` with arguments other than one device.
"""

from __future__ import annotations

import libcst as cst

from tinker_lint.fix.plan import SAFE, UNSAFE, FixPlan
from tinker_lint.model.query import BindingKind, CallSite, SemanticModel

_RANDOM = frozenset({"torch.rand", "torch.randn", "torch.randint"})
_EXACT = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.eye"})


def plan_device_argument(
    model: SemanticModel, site: CallSite, factory: cst.Call, qualified: str
) -> FixPlan | None:
    """The plan for ``factory(...).to(...)``/``.cuda(...)`` at ``site``, or None."""
    move = site.node
    func = move.func
    if not isinstance(func, cst.Attribute):
        return None
    if any(arg.star for arg in factory.args) or any(arg.star for arg in move.args):
        return None
    device: cst.BaseExpression | None = None
    dtype: cst.BaseExpression | None = None
    if func.attr.value == "cuda":
        if not move.args:
            device = cst.SimpleString('"cuda"')
        elif len(move.args) == 1 and _keyword(move.args[0]) in (None, "device"):
            device = move.args[0].value
        else:
            return None
    else:
        for index, arg in enumerate(move.args):
            keyword = _keyword(arg)
            if keyword is None and index == 0 and not _is_dtype(model, arg.value, site):
                device = arg.value
            elif (keyword is None and index == 0) or keyword == "dtype":
                dtype = arg.value
            elif keyword is None and index == 1 and device is not None:
                dtype = arg.value  # ``.to(dev, torch.float16)``
            elif keyword == "device":
                device = arg.value
            else:
                return None  # ``non_blocking=``, ``copy=``, ``memory_format=``
    if device is None:
        return None  # ``.to(torch.float16)``: a cast, not a move
    if dtype is not None:
        has_dtype = any(_keyword(arg) == "dtype" for arg in factory.args)
        if has_dtype or qualified not in _EXACT:
            return None
    added = [("device", device)] + ([("dtype", dtype)] if dtype is not None else [])
    replacement = _with_keywords(factory, added).with_changes(lpar=move.lpar, rpar=move.rpar)
    caveats: list[str] = []
    if qualified in _RANDOM:
        caveats.append(
            "it draws from the device's random generator: the same seed gives other numbers"
        )
    if not _known_device(model, device, site):
        caveats.append(
            f"`{model.module.code_for_node(device)}` is not shown to be a device "
            "(`.to()` also takes a dtype or a tensor)"
        )
    where = '`device="cuda"`' if func.attr.value == "cuda" and not move.args else "`device=`"
    return FixPlan(
        f"Pass {where} to the factory instead of moving the tensor",
        UNSAFE if caveats else SAFE,
        ((move, replacement),),
        "; ".join(caveats),
    )


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _is_dtype(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """``torch.float16``, ``torch.long``: a dtype, not a device (``torch.device(...)`` is not)."""
    qualified = model.qualify(expr, site.scope) or ""
    return (
        isinstance(expr, cst.Attribute)
        and qualified.startswith("torch.")
        and (qualified.count(".") == 1)
    )


def _known_device(model: SemanticModel, expr: cst.BaseExpression, site: CallSite) -> bool:
    """A device by what it is: a string (``"cuda"``), ``torch.device(...)``, a ``.device``
    attribute (``x.device``, ``self.device``), or a name the function binds only to those."""
    if isinstance(expr, cst.SimpleString | cst.Integer):
        return True
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "device"
    if isinstance(expr, cst.Call):
        return model.qualify(expr.func, site.scope) == "torch.device"
    if isinstance(expr, cst.Name):
        bindings = site.scope.lookup(expr.value)
        return bool(bindings) and all(
            binding.kind is BindingKind.VALUE
            and isinstance(binding.expr, cst.BaseExpression)
            and not isinstance(binding.expr, cst.Name)
            and _known_device(model, binding.expr, site)
            for binding in bindings
        )
    return False


def _with_keywords(call: cst.Call, added: list[tuple[str, cst.BaseExpression]]) -> cst.Call:
    """``call`` with ``name=value`` arguments added after its own. Between arguments, what the
    call has between its own (one per line when it is written so); a trailing comma, and the
    line break before the closing parenthesis, stay last."""
    args = list(call.args)
    closing = args[-1].comma if args else cst.MaybeSentinel.DEFAULT
    trailing = isinstance(closing, cst.Comma)
    between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if trailing and len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
        between = args[-2].comma
    elif trailing:
        between = cst.Comma(whitespace_after=call.whitespace_before_args)
    if args:
        args[-1] = args[-1].with_changes(comma=between)
    new: list[cst.Arg] = []
    for index, (name, value) in enumerate(added):
        comma: cst.Comma | cst.MaybeSentinel = between
        if index == len(added) - 1:
            comma = closing if trailing else cst.MaybeSentinel.DEFAULT
        new.append(
            cst.Arg(
                value=value,
                keyword=cst.Name(name),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
                comma=comma,
            )
        )
    return call.with_changes(args=[*args, *new])
