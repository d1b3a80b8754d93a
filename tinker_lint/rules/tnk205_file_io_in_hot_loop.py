"""TNK205 file-io-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from tinker_lint.model.query import (
    NESTED_CODE,
    CallSite,
    SemanticModel,
    StepContext,
    bound_in,
    exact_paths,
    is_payload,
    loop_iterables,
    names_read,
    parameters,
)
from tinker_lint.model.query import argument as argument_of
from tinker_lint.prefilter.needs import Needs, parts, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    builtin,
    callee,
    calls_in_hot_loops,
    code_of,
    every_step,
    in_step,
)

# Functions that read a file (and ``pandas.read_*``), and functions that dump data to one: the
# position of the first argument that is data (``np.save(file, arr)``, ``torch.save(obj, f)``).
READERS = frozenset(
    {
        "numpy.load",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "torch.load",
        "datasets.load_dataset",
        "datasets.load_from_disk",
    }
)
DUMPERS = {
    "numpy.save": 1,
    "numpy.savez": 1,
    "numpy.savez_compressed": 1,
    "numpy.savetxt": 1,
    "torch.save": 0,
}
OPENERS = frozenset({"io.open", "gzip.open", "bz2.open", "lzma.open", "codecs.open"})
FILE_FUNCTIONS = READERS | DUMPERS.keys() | OPENERS
PATH_READS = frozenset({"read_text", "read_bytes"})
PATH_WRITES = frozenset({"write_text", "write_bytes"})
PATH_METHODS = PATH_READS | PATH_WRITES
PANDAS_READERS = "pandas.read_"  # any function of pandas whose name starts so
# Serializers that write their first argument to the file handle they are given.
HANDLE_DUMPERS = frozenset({"json.dump", "pickle.dump", "cloudpickle.dump", "torch.save"})
# What writes the text its argument becomes (``f.write(json.dumps(record) + "\n")``).
TO_TEXT = frozenset({"json.dumps", "pickle.dumps", "cloudpickle.dumps"})
# Calls that run another program, which may write the files the iteration reads next.
SUBPROCESS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "os.system",
        "os.popen",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
    }
)
# How far ``invariant`` follows a helper's parameters back to the arguments of its callers.
MAX_CALL_DEPTH = 4


@dataclass(frozen=True)
class FileOp:
    """One file operation: a read of the file ``path`` names, or a write of ``data`` (None when
    what is written cannot be seen: ``open(p, "w")`` handed to another function)."""

    reads: bool
    path: tuple[cst.BaseExpression, ...]
    data: tuple[cst.BaseExpression, ...] | None = None


class FileIoInHotLoop(Rule):
    code = "TNK205"
    needs_hot_loop = True
    name = "file-io-in-hot-loop"
    level = "note"
    summary = (
        "Load before the loop; write on a cadence: file I/O in the loop that submits Tinker "
        "requests stalls the SDK's thread"
    )
    variants = {
        "read": (
            "`{call}` reads the same file {in_step}",
            "It runs {every_step}: nothing its path depends on changes in the loop; load it "
            "once before it",
        ),
        "dump": (
            "`{call}` dumps per-step data (`{dumped}`) {in_step}",
            "It runs {every_step}, outside a cadence guard: write it on a cadence "
            "(`if step % N == 0:`) or from a background thread",
        ),
    }
    message, help = variants["read"]
    why = (
        WHY_GIL
        + """
Two kinds of file I/O in the loop that submits the requests cost something on every step.
Loading data that does not change across iterations (`open()` for reading, `Path.read_*`,
`np.load`, `torch.load`, `load_dataset`, `pd.read_*`) decodes and parses the same bytes again on
every step: reported when nothing the path depends on is bound in the step loop (for a helper
called on every step, such as `load_jsonl(DATA_PATH)`, when the caller's arguments do not change
either). Load it once before the loop. A large per-step dump (`torch.save`, `np.save*`,
`pickle.dump` / `json.dump` to a file, `Path.write_*`, or a file written element by element) of the
step's data (the batch, the datums, the rollouts, a Tinker result) serializes all of it every step:
write it on a cadence (`if step % save_every == 0:`), or from a background thread.

