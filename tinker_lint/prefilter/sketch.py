"""A first look at a file through CPython's ``ast``, to rule rules out before libcst parses it.

libcst's parse is most of a file's cost (``docs/performance.md``); CPython's ``ast`` is about four
times cheaper, and flake8 hands its plugins the tree for free. The text pre-filter
(``prefilter/mentions.py``) passes every file that names a Tinker method; most such files are ordinary
users of the SDK in which no rule can find anything (71 of the cookbook's 303 files pass it, 23
have findings, 35 pass the sketch too). A ``Sketch`` records, in one walk of the tree, the few facts each rule needs before
it can find anything at all: which roles of SDK method the file calls, whether a wait can come
before a submit in one function, a blocking wait inside ``async def``, a client's future used before
it is waited on, a loop that may submit a step, a loop that may make a PyTorch training step.

Every fact over-approximates what the semantic model can see: names are matched by their last part
(``self.step`` as ``step``), whatever the receiver, and a lambda's or nested function's calls count
for the functions around it. So a rule the sketch rules out could not have found anything; the
tests compare findings with and without it on fixtures, rule examples and generated programs.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from dataclasses import field as data_field
from typing import NamedTuple

from tinker_lint.incremental.buffers import BufferStore
from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.names import (
    BLOCKING_WAIT_FUNCTIONS,
    CONTAINER_GETS,
    CONTAINER_VIEWS,
    TORCH_BACKWARD_METHOD,
    TORCH_STEP_HOOKS,
    TORCH_STEP_HOOKS_ALONE,
    TORCH_STEP_METHOD,
    names_hot_call,
    torch_step_receiver,
)
from tinker_lint.model.facts.sdk import Role

_ROLES: dict[str, frozenset[Role]] = {}
for _table in sdk.METHODS.values():
    for _name, _method in _table.items():
        _ROLES[_name] = _ROLES.get(_name, frozenset()) | {_method.role}

_SUBMIT_ROLES = frozenset({Role.TRAIN, Role.SAMPLE, Role.SAVE})
_STEP_ROLES = frozenset({Role.TRAIN, Role.SAMPLE})  # what makes a loop hot
# Methods whose call gives a future of a client (0.38's ``Backcompat*ClientFuture``).
_CLIENT_FUTURE_METHODS = frozenset(
    name
    for table in sdk.METHODS.values()
    for name, method in table.items()
    if method.returns is sdk.Returns.CLIENT_FUTURE
)
_WAIT_METHODS = frozenset({"result", "result_async", "coroutine"})
# What a call of a helper that submits a step stands for, to the rules' declarations.
_HELPER_METHODS = frozenset({"forward_backward", "sample"})
# ``wait``, ``as_completed``: the last parts of the blocking functions, however imported.
_BLOCKING_FUNCTIONS = frozenset(name.rsplit(".", 1)[1] for name in BLOCKING_WAIT_FUNCTIONS)
# Calls the model may give a future's type whatever the function called is (``_infer_call``): an
# SDK method, a future's own, a container's getter.
_MAY_GIVE_FUTURES = frozenset({*_ROLES, *sdk.FUTURE_METHODS, *CONTAINER_GETS, *CONTAINER_VIEWS})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TORCH_STEP_METHODS = frozenset({TORCH_BACKWARD_METHOD, TORCH_STEP_METHOD})
_LOOPS = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_STATEMENT_LOOPS = (ast.For, ast.AsyncFor, ast.While)  # the model's loops that are no comprehension


@dataclass(frozen=True)
class Sketch:
    # The SDK methods the file calls by name (``x.forward_backward(...)``), and their roles.
    called_methods: frozenset[str]
    called_roles: frozenset[Role]
    # Something is waited for: ``await``, ``.result()``, ``concurrent.futures.wait``.
    waits: bool
    # One function (or the module's top level) waits and submits a training or sampling request,
    # and the wait can come before the submit: it does not enclose it, or the submit is in a loop
    # (TNK101).
    wait_then_submit: bool
    # ``.result()`` or ``concurrent.futures.wait`` inside ``async def`` (TNK104).
    blocks_in_async: bool
    # A factory's future of a client not waited on where it is made (TNK106).
    unwaited_client_future: bool
    # A loop that submits a training or sampling request, directly or through a function of the
    # module (by name), or calls a ``hot-loop-calls`` name (TNK107, TNK2xx).
    hot_loop: bool
    # ``create_task(x)`` where ``x`` may be a Tinker future: anything but the call of a coroutine
    # function of this module (TNK108).
    task_of_possible_future: bool
    # A loop that submits any request, directly or through a function of the module (TNK102,
    # TNK103: a wait on a request made in the same iteration).
    submit_loop: bool
    # The module's functions and methods (by name) that submit a training or sampling request,
    # any request, or wait, directly or through another: what a module importing them may call.
    step_functions: frozenset[str] = frozenset()
    submit_functions: frozenset[str] = frozenset()
    waiting_functions: frozenset[str] = frozenset()
    # Of those that wait, the plain ``def``s: calling one blocks the calling thread.
    blocking_functions: frozenset[str] = frozenset()
    # Some place may run on every step of a PyTorch training loop (``model/analyses/torch_steps.py``, the
    # TNK4xx rules): a loop that makes a torch step call (``.backward()``, ``optimizer.step()``,
    # ``scaler.step(opt)``), directly or through a function of the module (by name); a per-step
    # hook ``def`` (``train_step``, ``update``, ...) that makes one; or a ``def training_step`` or
    # ``def compute_loss``, a step by itself.
    torch_step: bool = False
    # What TNK402 reads without a torch step: ``ds.map(f)`` (a ``.map`` call with arguments), or
    # in a loop, ``ds["text"][i]`` (a subscript of a subscript) or ``ds[i]`` in a loop inside a
    # ``for``/``while`` loop (a data-generation loop around a batch built row by row).
    row_access: bool = False


@dataclass(frozen=True)
class HelperNames:
    """Names a file imports from the project's modules, or calls as methods of their classes,
    whose functions submit or wait (from those modules' sketches): a call of one is taken as the
    submit and the wait it makes, as the model's function summaries take it."""

    steps: frozenset[str] = frozenset()
    submits: frozenset[str] = frozenset()
    waits: frozenset[str] = frozenset()
    blocks: frozenset[str] = frozenset()  # of ``waits``, the sync ones

    def __bool__(self) -> bool:
        return bool(self.submits or self.waits)

    # An instance called as a function (``self.preference_model(c)``, ``policy(ob)``) runs its
    # class's ``__call__``, whatever the name it is called by: when one submits or waits, such a
    # call may (``called_as_object`` says whether a call may be one).
    def submits_by(self, name: str, as_object: bool = False) -> bool:
        return name in self.submits or (as_object and "__call__" in self.submits)

    def steps_by(self, name: str, as_object: bool = False) -> bool:
        return name in self.steps or (as_object and "__call__" in self.steps)

    def waits_by(self, name: str, as_object: bool = False) -> bool:
        return name in self.waits or (as_object and "__call__" in self.waits)


_NO_HELPERS = HelperNames()
_FAN_INS = frozenset({"gather", "wait", "as_completed", "wait_for", "shield", "run"})
_BUILTINS = frozenset(dir(builtins))


class _Where(NamedTuple):
    """Where a node is: the function whose body it is in (or the module), whether it is in a loop
    of that body, the waits of that body around it, the names of the functions it is in, and
    whether one of them is ``async def``."""

    owner: int
    in_loop: bool = False
    waits_around: tuple[int, ...] = ()
    functions: tuple[str, ...] = ()
    in_async: bool = False
    # In a ``for``/``while`` loop of that body; in a loop (of any kind) inside one.
    in_statement_loop: bool = False
    in_nested_loop: bool = False
    # In a method of a class of the module (``self`` its first parameter): the methods with a
    # body that the class defines (``_own_methods``); in the class's body, those of the class.
    class_methods: frozenset[str] = frozenset()


def sketch(
    tree: ast.AST,
    hot_loop_calls: re.Pattern[str] | None = None,
    helpers: HelperNames | None = None,
    key: str | None = None,
) -> Sketch:
    """One walk of ``tree`` (iterative: CPython's trees can be deeper than Python's stack).
    ``helpers``: the project's functions the file may call, and what they do. ``key`` (an
    editor's buffer, whose tree keeps the nodes of the statements an edit did not change: see
    ``syntax/cpython.py``): the facts of each top-level statement found in the last sketch of
    ``key`` are taken from it, not walked again."""
    helpers = helpers or _NO_HELPERS
    if not isinstance(tree, ast.Module) or key is None:
        context = _Context(
            hot_loop_calls,
            helpers,
            _defined_names(tree) if helpers else frozenset(),
            frozenset(_imported_names(tree, "concurrent", _BLOCKING_FUNCTIONS)),
            frozenset(_imported_names(tree, "asyncio", _TASK_FUNCTIONS)),
        )
        if not isinstance(tree, ast.Module):
            return _combine([(_walk(tree, None, context), 0)], lambda: _defined_names(tree))
        # The module's own node is no fact: the walk of the whole tree is the walks of its
        # statements, each with the module as its parent.
        return _combine(
            [(_walk(statement, tree, context), 0) for statement in tree.body],
            lambda: context.defined or _defined_names(tree),
        )
    kept_context, kept = _kept_parts(key)
    entries = [kept.get(id(statement)) for statement in tree.body]
    names = [
        entry.names if entry is not None and entry.statement is statement else _names(statement)
        for statement, entry in zip(tree.body, entries, strict=True)
    ]
    context = _Context(
        hot_loop_calls,
        helpers,
        frozenset().union(*(n.defined for n in names)) if helpers else frozenset(),
        _BLOCKING_FUNCTIONS.union(*(n.blocking for n in names)),
        _TASK_FUNCTIONS.union(*(n.tasks for n in names)),
    )
    parts: list[tuple[_Part, int]] = []
    walked: dict[int, _Kept] = {}
    for statement, entry, found in zip(tree.body, entries, names, strict=True):
        if entry is not None and entry.statement is statement and context == kept_context:
            part, line = entry.part, entry.line
        else:
            part, line = _walk(statement, tree, context), statement.lineno
        walked[id(statement)] = _Kept(statement, line, found, part)
        # Moved since it was walked (lines added or removed above it): by as many lines.
        parts.append((part, statement.lineno - line))
    _remember_parts(key, context, walked)
    return _combine(parts, lambda: frozenset().union(*(n.defined for n in names)))


_TASK_FUNCTIONS = frozenset({"create_task"})


class _Names(NamedTuple):
    """What a top-level statement binds that the facts of every statement depend on."""

    defined: frozenset[str]  # by ``def``, ``class``, import
    blocking: frozenset[str]  # ``concurrent.futures``' waits, as imported
    tasks: frozenset[str]  # ``asyncio.create_task``, as imported


def _names(statement: ast.stmt) -> _Names:
    return _Names(
        _defined_names(statement),
        frozenset(_imported_names(statement, "concurrent", _BLOCKING_FUNCTIONS)),
        frozenset(_imported_names(statement, "asyncio", _TASK_FUNCTIONS)),
    )


class _Context(NamedTuple):
    """What the facts of a statement depend on besides the statement: the settings' hot-loop
    calls, the project's helpers, and the names the whole module defines and imports."""

    hot_loop_calls: re.Pattern[str] | None
    helpers: HelperNames
    defined: frozenset[str]
    blocking_names: frozenset[str]
    task_names: frozenset[str]


# A call by name: the name, the body it is in, where it starts and ends, whether it is in a loop
# of that body and in ``async def``, the waits of that body around it, its id, and what it calls
# by (``_SELF_ATTRIBUTE``, ``_PLAIN_NAME``, or another attribute: ``_called_as_object``).
_NamedCall = tuple[
    str, int, tuple[int, int], tuple[int, int], bool, bool, tuple[int, ...], int, int
]
_OTHER_ATTRIBUTE, _SELF_ATTRIBUTE, _PLAIN_NAME = 0, 1, 2


@dataclass
class _Part:
    """What one walk found (of a top-level statement, or of a whole tree), before the module's
    facts are worked out of all of them (``_combine``). Positions are the tree's when walked."""

    methods: set[str] = data_field(default_factory=set)
    waits: bool = False
    blocks_in_async: bool = False
    unwaited_client_future: bool = False
    task_arguments: list[str | None] = data_field(default_factory=list)
    async_functions: set[str] = data_field(default_factory=set)
    sync_functions: set[str] = data_field(default_factory=set)
    # TNK101: per body, where each wait starts; each submit's end, and the waits around it.
    waits_in: dict[int, list[tuple[tuple[int, int], int]]] = data_field(default_factory=dict)
    submits: list[tuple[int, bool, tuple[int, int], tuple[int, ...]]] = data_field(
        default_factory=list
    )
    calls_by_function: dict[str, set[str]] = data_field(default_factory=dict)
    submitting: set[str] = data_field(default_factory=set)  # functions with a step submit in them
    submitting_any: set[str] = data_field(default_factory=set)  # functions with any submit in them
    called_in_loops: set[str] = data_field(default_factory=set)
    step_in_loop: bool = False
    submit_in_loop: bool = False
    # Functions with a torch step call in them, and whether a loop makes one itself.
    torch_stepping: set[str] = data_field(default_factory=set)
    torch_step_in_loop: bool = False
    row_access: bool = False
    # A call of a function of the module that waits is a wait where it is called, and one of a
    # function that steps, a submit (the model's function summaries): every call by name, placed
    # as a wait and a submit would be (with the call's id: a call's own wait comes after its own
    # requests), and the functions that wait, to be matched once all the walks have seen them all.
    named_calls: list[_NamedCall] = data_field(default_factory=list)
    waiting: set[str] = data_field(default_factory=set)


class _Kept(NamedTuple):
    """A top-level statement of the last sketch of an editor's buffer, held (so that its id stays
    its own), its line when walked, what it binds, and what its walk found."""

    statement: ast.stmt
    line: int
    names: _Names
    part: _Part


# The last sketch per editor buffer: its context, and id(statement) -> ``_Kept``.
_PARTS: BufferStore[tuple[_Context, dict[int, _Kept]]] = BufferStore()


def _kept_parts(key: str) -> tuple[_Context | None, dict[int, _Kept]]:
    return _PARTS.get(key) or (None, {})


def _remember_parts(key: str, context: _Context, parts: dict[int, _Kept]) -> None:
    _PARTS.put(key, (context, parts))


def _walk(root: ast.AST, root_parent: ast.AST | None, context: _Context) -> _Part:
    helpers = context.helpers
    defined = context.defined
    hot_loop_calls = context.hot_loop_calls
    blocking_names = context.blocking_names
    task_names = context.task_names
    found = _Part()
    methods = found.methods
    waits_in = found.waits_in
    submits = found.submits
    calls_by_function = found.calls_by_function
    submitting = found.submitting
    submitting_any = found.submitting_any
    called_in_loops = found.called_in_loops
    named_calls = found.named_calls
    waiting = found.waiting
    task_arguments = found.task_arguments
    async_functions = found.async_functions
    sync_functions = found.sync_functions
    torch_stepping = found.torch_stepping
    waits = blocks_in_async = unwaited_client_future = False
    step_in_loop = submit_in_loop = torch_step_in_loop = row_access = False

    stack: list[tuple[ast.AST, ast.AST | None, _Where]] = [(root, root_parent, _Where(owner=0))]
    while stack:
        node, parent, where = stack.pop()
        if isinstance(node, _FUNCTIONS):
            functions = (*where.functions, node.name)
            calls_by_function.setdefault(node.name, set())
            is_async = isinstance(node, ast.AsyncFunctionDef)
            (async_functions if is_async else sync_functions).add(node.name)
            body = _Where(
                owner=id(node),
                functions=functions,
                in_async=where.in_async or is_async,
                class_methods=where.class_methods if _takes_self(node, parent) else frozenset(),
            )
            # Decorators, defaults and annotations run where the function is defined.
            header = where._replace(functions=functions)
            stack.extend((child, node, header) for child in _header_of(node))
            stack.extend((child, node, body) for child in node.body)
            continue
        if type(node) is ast.ClassDef:
            where = where._replace(
                class_methods=_own_methods(node) if type(parent) is ast.Module else frozenset()
            )
        if where.in_loop and not row_access and type(node) is ast.Subscript:
            # ``ds["text"][i]``, or ``ds[i]`` in a loop in a loop (TNK402).
            row_access = where.in_nested_loop or type(node.value) is ast.Subscript
        is_wait = isinstance(node, ast.Await)
        if isinstance(node, ast.Call):
            func = node.func
            name: str | None = (
                func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            )
            step = False
            as_object = bool(helpers) and _called_as_object(func, defined, where.class_methods)
            if name is not None and helpers and helpers.submits_by(name, as_object):
                # A helper of the project: its requests go out here (and its waits, below).
                step = helpers.steps_by(name, as_object)
                methods.update(_HELPER_METHODS if step else ())
                submitting_any.update(where.functions)
                submit_in_loop = submit_in_loop or where.in_loop
                if step:
                    # Its own wait (below) comes after its requests, never before them.
                    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
                    around = (*where.waits_around, id(node))
                    submits.append((where.owner, where.in_loop, end, around))
            if isinstance(func, ast.Attribute):
                method_roles = _ROLES.get(func.attr, frozenset())
                if method_roles:
                    methods.add(func.attr)
                step = bool(method_roles & _STEP_ROLES)
                if step:  # TNK101 never reports a wait before a save
                    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
                    # A function of the module by the method's name, if it is one: its wait
                    # comes after its requests, as a helper's does (above).
                    around = (*where.waits_around, id(node))
                    submits.append((where.owner, where.in_loop, end, around))
                if method_roles & _SUBMIT_ROLES:
                    submitting_any.update(where.functions)
                    submit_in_loop = submit_in_loop or where.in_loop
                if name in _CLIENT_FUTURE_METHODS and not _waited_where_made(parent):
                    unwaited_client_future = True
                is_wait = name in _WAIT_METHODS
                if name == "result" and where.in_async:
                    blocks_in_async = True
                if name in _TORCH_STEP_METHODS and _ends_torch_step(func):
                    torch_stepping.update(where.functions)
                    torch_step_in_loop = torch_step_in_loop or where.in_loop
                elif name == "map" and (node.args or node.keywords):
                    row_access = True  # ``ds.map(f)`` (TNK402)
            if name is not None and helpers and helpers.waits_by(name, as_object):
                is_wait = True
                if name in helpers.blocks and not isinstance(parent, ast.Await):
                    blocks_in_async = blocks_in_async or where.in_async
            if name in blocking_names:
                is_wait = True
                if where.in_async:
                    blocks_in_async = True
            if name in task_names and (node.args or node.keywords):
                task_arguments.append(_called_name(node))
            if hot_loop_calls is not None and not step:
                step = _names_hot_call(func, hot_loop_calls)
            if name is not None:
                for function in where.functions:
                    calls_by_function[function].add(name)
                if where.in_loop:
                    called_in_loops.add(name)
                if isinstance(func, ast.Attribute):
                    receiver = func.value
                    self_attribute = (
                        isinstance(receiver, ast.Name)
                        and receiver.id == "self"
                        and func.attr not in where.class_methods
                    )
                    called_by = _SELF_ATTRIBUTE if self_attribute else _OTHER_ATTRIBUTE
                else:
                    called_by = _PLAIN_NAME
                start = (node.lineno, node.col_offset)
                end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
                named_calls.append(
                    (
                        name,
                        where.owner,
                        start,
                        end,
                        where.in_loop,
                        where.in_async,
                        where.waits_around,
                        id(node),
                        called_by,
                    )
                )
            if step:
                submitting.update(where.functions)
                step_in_loop = step_in_loop or where.in_loop
        if is_wait:
            waits = True
            if not _awaits_unknown_call(node, helpers):
                # What other modules see of this one: a wait the model can tell is one (a
                # ``.result()``, an awaited future or SDK call), not ``await fn(*args)`` of a
                # function passed in (a decorator's wrapper), whose callee nothing says.
                waiting.update(where.functions)
            start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
            waits_in.setdefault(where.owner, []).append((start, id(node)))
            where = where._replace(waits_around=(*where.waits_around, id(node)))
        if isinstance(node, _LOOPS) and not where.in_nested_loop:
            if where.in_statement_loop:
                where = where._replace(in_loop=True, in_nested_loop=True)
            elif isinstance(node, _STATEMENT_LOOPS):
                where = where._replace(in_loop=True, in_statement_loop=True)
            elif not where.in_loop:
                where = where._replace(in_loop=True)
        for field in _child_fields(type(node)):
            value = getattr(node, field, None)
            if isinstance(value, list):
                stack.extend(
                    (child, node, where) for child in value if type(child) not in _NOT_WALKED
                )
            elif value is not None and type(value) not in _NOT_WALKED:
                stack.append((value, node, where))

    found.waits = waits
    found.blocks_in_async = blocks_in_async
    found.unwaited_client_future = unwaited_client_future
    found.step_in_loop = step_in_loop
    found.submit_in_loop = submit_in_loop
    found.torch_step_in_loop = torch_step_in_loop
    found.row_access = row_access
    return found


def _combine(parts: list[tuple[_Part, int]], defined: Callable[[], frozenset[str]]) -> Sketch:
    """The module's facts from its walks' (each with the lines its statement moved by since it
    was walked: the module's own level compares places across statements; a function's, only
    within its statement). ``defined``: the names the module's statements bind, asked only when
    a class of it steps in ``__call__``."""
    methods: set[str] = set()
    waits = blocks_in_async = unwaited_client_future = False
    task_arguments: list[str | None] = []
    async_functions: set[str] = set()
    sync_functions: set[str] = set()
    waits_in: dict[int, list[tuple[tuple[int, int], int]]] = {}
    submits: list[tuple[int, bool, tuple[int, int], tuple[int, ...]]] = []
    calls_by_function: dict[str, set[str]] = {}
    submitting: set[str] = set()
    submitting_any: set[str] = set()
    called_in_loops: set[str] = set()
    step_in_loop = submit_in_loop = torch_step_in_loop = row_access = False
    torch_stepping: set[str] = set()
    named_calls: list[_NamedCall] = []
    waiting: set[str] = set()
    for part, moved in parts:
        methods |= part.methods
        waits = waits or part.waits
        blocks_in_async = blocks_in_async or part.blocks_in_async
        unwaited_client_future = unwaited_client_future or part.unwaited_client_future
        task_arguments.extend(part.task_arguments)
        async_functions |= part.async_functions
        sync_functions |= part.sync_functions
        for owner, found in part.waits_in.items():
            if owner == 0 and moved:
                found = [((line + moved, column), wait) for (line, column), wait in found]
            waits_in.setdefault(owner, []).extend(found)
        for owner, in_loop, (line, column), around in part.submits:
            if owner == 0:
                line += moved
            submits.append((owner, in_loop, (line, column), around))
        for function, called in part.calls_by_function.items():
            calls_by_function.setdefault(function, set()).update(called)
        submitting |= part.submitting
        submitting_any |= part.submitting_any
        called_in_loops |= part.called_in_loops
        step_in_loop = step_in_loop or part.step_in_loop
        submit_in_loop = submit_in_loop or part.submit_in_loop
        torch_stepping |= part.torch_stepping
        torch_step_in_loop = torch_step_in_loop or part.torch_step_in_loop
        row_access = row_access or part.row_access
        if moved:
            for named in part.named_calls:
                (line, column), (last, last_column) = named[2], named[3]
                if named[1] == 0:
                    line, last = line + moved, last + moved
                named_calls.append((*named[:2], (line, column), (last, last_column), *named[4:]))
        else:
            named_calls.extend(part.named_calls)
        waiting |= part.waiting

    _close_over_calls(submitting, calls_by_function)
    _close_over_calls(submitting_any, calls_by_function)
    _close_over_calls(waiting, calls_by_function)
    if torch_stepping:
        _close_over_calls(torch_stepping, calls_by_function)
    # An instance of a class of the module whose ``__call__`` steps, called as an object: what
    # ``_called_as_object`` says may be one (the model's ``helpers._instance_call``).
    objects_step = "__call__" in submitting
    bound = defined() | _BUILTINS if objects_step else frozenset()
    for name, owner, start, end, in_loop, in_async, around, call, called_by in named_calls:
        if name in waiting:
            waits = True
            # A plain ``def`` that waits blocks an ``async def`` calling it (TNK104).
            blocking = name in sync_functions and name not in async_functions
            blocks_in_async = blocks_in_async or (in_async and blocking)
            # Known by the call's id: when the call submits too (a helper of the project that
            # steps), its own wait comes after its requests (``flow._run``), not before them.
            waits_in.setdefault(owner, []).append((start, call))
        if name in submitting or (
            objects_step
            and (called_by == _SELF_ATTRIBUTE or (called_by == _PLAIN_NAME and name not in bound))
        ):
            submits.append((owner, in_loop, end, (*around, call)))
    return Sketch(
        called_methods=frozenset(methods),
        called_roles=frozenset(role for method in methods for role in _ROLES[method]),
        waits=waits,
        wait_then_submit=any(
            _wait_can_precede(waits_in.get(owner, ()), in_loop, end, around)
            for owner, in_loop, end, around in submits
        ),
        blocks_in_async=blocks_in_async,
        unwaited_client_future=unwaited_client_future,
        task_of_possible_future=any(
            name is None or name not in async_functions or name in sync_functions
            for name in task_arguments
        ),
        hot_loop=step_in_loop or bool(called_in_loops & submitting),
        submit_loop=submit_in_loop or bool(called_in_loops & submitting_any),
        step_functions=frozenset(submitting),
        submit_functions=frozenset(submitting_any),
        waiting_functions=frozenset(waiting),
        blocking_functions=frozenset(waiting & sync_functions),
        torch_step=torch_step_in_loop
        or not called_in_loops.isdisjoint(torch_stepping)
        or not TORCH_STEP_HOOKS.isdisjoint(torch_stepping)
        or not TORCH_STEP_HOOKS_ALONE.isdisjoint(sync_functions)
        or not TORCH_STEP_HOOKS_ALONE.isdisjoint(async_functions),
        row_access=row_access,
    )


def _header_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    parts: list[ast.AST] = [*function.decorator_list, function.args]
    if function.returns is not None:
        parts.append(function.returns)
    return parts


def _ends_torch_step(func: ast.Attribute) -> bool:
    """``x.backward(...)`` or ``x.step(...)`` that may end a torch step (``torch_steps.
    is_step_call``): the receiver's name as the model reads it, the last part of a chain of names
    (here of any chain of attributes: more is sound), with or without arguments."""
    if func.attr == TORCH_BACKWARD_METHOD:
        return True
    receiver = func.value
    if isinstance(receiver, ast.Attribute):
        last = receiver.attr
    elif isinstance(receiver, ast.Name):
        last = receiver.id
    else:
        return False  # the model reads no name, and no ``step`` of it is a step
    return torch_step_receiver(last, True) or torch_step_receiver(last, False)


def _awaits_unknown_call(node: ast.AST, helpers: HelperNames) -> bool:
    """``await f(...)`` where ``f`` is neither an SDK method by name nor a helper that waits (a
    function of the module that waits makes its callers wait through ``calls_by_function``)."""
    if not isinstance(node, ast.Await) or not isinstance(node.value, ast.Call):
        return False
    func = node.value.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name is None or (
        name not in _ROLES
        and name not in _WAIT_METHODS
        and name not in _FAN_INS
        and name not in helpers.waits
    )


def _own_methods(node: ast.ClassDef) -> frozenset[str]:
    """The methods a class defines in its body that the model takes for ``self.x(...)``
    (``helpers._local_method``): not one without a body of its own (``summaries.is_abstract``:
    here any of only ``pass``, expressions and ``raise``, or ``@abstractmethod``), which the model
    may take for an attribute called."""
    found = set()
    for statement in node.body:
        if not isinstance(statement, _FUNCTIONS) or any(
            _decorator_name(d) == "abstractmethod" for d in statement.decorator_list
        ):
            continue
        if any(not isinstance(s, ast.Pass | ast.Expr | ast.Raise) for s in statement.body):
            found.add(statement.name)
    return frozenset(found)


def _decorator_name(decorator: ast.expr) -> str | None:
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else None


def _takes_self(function: ast.FunctionDef | ast.AsyncFunctionDef, parent: ast.AST | None) -> bool:
    """A method in its class's body whose first parameter is ``self`` (the model's
    ``FunctionInfo.self_name``)."""
    if type(parent) is not ast.ClassDef:
        return False
    params = [*function.args.posonlyargs, *function.args.args]
    return bool(params) and params[0].arg == "self"


def _called_as_object(
    func: ast.expr, defined: frozenset[str], class_methods: frozenset[str] = frozenset()
) -> bool:
    """Whether a call may be of an object (its class's ``__call__``): ``self.x(...)`` where the
    class it is in defines no method ``x`` (the model takes that method: ``helpers._resolve``),
    or a plain name that no ``def``, ``class`` or import of the file binds and that is no
    builtin."""
    if isinstance(func, ast.Attribute):
        return (
            isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr not in class_methods
        )
    return isinstance(func, ast.Name) and func.id not in defined and func.id not in _BUILTINS


def _defined_names(tree: ast.AST) -> frozenset[str]:
    """The names the file's ``def``, ``class`` and import statements bind (statements only)."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)
    return frozenset(found)


def _wait_can_precede(
    waits: Iterable[tuple[tuple[int, int], int]],
    in_loop: bool,
    end: tuple[int, int],
    around: tuple[int, ...],
) -> bool:
    """Whether a wait of the same body can come before a submit: in a loop, any wait (the next
    iteration submits again); else a wait that starts before the submit ends (earlier in the
    body, or in its arguments) and does not wait on the submit itself (``await sc.sample(p)``)."""
    if in_loop:
        return any(True for _ in waits)
    return any(start < end and wait not in around for start, wait in waits)


# Leaves no fact is about (a name, a constant), and the values of fields that are not nodes (a
# keyword's ``arg``, a ``global``'s names, an import's ``level``, a dict's missing key): never put
# on the walk's stack.
_NOT_WALKED = frozenset({ast.Name, ast.Constant, str, int, type(None)})

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# Fields that hold nodes of no interest: contexts (``Load()``) and operators (``Add()``).
_NO_CHILDREN = frozenset({"ctx", "op", "ops"})


def _child_fields(cls: type) -> tuple[str, ...]:
    """As ``ast.iter_child_nodes`` walks them (about half the cost), without the nodes of
    ``_NO_CHILDREN``."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(
            f for f in getattr(cls, "_fields", ()) if f not in _NO_CHILDREN
        )
    return fields


