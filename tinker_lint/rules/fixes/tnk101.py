"""TNK101's fix: move the wait after the next submit in the same block.

``r = fwd.result(); opt = tc.optim_step(a)`` becomes ``opt = tc.optim_step(a); r = fwd.result()``,
and the one-expression form ``r = tc.forward_backward(b).result()`` is split: the submit stays
where it was, bound to a new name, and only the wait moves.

Why it is safe: a wait has no effect but to block, to bind its target and to raise if the request
failed. Moving it later over statements ``S1 … Sk, B`` (``B`` holding the next submit) keeps every
value the program computes when
- the wait is a whole statement, ``name = <wait>`` or ``<wait>``, on a name or dotted name (or on a
  submit made in the same expression, which is split off in place);
- ``S1 … Sk, B`` are simple statements of the same block (no branch, loop or ``try`` to skip the
  moved wait), with no ``return``/``break``/``continue``/``raise``/``yield``, no ``locals()``-like
  introspection, that do not read the target, do not read or touch the future, and do not write
  anything the wait reads or binds;
- the target is not read by other code that could run in between (another function, a lambda, a
  class body): otherwise the fix is unsafe.
What does change is what happens when the waited request fails: ``S1 … B`` run (and ``B`` is
submitted) before the error is raised. That is the point of the fix, and the error still propagates,
unless the wait sits in a ``try`` whose handlers do not re-raise, or in ``with suppress(...)``: then
the step that the error used to skip is now submitted, so the fix is unsafe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.fix.plan import SAFE, UNSAFE, FixPlan, Replacement
from tinker_lint.model.query import (
    Returns,
    Role,
    Scope,
    SemanticModel,
    Submit,
    Wait,
    dotted_name,
    events_in,
    names_read,
    names_written,
    reads_when_run,
    target_keys,
    write_keys,
)
from tinker_lint.rules.fixes.names import Owner, name_index, owner_of

if TYPE_CHECKING:  # the rules import the fixes
    from tinker_lint.model.query import CallSite
    from tinker_lint.rules.base import Context

_JUMPS = (cst.Return, cst.Raise, cst.Break, cst.Continue, cst.Global, cst.Nonlocal)
_INTROSPECTION = frozenset({"locals", "vars", "globals", "eval", "exec", "dir", "breakpoint"})


def plan_move_wait(
    ctx: Context, wait: Wait, scope: Scope, submits: Sequence[cst.Call]
) -> FixPlan | None:
    """A plan for the TNK101 finding at ``wait``, whose next submits are ``submits``."""
    model = ctx.model
    small = model.parent(wait.node)
    if isinstance(small, cst.Assign):
        if len(small.targets) != 1 or small.value is not wait.node:
            return None
        target = small.targets[0].target
        if not isinstance(target, cst.Name):
            return None
        bound = target.value
    elif isinstance(small, cst.Expr) and small.value is wait.node:
        bound = None
    else:
        return None
    line = model.parent(small)
    if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return None

    split = _split(model, wait, scope)
    if split is None:
        if not all(dotted_name(expr) for expr in wait.waited):
            return None  # ``futures.pop().result()``: moving it would move the pop too
        future_names = {n for expr in wait.waited for n in names_read(model, expr)}
        wait_reads = names_read(model, small)
    else:
        future_names = set()
        wait_reads = {n for arg in split.args for n in names_read(model, arg.value)}
    writes = write_keys(bound) if bound else set()

    index = list(line.body).index(small)
    later = list(line.body[index + 1 :])
    same_line = _upto_submit(model, later, scope)
    if same_line is not None:
        moved, submit = same_line, same_line[-1]
        lines: list[cst.SimpleStatementLine] = []
    elif later or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    else:
        found = _lines_upto_submit(model, line, scope)
        if found is None:
            return None
        lines = found
        moved = [s for each in lines for s in each.body]
        last = _last_submit(model, lines[-1], scope)
        if last is None:
            return None  # ``opt = tc.optim_step(a); x = 1``: no line of its own right after it
        submit = last
    if not _submits_in(model, submit, scope) & {id(s) for s in submits}:
        return None  # not the submit the rule paired with this wait

    def movable(statement: cst.BaseSmallStatement) -> bool:
        return _can_move_past(model, statement, scope, wait_reads, writes, future_names)

    if not all(movable(statement) for statement in moved):
        return None
    if lines:
        # Past the submits that follow too (each would be the next finding), up to anything that
        # cannot be passed, or a save, which the rule lets end a step.
        lines = _extend(model, lines, scope, movable)

    applicability, caveat = SAFE, ""
    function = owner_of(model, line)
    guard = _exception_guard(model, line, function) or _caught_by_caller(ctx, function)
    if guard:
        applicability, caveat = UNSAFE, guard
    elif bound and _read_elsewhere(ctx, bound, function):
        applicability = UNSAFE
        caveat = f"`{bound}` is also read by other code (a function, lambda or class body)"

    stay, waits = _stay_and_wait(ctx, small, wait, split, bound)
    names = [_call_name(_first_submit(model, submit, scope))]
    names += [
        _call_name(_first_submit(model, s, scope))
        for s in lines[1:]
        if _submits_in(model, s, scope)
    ]
    submitted = ", ".join(f"`{name}(…)`" for name in dict.fromkeys(names))
    if split is None:
        message = f"Move the wait after {submitted} is submitted"
    else:
        message = f"Keep the future in `{split.name}` and wait for it after {submitted}"
    if lines and isinstance(line, cst.SimpleStatementLine):  # (lines are found only for one)
        changes = _move_after_line(line, lines, stay, waits)
    else:
        order = [*line.body[:index], *([stay] if stay else []), *moved, waits, *later[len(moved) :]]
        changes = ((line, line.with_changes(body=_with_separators(line.body, order))),)
    return FixPlan(message, applicability, changes, caveat)


# ------------------------------------------------------------------------------------------
# The one-expression form: ``tc.forward_backward(b).result()``, ``await tc.sample(p)``
# ------------------------------------------------------------------------------------------
class _Split:
    def __init__(self, submit: cst.Call, args: Sequence[cst.Arg], name: str) -> None:
        self.submit = submit
        self.args = args
        self.name = name


def _split(model: SemanticModel, wait: Wait, scope: Scope) -> _Split | None:
    node = wait.node
    args: Sequence[cst.Arg] = ()
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        inner, args = node.func.value, node.args
    elif isinstance(node, cst.Await):
        inner = node.expression
        func = inner.func if isinstance(inner, cst.Call) else None
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "result_async"
            and isinstance(inner, cst.Call)
        ):
            args = inner.args
            inner = func.value
    else:
        return None
    if not isinstance(inner, cst.Call):
        return None
    submit = model.submit_of(inner, scope)
    # Only a submit that returns its future at once: ``await sc.sample_async(p)`` submits when
    # awaited, so splitting it would not send it earlier.
    if submit is None or submit.method.returns is not Returns.FUTURE:
        return None
    return _Split(inner, args, "")


def _stay_and_wait(
    ctx: Context, small: cst.BaseSmallStatement, wait: Wait, split: _Split | None, bound: str | None
) -> tuple[cst.BaseSmallStatement | None, cst.BaseSmallStatement]:
    """What stays in place (the split-off submit, or nothing) and the wait statement to move."""
    if split is None:
        return None, small
    method = _call_name(split.submit)
    split.name = name_index(ctx).fresh(f"{bound}_future" if bound else f"{method}_future")
    holder = cst.Name(split.name)
    node = wait.node
    if isinstance(node, cst.Call):
        new_wait: cst.BaseExpression = node.with_changes(func=node.func.with_changes(value=holder))
    else:
        assert isinstance(node, cst.Await)
        inner = node.expression
        if inner is split.submit:
            new_wait = node.with_changes(expression=holder)
        else:
            assert isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute)
            new_wait = node.with_changes(
                expression=inner.with_changes(func=inner.func.with_changes(value=holder))
            )
    stay = cst.Assign(targets=[cst.AssignTarget(target=holder)], value=split.submit)
    if isinstance(small, cst.Assign):
        stay = small.with_changes(targets=[small.targets[0].with_changes(target=holder)])
        stay = stay.with_changes(value=split.submit)
    moved = small.with_changes(value=new_wait, semicolon=cst.MaybeSentinel.DEFAULT)
    return stay.with_changes(semicolon=small.semicolon), moved


# ------------------------------------------------------------------------------------------
# Finding the next submit
# ------------------------------------------------------------------------------------------
def _submits_in(model: SemanticModel, node: cst.CSTNode, scope: Scope) -> set[int]:
    return {id(e.node) for e in events_in(model, node, scope) if isinstance(e, Submit)}


def _first_submit(model: SemanticModel, node: cst.CSTNode, scope: Scope) -> cst.Call:
    return next(e.node for e in events_in(model, node, scope) if isinstance(e, Submit))


def _call_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else (dotted_name(func) or "call")


def _upto_submit(
    model: SemanticModel, smalls: Sequence[cst.BaseSmallStatement], scope: Scope
) -> list[cst.BaseSmallStatement] | None:
    for i, small in enumerate(smalls):
        if _submits_in(model, small, scope):
            return list(smalls[: i + 1])
    return None


def _lines_upto_submit(
    model: SemanticModel, line: cst.SimpleStatementLine, scope: Scope
) -> list[cst.SimpleStatementLine] | None:
    block = model.parent(line)
    if not isinstance(block, cst.IndentedBlock | cst.Module):
        return None
    siblings = list(block.body)
    found: list[cst.SimpleStatementLine] = []
    for sibling in siblings[siblings.index(line) + 1 :]:
        if not isinstance(sibling, cst.SimpleStatementLine):
            return None  # a branch, loop, try or with: the wait could be skipped or repeated
        found.append(sibling)
        if _submits_in(model, sibling, scope):
            return found
    return None


def _last_submit(
    model: SemanticModel, line: cst.SimpleStatementLine, scope: Scope
) -> cst.BaseSmallStatement | None:
    """The line's submitting statement, if the line ends with it."""
    submit = next(s for s in line.body if _submits_in(model, s, scope))
    return submit if submit is line.body[-1] else None