Not reported: reading a path that changes per iteration (`for shard in shards: np.load(shard)`)
or comes from `self` (a method may change it), reading what this iteration just produced (a file
whose path is made in the iteration, such as a temporary directory; one the iteration's
subprocess writes, directly or in a helper; one it wrote itself earlier), a one-line append per step (`open(p, "a")` and one `json.dumps(metrics)` line),
writing the program or input a sandbox runs, per-run setup and teardown in a loop over configs or
checkpoints (its callee runs its own step loop), anything under a cadence guard, and a loop that
submits nothing.
"""
    )
    fix_description = (
        "Read inputs once before the loop and reuse them; write checkpoints and dumps of the "
        "step's data under a cadence guard (`if step % save_every == 0:`) or hand them to a "
        "writer thread."
    )
    INVALID = (
        Example(
            """\
import json

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    with open("config.json") as f:
        config = json.load(f)
""",
            expect=((5, 10),),
        ),
        Example(
            """\
import torch

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    torch.save(batch, f"batch-{step}.pt")
""",
            expect=((5, 5),),
        ),
    )
    VALID = (
        Example(
            """\
import json

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    with open("log.jsonl", "a") as f:
        f.write(json.dumps({"step": step}) + "\\n")
"""
        ),
        Example(
            """\
import torch

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    if step % save_every == 0:
        torch.save(batch, f"batch-{step}.pt")