def _close_over_calls(submitting: set[str], calls_by_function: dict[str, set[str]]) -> None:
    """A function that calls a submitting function submits."""
    changed = True
    while changed:
        changed = False
        for function, called in calls_by_function.items():
            if function not in submitting and called & submitting:
                submitting.add(function)
                changed = True


def _imported_names(tree: ast.AST, package: str, names: frozenset[str]) -> set[str]:
    """``names``, and what ``from <package>... import`` binds for them, anywhere in the file (an
    import may come after its use in the text). Imports are statements: only those are walked."""
    found = set(names)
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package):
            found.update(alias.asname or alias.name for alias in node.names if alias.name in names)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)
    return found


def _called_name(task: ast.Call) -> str | None:
    """The name of the function whose call ``create_task`` is given, when the model would take
    that call's value from the function alone (so an ``async def`` of the module gives a
    coroutine); else None."""
    argument = task.args[0] if task.args else task.keywords[0].value
    if not isinstance(argument, ast.Call):
        return None
    func = argument.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return None if name is None or name in _MAY_GIVE_FUTURES else name


def _waited_where_made(parent: ast.AST | None) -> bool:
    """``await factory(...)``, ``factory(...).result()``: the client, not its future, is used."""
    return isinstance(parent, ast.Await) or (
        isinstance(parent, ast.Attribute) and parent.attr in ("result", "result_async")
    )


def _names_hot_call(func: ast.expr, pattern: re.Pattern[str]) -> bool:
    """As the model asks it (``names.names_hot_call``), of the dotted name as written."""
    name = dotted(func)
    return name is not None and names_hot_call(name, pattern)


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names in CPython's tree, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