def _extend(
    model: SemanticModel,
    lines: list[cst.SimpleStatementLine],
    scope: Scope,
    movable: Callable[[cst.BaseSmallStatement], bool],
) -> list[cst.SimpleStatementLine]:
    block = model.parent(lines[-1])
    if not isinstance(block, cst.IndentedBlock | cst.Module):
        return lines  # (``_lines_upto_submit`` found them in one)
    siblings = list(block.body)
    extended, pending = list(lines), []
    for sibling in siblings[next(i for i, s in enumerate(siblings) if s is lines[-1]) + 1 :]:
        if not isinstance(sibling, cst.SimpleStatementLine):
            break
        if not all(movable(small) for small in sibling.body):
            break
        pending.append(sibling)
        submits = [e for e in events_in(model, sibling, scope) if isinstance(e, Submit)]
        if submits:
            if any(Role.SAVE in e.roles for e in submits):
                break
            if _last_submit(model, sibling, scope) is None:
                break
            extended += pending
            pending = []
    return extended


# ------------------------------------------------------------------------------------------
# Safety
# ------------------------------------------------------------------------------------------
def _can_move_past(
    model: SemanticModel,
    statement: cst.BaseSmallStatement,
    scope: Scope,
    wait_reads: set[str],
    wait_writes: set[str],
    future_names: set[str],
) -> bool:
    if isinstance(statement, _JUMPS):
        return False
    for node in model.walk(statement):
        if isinstance(node, cst.Yield):
            return False  # the generator may never resume: the wait would be skipped
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value in _INTROSPECTION
        ):
            return False
    # A function called, or handed to the call (a loss lambda given to a submit), reads the
    # result when it runs: now.
    reads = reads_when_run(model, statement, scope)
    writes = set(names_written(model, statement))
    if isinstance(statement, cst.Del):
        writes |= target_keys(statement.target)
    return not (reads & wait_writes or reads & future_names or writes & (wait_reads | wait_writes))