"""
        ),
    )

    # What ``file_op`` matches: the builtin ``open``, a path method, a file function by the last
    # part of its name (``np.load``, ``from torch import save``), a pandas reader.
    prefilter = Needs(
        text=(
            words({"open", *PATH_METHODS, *(name.rsplit(".", 1)[-1] for name in FILE_FUNCTIONS)})
            | parts({PANDAS_READERS.rsplit(".", 1)[-1]}),
        )
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, hot in calls_in_hot_loops(model, lambda m, s: file_op(m, s) is not None):
            op = file_op(model, site)
            assert op is not None
            dumped = None
            if op.reads:
                if not invariant(model, op.path, site, hot) or made_in_iteration(
                    model, op.path, hot
                ):
                    continue
            else:
                dumped = dumped_payload(model, site, op, hot)
                if dumped is None:
                    continue
            yield self.finding(
                site.node,
                variant="read" if dumped is None else "dump",
                call=callee(model, site.node),
                dumped="" if dumped is None else code_of(model, dumped),
                in_step=in_step(ctx, hot),
                every_step=every_step(ctx, hot),
            )


# ==========================================================================================
# What a call does to which file
# ==========================================================================================
def file_op(model: SemanticModel, site: CallSite) -> FileOp | None:
    """The file operation ``site`` makes, if it is one this rule knows."""
    node = site.node
    func = node.func
    # Asked of every call of the module: the arguments are gathered only for a file operation.
    if type(func) is cst.Attribute and func.attr.value in PATH_METHODS:
        args = tuple(arg.value for arg in node.args)
        if func.attr.value in PATH_READS:
            return FileOp(True, (func.value, *args))
        return FileOp(False, (func.value,), args[:1])
    qualified = model.qualify(func, site.scope)
    if builtin(model, site, "open") or qualified in OPENERS:
        mode = _open_mode(node)
        if mode is None or not node.args:
            return None  # a mode we cannot read: say nothing
        path = (node.args[0].value,)
        if not any(c in mode for c in "wax+"):
            return FileOp(True, path)
        return FileOp(False, path, handle_writes(model, site))
    if qualified is None:
        return None
    if qualified in READERS or qualified.startswith(PANDAS_READERS):
        return FileOp(True, tuple(arg.value for arg in node.args))
    first = DUMPERS.get(qualified)
    if first is None:
        return None
    positional = [arg.value for arg in node.args if not arg.keyword]
    if first == 0:  # ``torch.save(obj, f)``
        return FileOp(False, tuple(positional[1:2]), tuple(positional[:1]))
    # ``np.savez(file, *arrays, **named)``: the keywords are data too
    named = [arg.value for arg in node.args if arg.keyword]
    return FileOp(False, tuple(positional[:first]), (*positional[first:], *named))


def _open_mode(node: cst.Call) -> str | None:
    """The mode of an ``open()`` call: "r" by default, None when it is not a literal."""
    mode: cst.BaseExpression | None = None
    positional = [arg for arg in node.args if not arg.keyword]
    if len(positional) > 1:
        mode = positional[1].value
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mode":
            mode = arg.value
    if mode is None:
        return "r"
    if isinstance(mode, cst.SimpleString):
        value = mode.evaluated_value
        return value if isinstance(value, str) else None
    return None


def handle_writes(model: SemanticModel, site: CallSite) -> tuple[cst.BaseExpression, ...] | None:
    """What is written to the file an ``open()`` call opens: ``f.write(x)`` and ``json.dump(x,
    f)`` in the body of ``with open(...) as f:``, ``open(...).write(x)``, ``json.dump(x,
    open(...))``. None when the handle goes elsewhere (unseen: not judged)."""
    parent = model.parent(site.node)
    if isinstance(parent, cst.Attribute) and parent.attr.value in ("write", "writelines"):
        call = model.parent(parent)
        if isinstance(call, cst.Call) and call.args:
            return (call.args[0].value,)
        return None
    if isinstance(parent, cst.Arg):
        call = model.parent(parent)
        if (
            isinstance(call, cst.Call)
            and call.args[0] is not parent
            and model.qualify(call.func, site.scope) in HANDLE_DUMPERS
        ):
            return (call.args[0].value,)
        return None
    if not isinstance(parent, cst.WithItem) or parent.asname is None:
        return None
    handle = parent.asname.name
    statement = model.parent(parent)
    if not isinstance(handle, cst.Name) or not isinstance(statement, cst.With):
        return None
    written: list[cst.BaseExpression] = []
    for node in model.walk(statement.body, NESTED_CODE):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("write", "writelines"):
            if isinstance(func.value, cst.Name) and func.value.value == handle.value:
                written.append(node.args[0].value)
        elif model.qualify(func, site.scope) in HANDLE_DUMPERS and any(
            isinstance(arg.value, cst.Name) and arg.value.value == handle.value
            for arg in node.args[1:]
        ):
            written.append(node.args[0].value)
    return tuple(written)


# ==========================================================================================
# Reads: does the path change across iterations?
# ==========================================================================================
def invariant(
    model: SemanticModel,
    exprs: tuple[cst.BaseExpression, ...],
    site: CallSite,
    hot: StepContext,
    depth: int = 0,
) -> bool:
    """Whether nothing ``exprs`` (at ``site``) read is bound per iteration: in the step loop, or,
    for a site in a helper the step calls, in the helper, whose parameters are followed back to
    the arguments of every caller that runs on every step. ``self`` attributes count as bound
    (a method may set them on any step)."""
    reads: set[str] = set()
    for expr in exprs:
        reads |= names_read(model, expr)
    roots = sorted(key[1:] for key in reads if key.startswith("=") and "." not in key)
    function = site.function
    if function is not None and function.self_name in roots:
        return False
    if not hot.via:
        return not reads & bound_in(model, hot.loop.node)
    if function is None or function is not hot.via[-1]:
        return False
    # The helper's own bindings, and the step loop's (a closure defined in the loop reads them).
    bound = bound_in(model, function.node.body) | bound_in(model, hot.loop.node)
    if reads & bound:
        return False
    params = parameters(function)
    used = [name for name in roots if name in params]
    if not used:
        return True
    if depth >= MAX_CALL_DEPTH:
        return False
    callers = [
        call
        for call in model.calls
        if model.resolve_function(call.node.func, call.scope) is function
    ]
    checked = False
    for call in callers:
        outer = model.steps.step_of(call)
        if outer is None:
            continue  # a call that does not run on every step
        for name in used:
            argument = argument_of(function, call, name)
            if argument is None or not invariant(model, (argument,), call, outer, depth + 1):
                return False
        checked = True
    return checked


def made_in_iteration(
    model: SemanticModel, path: tuple[cst.BaseExpression, ...], hot: StepContext
) -> bool:
    """Whether the file is produced in the same iteration: written by a subprocess the iteration
    runs (the path shares a name or a string with its arguments, or is a bare literal the program
    may write by itself), or by the iteration's own write to the same path."""
    regions = [hot.loop.node, *(function.node for function in hot.via)]
    text = {code_of(model, expr, 200) for expr in path}
    reads: set[str] = set()
    for expr in path:
        reads |= exact_paths(_value_reads(model, expr))
    strings = {s for expr in path for s in _strings(model, expr)}
    for call in model.calls:
        if not any(model.contains(region, call.node) for region in regions):
            continue
        command = program_strings(model, call)
        if command is not None:
            if not reads:
                return True  # a literal path: the program may write it by itself
            if reads & exact_paths(names_read(model, call.node)):
                return True
            if any(s in c or c in s for s in strings for c in command if len(c) > 2):
                return True
            continue
        op = file_op(model, call)
        written = {code_of(model, expr, 200) for expr in op.path} if op and not op.reads else set()
        if written & text:
            return True
    return False


