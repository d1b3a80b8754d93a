"""Random Tinker training loops for the fix tests, and an independent oracle: what each fix must do
to the program's ``ast`` (written against ``ast``, not libcst, and without the linter's model).

Every generated statement is unique (its names carry a counter), so a statement identifies a
finding across a rewrite.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from hypothesis import strategies as st

TRAINING_NAMES = ("tc", "training_client", "trainer", "policy")
SAMPLING_NAMES = ("sampler", "sampling_client", "sc2")

# The SDK methods whose ``*_async`` form gives a future after one await (its body is
# ``return self.<plain>(...)``; ``tests/test_fix_sdk.py`` checks this against tinker itself).
FUTURE_AFTER_AWAIT = frozenset(
    {
        "forward_async",
        "forward_backward_async",
        "forward_backward_custom_async",
        "optim_step_async",
        "save_state_async",
        "save_weights_for_sampler_async",
        "save_weights_external_async",
    }
)
SUBMIT_METHODS = frozenset(
    {
        "forward_backward",
        "forward_backward_async",
        "optim_step",
        "optim_step_async",
        "sample",
        "sample_async",
        "save_state",
    }
)


@dataclass(frozen=True)
class Program:
    source: str
    is_async: bool


def _sdk_prelude(draw, is_async: bool) -> tuple[list[str], str, str, str]:
    style = draw(st.sampled_from(["tinker", "alias", "from"]))
    lines = ["import asyncio"] if is_async else []
    if style == "tinker":
        lines += ["import tinker", "", "svc = tinker.ServiceClient()"]
    elif style == "alias":
        lines += ["import tinker as tk", "", "svc = tk.ServiceClient()"]
    else:
        lines += ["from tinker import ServiceClient", "", "svc = ServiceClient()"]
    tc = draw(st.sampled_from(TRAINING_NAMES))
    sc = draw(st.sampled_from(SAMPLING_NAMES))
    return lines, tc, sc, style


def _client(draw, name: str, factory: str, is_async: bool) -> str:
    call = f'svc.{factory}(base_model="m")'
    if is_async:
        form = draw(st.sampled_from(["await", "none", "deprecated"]))
        if form == "deprecated":
            return f'{name} = await svc.{factory}_async(base_model="m")'
        return f"{name} = {'await ' if form == 'await' else ''}{call}"
    return f"{name} = {call}{draw(st.sampled_from(['.result()', '']))}"


@st.composite
def programs(draw) -> Program:
    is_async = draw(st.booleans())
    at_module = not is_async and draw(st.booleans())
    lines, tc, sc, _ = _sdk_prelude(draw, is_async)
    setup = [
        _client(draw, tc, "create_lora_training_client", is_async),
        _client(draw, sc, "create_sampling_client", is_async),
    ]
    if draw(st.booleans()):
        setup.append(f"register({draw(st.sampled_from([tc, sc]))})")  # a use other than as a client
    pending: list[str] = []  # futures not yet waited for
    results: list[str] = []  # names bound to results
    body: list[str] = []
    n = draw(st.integers(min_value=2, max_value=9))
    fb = f'{tc}.forward_backward(batch, loss_fn="cross_entropy")'
    sample_args = "prompt, num_samples=1, sampling_params=params"
    for k in range(n):
        kinds = ["fb", "fb_wait", "opt", "sample", "indep", "log", "cadence"]
        if pending:
            kinds += ["wait", "wait", "bare_wait", "try_wait"]
        if results:
            kinds += ["dep", "opt_dep"]
        if is_async:
            kinds += ["fb_async", "opt_async", "sample_async", "gather_async", "await_fb"]
            if pending:
                kinds += ["await_wait", "await_wait", "bare_await"]
        kind = draw(st.sampled_from(kinds))
        if kind == "fb":
            body.append(f"f{k} = {fb}")
            pending.append(f"f{k}")
        elif kind == "fb_wait":
            body.append(f"r{k} = {fb}.result()")
            results.append(f"r{k}")
        elif kind == "opt":
            body.append(f"o{k} = {tc}.optim_step(adam)")
            pending.append(f"o{k}")
        elif kind == "opt_dep":
            body.append(f"o{k} = {tc}.optim_step(adam_for({draw(st.sampled_from(results))}))")
            pending.append(f"o{k}")
        elif kind == "sample":
            body.append(f"s{k} = {sc}.sample({sample_args})")
            pending.append(f"s{k}")
        elif kind == "indep":
            body.append(f"lr{k} = schedule(step, {k})")
        elif kind == "log":
            body.append(f"print(step, {k})")
        elif kind == "cadence":
            body.append(f"if step % 10 == 0:\n    {tc}.save_state('ckpt{k}')")
        elif kind == "dep":
            body.append(f"m{k} = metrics({draw(st.sampled_from(results))})")
        elif kind in ("wait", "bare_wait", "try_wait", "await_wait", "bare_await"):
            future = draw(st.sampled_from(pending))
            pending.remove(future)
            if kind == "wait":
                body.append(f"r{k} = {future}.result()")
                results.append(f"r{k}")
            elif kind == "bare_wait":
                body.append(f"{future}.result()")
            elif kind == "await_wait":
                body.append(f"r{k} = await {future}")
                results.append(f"r{k}")
            elif kind == "bare_await":
                body.append(f"await {future}")
            else:
                waited = f"await {future}" if is_async else f"{future}.result()"
                handler = draw(st.sampled_from(["continue", "raise", "print('failed')"]))
                body.append(
                    f"try:\n    r{k} = {waited}\n    o{k} = {tc}.optim_step(adam)\n"
                    f"except RuntimeError:\n    {handler}"
                )
                results.append(f"r{k}")
        elif kind == "fb_async":
            body.append(f'f{k} = await {tc}.forward_backward_async(batch, loss_fn="cross_entropy")')
            pending.append(f"f{k}")
        elif kind == "opt_async":
            body.append(f"o{k} = await {tc}.optim_step_async(adam)")
            pending.append(f"o{k}")
        elif kind == "sample_async":
            body.append(f"s{k} = await {sc}.sample_async({sample_args})")
            results.append(f"s{k}")
        elif kind == "gather_async":
            body.append(
                f"g{k} = await asyncio.gather({sc}.sample_async({sample_args}), "
                f"{sc}.sample_async(prompt_{k}, num_samples=1, sampling_params=params))"
            )
            results.append(f"g{k}")
        elif kind == "await_fb":
            body.append(f"r{k} = await {fb}")
            results.append(f"r{k}")

    body = _decorate(draw, body)

    def indent(block: list[str], prefix: str) -> list[str]:
        return [prefix + line for stmt in block for line in stmt.split("\n")]

    loop = ["for step, batch in enumerate(batches):", *indent(body, "    ")]
    if at_module:
        lines += ["", *setup, "", *loop]
    else:
        head = "async def train(batches):" if is_async else "def train(batches):"
        lines += ["", "", head, *indent(setup, "    "), *indent(loop, "    ")]
    return Program("\n".join(lines) + "\n", is_async)


def _decorate(draw, body: list[str]) -> list[str]:
    """Layout that must survive a fix: comments above and after statements, blank lines, and
    simple statements joined on one line with ``;``."""
    out: list[str] = []
    for n, statement in enumerate(body):
        one_line = "\n" not in statement
        style = draw(st.sampled_from(["plain"] * 4 + ["above", "after", "blank", "join"]))
        if style == "above":
            statement = f"# note {n}\n{statement}"
        elif style == "after" and one_line:
            statement = f"{statement}  # after {n}"
        elif style == "blank":
            statement = f"\n{statement}"
        elif style == "join" and one_line and out and "\n" not in out[-1] and "#" not in out[-1]:
            out[-1] = f"{out[-1]}; {statement}"
            continue
        out.append(statement)
    return out


# ------------------------------------------------------------------------------------------
# The oracle
# ------------------------------------------------------------------------------------------
def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _at(tree: ast.AST, line: int, col: int, kinds: tuple[type, ...]) -> list[ast.AST]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and getattr(node, "lineno", None) == line
        and node.col_offset == col - 1
    ]


def _wait_at(tree: ast.AST, line: int, col: int) -> list[ast.AST]:
    """The wait a finding at (line, col) is about: an ``await`` starting there, or a
    ``x.result()`` whose ``result`` starts there (where the pipelining rules report a wait)."""
    return [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.Await) and (node.lineno, node.col_offset) == (line, col - 1))
        or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "result"
            and node.func.end_lineno == line
            and node.func.end_col_offset == col - 1 + len("result")
        )
    ]


def _statement(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[ast.stmt, list[ast.stmt]]:
    """The statement holding ``node`` and the list (block) it sits in."""
    while not isinstance(node, ast.stmt):
        node = parents[id(node)]
    parent = parents[id(node)]
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is node for s in block):
            return node, block
    raise AssertionError("statement outside any block")


def _submits(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in SUBMIT_METHODS
        for n in ast.walk(node)
    )


def _is_async_context(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, ast.AsyncFunctionDef):
            return True
        if isinstance(node, ast.FunctionDef | ast.Lambda):
            return False
    return False


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise AssertionError("child not found")


def expected_tree(source: str, code: str, line: int, col: int, fixed: str) -> ast.Module:
    """The ``ast`` the fix of the finding ``code`` at (line, col) must produce, built from the
    original by hand. ``fixed`` is only read for the name a split introduces."""
    tree = ast.parse(source)
    parents = _parents(tree)
    if code == "TNK105":
        (call,) = [c for c in _at(tree, line, col, (ast.Call,)) if c.func.attr.endswith("_async")]
        method = call.func.attr
        call.func.attr = method.removesuffix("_async")
        parent = parents[id(call)]
        if isinstance(parent, ast.Await) and method in FUTURE_AFTER_AWAIT:
            _replace(parents[id(parent)], parent, call)
        return tree
    if code == "TNK106":
        (call,) = [c for c in _at(tree, line, col, (ast.Call,)) if "create" in c.func.attr]
        if _is_async_context(call, parents):
            wrapped: ast.expr = ast.Await(value=call)
        else:
            wrapped = ast.Call(
                func=ast.Attribute(value=call, attr="result", ctx=ast.Load()), args=[], keywords=[]
            )
        _replace(parents[id(call)], call, wrapped)
        return tree
    assert code == "TNK101", code
    (wait,) = _wait_at(tree, line, col)
    statement, block = _statement(wait, parents)
    index = next(i for i, s in enumerate(block) if s is statement)
    target = next(i for i in range(index + 1, len(block)) if _submits(block[i]))
    inner = wait.value if isinstance(wait, ast.Await) else wait.func.value
    if isinstance(inner, ast.Call) and inner.func.attr == "result_async":
        inner = inner.func.value
    split = isinstance(inner, ast.Call) and _submits(inner)
    if block[target].lineno != statement.lineno:
        target = _extend(block, target, statement, wait, inner if split else None)
    if split:
        # ``name = <submit>`` stays, the wait on ``name`` moves.
        known = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        holder = _holder_name(ast.parse(fixed), inner, known)
        moved = copy.deepcopy(statement)
        moved_parents = _parents(moved)
        for node in ast.walk(moved):
            if ast.dump(node) == ast.dump(inner):
                _replace(moved_parents[id(node)], node, ast.Name(holder, ast.Load()))
                break
        stay = ast.Assign(targets=[ast.Name(holder, ast.Store())], value=inner, lineno=0)
        block[index] = stay
        block.insert(target + 1, moved)
    else:
        block.insert(target + 1, statement)
        del block[index]
    return tree


def _names(node: ast.AST, contexts: tuple[type, ...]) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, contexts)}


def _extend(
    block: list[ast.stmt], target: int, statement: ast.stmt, wait: ast.AST, split: ast.AST | None
) -> int:
    """Past the submits that follow on later lines too, while nothing in between reads what the
    wait binds, touches its future, or rebinds what it reads; never past a save."""
    bound = _names(statement, (ast.Store,))
    if split is None:
        waited = wait.value if isinstance(wait, ast.Await) else wait.func.value
        futures = _names(waited, (ast.Load,))
        reads = _names(statement, (ast.Load,))
    else:
        futures = set()
        reads = {n for a in getattr(wait, "args", []) for n in _names(a, (ast.Load,))}

    def movable(s: ast.stmt) -> bool:
        if isinstance(s, ast.Return | ast.Raise | ast.Break | ast.Continue | ast.Global):
            return False
        if not isinstance(s, ast.Assign | ast.Expr | ast.AugAssign | ast.AnnAssign | ast.Pass):
            return False
        return not (
            _names(s, (ast.Load,)) & (bound | futures)
            or _names(s, (ast.Store, ast.Del)) & (reads | bound)
        )

    lines: dict[int, list[int]] = {}
    for i in range(target + 1, len(block)):
        lines.setdefault(block[i].lineno, []).append(i)
    if any(block[i].lineno == block[target].lineno for i in range(target + 1, len(block))):
        return target
    for indices in lines.values():
        if not all(movable(block[i]) for i in indices):
            break
        submitting = [i for i in indices if _submits(block[i])]
        if submitting:
            saves = any(
                isinstance(n, ast.Attribute) and n.attr == "save_state"
                for i in submitting
                for n in ast.walk(block[i])
            )
            if saves or submitting[0] != indices[-1]:
                break
            target = indices[-1]
    return target


def _holder_name(tree: ast.AST, submit: ast.Call, known: set[str]) -> str:
    """The new name the fix bound the split-off submit to."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and ast.dump(node.value) == ast.dump(submit)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id not in known
        ):
            return node.targets[0].id
    raise AssertionError("the split-off submit is not bound to a name")


def finding_key(source: str, code: str, line: int, col: int) -> tuple[str, str, str]:
    """What identifies a finding across a rewrite: its code, its statement, and for TNK101 the
    statement of the next submit in the same block (the pair it is about)."""
    tree = ast.parse(source)
    parents = _parents(tree)
    nodes = _at(tree, line, col, (ast.Call, ast.Await)) or _wait_at(tree, line, col)
    assert nodes, (code, line, col)
    statement, block = _statement(nodes[0], parents)
    call = ast.dump(nodes[-1])
    if code != "TNK101":
        return code, ast.dump(statement), call
    index = next(i for i, s in enumerate(block) if s is statement)
    after = next((s for s in block[index + 1 :] if _submits(s)), None)
    return code, ast.dump(statement), ast.dump(after) if after is not None else ""