def _exception_guard(model: SemanticModel, line: cst.CSTNode, function: Owner | None) -> str:
    """Why an error from the wait could be swallowed before the step it used to skip."""
    child, current = line, model.parent(line)
    while current is not None and current is not function:
        if (
            isinstance(current, cst.Try | cst.TryStar)
            and child is current.body
            and not all(_reraises(handler) for handler in current.handlers)
        ):
            return "the wait is in a `try` whose handler may skip the step it used to guard"
        if isinstance(current, cst.With) and any(_suppresses(item) for item in current.items):
            return "the wait is in `with suppress(...)`, which may skip the step it used to guard"
        child, current = current, model.parent(current)
    return ""


def _caught_by_caller(ctx: Context, function: Owner | None) -> str:
    """A caller in this module that calls the function inside such a ``try`` (callers in other
    modules are not seen)."""
    if not isinstance(function, cst.FunctionDef):
        return ""
    model = ctx.model
    for site in _callers(ctx).get(id(function), ()):
        caller = site.function.node if site.function is not None else None
        if _exception_guard(model, site.node, caller):
            return (
                f"`{function.name.value}()` is called in a `try` whose handler may skip the step "
                "the wait used to guard"
            )
    return ""


def _callers(ctx: Context) -> dict[int, list[CallSite]]:
    """The module's call sites by the function each calls (by id of its node): resolved once for
    the file's plans, not for each (a thousand findings resolved every call a thousand times)."""
    kept = ctx.extra.get("fix.tnk101.callers")
    if isinstance(kept, dict):
        return kept
    model = ctx.model
    found: dict[int, list[CallSite]] = {}
    for site in model.calls:
        target = model.resolve_function(site.node.func, site.scope)
        if target is not None:
            found.setdefault(id(target.node), []).append(site)
    ctx.extra["fix.tnk101.callers"] = found
    return found