def program_strings(model: SemanticModel, call: CallSite, depth: int = 0) -> set[str] | None:
    """If ``call`` runs another program (a subprocess call, or a function of this module that
    makes one, a few calls deep: ``run_tests(code)``), the strings it and those functions hold
    (the command line, output names); None otherwise."""
    if model.qualify(call.node.func, call.scope) in SUBPROCESS:
        return _strings(model, call.node)
    target = model.resolve_function(call.node.func, call.scope)
    if target is None or depth >= MAX_CALL_DEPTH:
        return None
    if any(program_strings(model, inner, depth + 1) is not None for inner in target.calls):
        return _strings(model, call.node) | _strings(model, target.node)
    return None


def _value_reads(model: SemanticModel, expr: cst.BaseExpression) -> set[str]:
    """Read keys of the values ``expr`` is built from, not of the functions it calls
    (``os.path.join(workdir, "out.json")`` reads ``workdir``)."""
    reads = set(names_read(model, expr))
    for node in model.walk(expr, NESTED_CODE):
        if isinstance(node, cst.Call):
            reads -= names_read(model, node.func)
    return reads


def _strings(model: SemanticModel, node: cst.CSTNode) -> set[str]:
    found = set()
    for current in model.walk(node, NESTED_CODE):
        if isinstance(current, cst.SimpleString):
            value = current.evaluated_value
            if isinstance(value, str) and value.strip():
                found.add(value.strip())
    return found


# ==========================================================================================
# Writes: is it a dump of the step's data?
# ==========================================================================================
def dumped_payload(
    model: SemanticModel, site: CallSite, op: FileOp, hot: StepContext
) -> cst.BaseExpression | None:
    """The step's data a write dumps (the batch, the datums, a Tinker result; see
    ``is_payload``), or what is written element by element of a batch loop inside ``with
    open(...)``. None for a line of metrics, the text of one program, anything unseen."""
    if op.data is None:
        return None
    for written in op.data:
        for value in _written_values(model, written, site):
            if is_payload(model, site, value, hot, own_item=False):
                return value
    parent = model.parent(site.node)
    statement = model.parent(parent) if isinstance(parent, cst.WithItem) else None
    if not isinstance(statement, cst.With):
        return None
    # ``for datum in batch: f.write(json.dumps(datum) + "\\n")``: the whole batch, line by line.
    for loop in model.loops:
        if not model.contains(statement.body, loop.node):
            continue
        if not any(model.contains(loop.node, written) for written in op.data):
            continue
        for iterable in loop_iterables(loop):
            if is_payload(model, site, iterable, hot, own_item=False):
                return iterable
    return None


def _written_values(
    model: SemanticModel, expr: cst.BaseExpression, site: CallSite
) -> Iterator[cst.BaseExpression]:
    """What ends up in the file: ``record`` for ``json.dumps(record) + "\\n"``, the fields of an
    f-string, the argument of ``str(...)``; for a library call (``np.stack(batch)``), the call
    and its first argument."""
    if isinstance(expr, cst.BinaryOperation):
        yield from _written_values(model, expr.left, site)
        yield from _written_values(model, expr.right, site)
    elif isinstance(expr, cst.FormattedString):
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringExpression):
                yield from _written_values(model, part.expression, site)
    elif (
        isinstance(expr, cst.Call)
        and expr.args
        and (
            model.qualify(expr.func, site.scope) in TO_TEXT
            or (isinstance(expr.func, cst.Name) and expr.func.value in ("str", "repr"))
        )
    ):
        yield from _written_values(model, expr.args[0].value, site)
    elif isinstance(expr, cst.Call) and expr.args and model.qualify(expr.func, site.scope):
        yield expr
        yield from _written_values(model, expr.args[0].value, site)
    else:
        yield expr