def _reraises(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    body = handler.body
    if not isinstance(body, cst.IndentedBlock) or len(body.body) != 1:
        return False
    line = body.body[0]
    return (
        isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(line.body[0], cst.Raise)
        and line.body[0].exc is None
    )


def _suppresses(item: cst.WithItem) -> bool:
    call = item.item
    if not isinstance(call, cst.Call):
        return False
    return (dotted_name(call.func) or "").rsplit(".", 1)[-1] == "suppress"


def _read_elsewhere(ctx: Context, name: str, function: Owner | None) -> bool:
    """Code that runs at other times (a nested function, a lambda, another function reading the
    global) sees the variable: moving the wait changes what it may see."""
    return any(o.owner is not function for o in name_index(ctx).same_variable(name, function))


# ------------------------------------------------------------------------------------------
# The rewrite
# ------------------------------------------------------------------------------------------
def _move_after_line(
    line: cst.SimpleStatementLine,
    lines: list[cst.SimpleStatementLine],
    stay: cst.BaseSmallStatement | None,
    wait: cst.BaseSmallStatement,
) -> tuple[tuple[cst.CSTNode, Replacement], ...]:
    submit_line = lines[-1]
    changes: list[tuple[cst.CSTNode, Replacement]] = []
    if stay is not None:
        changes.append((line, line.with_changes(body=[stay])))
        moved = cst.SimpleStatementLine(body=[wait])
        after = submit_line
    else:
        # Comments just above the wait go with it; blank lines above them stay where they were.
        leading = list(line.leading_lines)
        first_comment = next((i for i, e in enumerate(leading) if e.comment), len(leading))
        keep, carry = leading[:first_comment], leading[first_comment:]
        changes.append((line, cst.RemovalSentinel.REMOVE))
        moved = line.with_changes(leading_lines=carry, body=[wait])
        following = lines[0].with_changes(leading_lines=[*keep, *lines[0].leading_lines])
        if lines[0] is submit_line:
            after = following
        else:
            changes.append((lines[0], following))
            after = submit_line
    changes.append((submit_line, cst.FlattenSentinel([after, moved])))
    return tuple(changes)


def _with_separators(
    original: Sequence[cst.BaseSmallStatement], order: Sequence[cst.BaseSmallStatement]
) -> list[cst.BaseSmallStatement]:
    """``a; b; c`` reordered: the separators stay where they were, the last keeps its own."""
    separators = [s.semicolon for s in original[:-1]]
    last = original[-1].semicolon
    result = []
    for i, small in enumerate(order):
        if i == len(order) - 1:
            separator = last
        elif i < len(separators) and isinstance(separators[i], cst.Semicolon):
            separator = separators[i]
        else:
            separator = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
        result.append(small.with_changes(semicolon=separator))
    return result
