"""How many times a place runs per step: the cost shape the TNK2xx rules judge.

A call in a hot loop runs once per step, times every loop between the step loop and the call (in
the step loop's function and in each function that carries the call there). What matters is what
each of those loops iterates:

- ``EXAMPLES``: the examples of the step (its batch, datums, groups, sampled sequences, a Tinker
  result's per-datum outputs). One constructor or one whole-tensor op per example is the vectorized
  form: O(examples) calls of O(tokens) work, required, and not a finding.
- ``ELEMENTS``: the elements of one example (its tokens, positions, a tensor's elements). Python-
  level numpy/torch work here costs microseconds per token of every datum, on every step: seconds.
- ``FEW``: anything else (a literal bound, a dict's items, a config's range, a top-K list): counted
  as nothing.

Decided by dataflow first: a loop over a tensor iterates its elements; a loop over a part of an
example (what an enclosing per-example loop's item, or a per-example function's parameter, holds:
``enumerate(seq.tokens)``, ``range(len(mask))``, ``zip(datum.a, datum.b)``) iterates elements; the
first loop over the step's own collections iterates examples. Names decide only what dataflow
leaves open (``group.trajectories`` holds examples; ``tokens`` elements).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from itertools import pairwise
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.batches import (
    EXAMPLE_WORDS,
    dict_view,
    loop_iterables,
    name_words,
    names_collection,
    small,
)
from tinker_lint.model.analyses.bindings import argument, parameters
from tinker_lint.model.analyses.dataflow import target_names
from tinker_lint.model.facts.scopes import BindingKind, CallSite, FunctionInfo, LoopInfo, Scope
from tinker_lint.model.facts.sdk import Role
from tinker_lint.model.facts.types import Kind

if TYPE_CHECKING:
    from tinker_lint.model.analyses.steps import StepContext
    from tinker_lint.model.analyses.view import ModelView


class Scale(Enum):
    EXAMPLES = "examples"
    ELEMENTS = "elements"
    FEW = "few"


@dataclass(frozen=True)
class Level:
    """One loop between the step loop and a place, and what it iterates."""

    loop: LoopInfo
    scale: Scale
    iterable: cst.BaseExpression  # the part of the loop's iterable that decided its scale


@dataclass(frozen=True)
class CostShape:
    """How a place runs on every step: the step, and the loops inside it, outermost first."""

    # The step loop it runs in; None in a step function (``step_submit``).
    step: StepContext | None
    levels: tuple[Level, ...]
    roles: frozenset[Role]  # what the step submits: training, sampling
    # A function that submits a training request once per call (``def train_step(batch):``), when
    # the step loop that calls it is not in this module: each call is one step.
    step_submit: CallSite | None = None

    @property
    def per_element(self) -> Level | None:
        """The innermost loop over the elements of one example, if the place runs in one."""
        return next((lv for lv in reversed(self.levels) if lv.scale is Scale.ELEMENTS), None)

    @property
    def per_example(self) -> Level | None:
        """The innermost loop over the step's examples, if the place runs in one."""
        return next((lv for lv in reversed(self.levels) if lv.scale is Scale.EXAMPLES), None)


# Words that name the elements of one example; a loop over a value so named iterates elements
# when dataflow leaves it open (``for t in tokens``). Example words win (``group_tokens``).
_ELEMENT_WORDS = frozenset(
    {
        "token",
        "tok",
        "id",
        "ids",
        "position",
        "pos",
        "logprob",
        "lp",
        "lps",
        "logit",
        "mask",
        "weight",
        "target",
        "char",
        "offset",
        "index",
        "indice",
        "indices",
    }
)
# ``enumerate(xs)``, ``zip(a, b)``, ``range(len(x))``: what the loop really goes over.
_TRANSPARENT = frozenset({"enumerate", "reversed", "sorted", "list", "tuple", "iter", "zip", "len"})
_MAX_DEPTH = 8  # how far a name is followed back through assignments


def _words(name: str) -> set[str]:
    words = name_words(name)
    return words | {w[:-1] for w in words if w.endswith("s")} | {w[:-2] for w in words}


def names_elements(name: str) -> bool:
    """``tokens``, ``completion_positions``, ``input_ids``: the elements of one example (a name
    that also names examples, ``group_tokens``, does not)."""
    words = _words(name)
    return bool(words & _ELEMENT_WORDS) and not (words & EXAMPLE_WORDS)


def _names_examples(name: str) -> bool:
    return bool(_words(name) & EXAMPLE_WORDS)


def bases(iterable: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What ``iterable`` goes over: ``enumerate(zip(a, b))`` -> ``[a, b]``; ``range(len(x))`` and
    ``range(x.shape[0])`` -> ``[x]``; ``range(n)`` -> ``[n]``."""
    found: list[cst.BaseExpression] = []
    stack = [iterable]
    while stack:
        expr = stack.pop()
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            name = expr.func.value
            if name in _TRANSPARENT or name == "range":
                args = [a.value for a in expr.args if a.keyword is None]
                # ``range(start, stop)``: the stop decides.
                stack.extend(reversed(args[1:2] if name == "range" and len(args) > 1 else args))
                continue
        if (
            isinstance(expr, cst.Subscript)
            and isinstance(expr.value, cst.Attribute)
            and expr.value.attr.value == "shape"
        ):
            stack.append(expr.value.value)  # ``x.shape[0]``
            continue
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in ("size", "numel", "to_ints", "tolist")
        ):
            stack.append(expr.func.value)  # ``x.size(0)``, ``model_input.to_ints()``
            continue
        found.append(expr)
    return found


def _last_name(expr: cst.BaseExpression) -> str | None:
    """The name a value is known by: ``seq.tokens`` -> ``tokens``, ``d["mask"]`` -> ``mask``."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Attribute):
            return expr.attr.value
        if isinstance(expr, cst.Subscript):
            index = expr.slice[0].slice if len(expr.slice) == 1 else None
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                return (
                    index.value.evaluated_value
                    if isinstance(index.value.evaluated_value, str)
                    else None
                )
            expr = expr.value
            continue
        if isinstance(expr, cst.Call):
            expr = expr.func.value if isinstance(expr.func, cst.Attribute) else expr.func
            continue
        return None


class CostShapes:
    """The cost shapes of one module's places, memoised."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        self._loop_of_iterable: dict[int, LoopInfo] = {}
        for loop in model.loops:
            for iterable in loop_iterables(loop):
                self._loop_of_iterable[id(iterable)] = loop
        self._shapes: dict[CallSite | LoopInfo, CostShape | None] = {}
        self._one_example_memo: dict[LoopInfo, bool] = {}
        self._roots_memo: dict[tuple[int, int, int], frozenset[LoopInfo | str]] = {}
        self._roles_memo: dict[LoopInfo, frozenset[Role]] = {}

    def shape_of(self, site: CallSite) -> CostShape | None:
        """How ``site`` runs on every step; None when it does not (``model.steps`` decides, or
        the site is in a step function)."""
        if site in self._shapes:
            return self._shapes[site]
        step = self.model.steps.step_of(site)
        if step is not None:
            shape: CostShape | None = self._shape(step, site.loops, site.function)
        else:
            shape = self._in_step_function(site.loops, site.function, site.guard_depth)
        self._shapes[site] = shape
        return shape

    @cached_property
    def _step_functions(self) -> dict[FunctionInfo, CallSite]:
        """Functions that submit a training request once per call, outside any loop or cadence
        guard of their own (``def train_step(self, batch): ... forward_backward(...)``), and that
        no loop of this module calls: their caller's loop is elsewhere, and each call is a step."""
        model = self.model
        called_here = {
            target
            for site in model.calls
            if site.loops
            for target in [model.resolve_function(site.node.func, site.scope)]
            if target is not None
        }
        found: dict[FunctionInfo, CallSite] = {}
        for function in model.functions:
            if function in called_here:
                continue
            for site in function.calls:
                if site.loops or site.guard_depth:
                    continue
                submit = model.submit_of(site.node, site.scope)
                if submit is None or submit.method.role is not Role.TRAIN:
                    continue
                # The step's data comes in as an argument (``train_step(self, batch)``); a
                # ``main()`` that builds its data and trains once is not called per step.
                params = set(parameters(function))
                if any(
                    isinstance(root, str) and root in params
                    for arg in site.node.args
                    for root in self._roots(arg.value, site.scope, function)
                ):
                    found[function] = site
                    break
        return found

    def _in_step_function(
        self, loops: tuple[LoopInfo, ...], function: FunctionInfo | None, guard_depth: int
    ) -> CostShape | None:
        if function is None or guard_depth or any(loop.guarded for loop in loops):
            return None
        submit = self._step_functions.get(function)
        if submit is None:
            return None
        frame = _Frame(
            function, {}, frozenset(), None
        )  # its inputs are the step's, as a step loop's item
        levels: list[Level] = []
        for loop in loops:
            frame.deep = any(lv.scale is not Scale.FEW for lv in levels)
            level = self._level(loop, frame)
            levels.append(level)
            frame.scales[loop] = level.scale
        roles = self.model.function_submit_roles.get(function, frozenset())
        return CostShape(None, tuple(levels), roles, step_submit=submit)

    def of_loop(self, loop: LoopInfo) -> CostShape | None:
        """How a loop (not itself hot) runs on every step, itself counted as its last level."""
        if loop in self._shapes:
            return self._shapes[loop]
        step = self.model.steps.of_loop(loop)
        outer: list[LoopInfo] = []
        current: LoopInfo | None = loop
        while current is not None:
            outer.append(current)
            current = current.parent
        loops = tuple(reversed(outer))
        if step is not None:
            shape: CostShape | None = self._shape(step, loops, loop.function)
        elif self.model.steps.entry(loop) is None:
            shape = self._in_step_function(loops, loop.function, loop.guard_depth)
        else:
            shape = None
        self._shapes[loop] = shape
        return shape

    # ======================================================================================
    def _shape(
        self, step: StepContext, loops: tuple[LoopInfo, ...], function: FunctionInfo | None
    ) -> CostShape:
        """The levels from the step loop down: the loops inside it around the first call of the
        chain (or the place), then, in each function the chain enters, the loops around the next
        call, then the place's own."""
        frames: list[tuple[tuple[LoopInfo, ...], FunctionInfo | None, CallSite | None]] = []
        if step.calls:
            first = step.calls[0]
            frames.append((self._inside(first.loops, step.loop), first.function, None))
            for caller_call, call in pairwise(step.calls):
                frames.append((call.loops, call.function, caller_call))
            frames.append((loops, function, step.calls[-1]))
        else:
            frames.append((self._inside(loops, step.loop), function, None))
        levels: list[Level] = []
        example_params: frozenset[str] = frozenset()
        caller: _Frame | None = None
        for frame_loops, frame_function, entry in frames:
            if entry is not None and caller is not None and frame_function is not None:
                example_params = self._example_params(entry, frame_function, caller)
            step_loop = step.loop if frame_function is step.loop.function and not levels else None
            frame = _Frame(frame_function, {}, example_params, step_loop)
            for loop in frame_loops:
                frame.deep = any(lv.scale is not Scale.FEW for lv in levels)
                level = self._level(loop, frame)
                levels.append(level)
                frame.scales[loop] = level.scale
            caller = frame
        return CostShape(step, tuple(levels), self._step_roles(step.loop))

    def _step_roles(self, step_loop: LoopInfo) -> frozenset[Role]:
        """What ``step_loop`` submits: asked again by every place in it (``submits.py`` goes
        through all the loop's calls each time)."""
        roles = self._roles_memo.get(step_loop)
        if roles is None:
            roles = self._roles_memo[step_loop] = self.model.loop_submit_roles(step_loop)
        return roles

    @staticmethod
    def _inside(loops: tuple[LoopInfo, ...], step_loop: LoopInfo) -> tuple[LoopInfo, ...]:
        return loops[loops.index(step_loop) + 1 :] if step_loop in loops else loops

    def _example_params(
        self, entry: CallSite, function: FunctionInfo, caller: _Frame
    ) -> frozenset[str]:
        """The parameters of ``function`` that its call ``entry`` fills with a part of an example
        of the caller (``build_datum(traj)`` in ``for traj in batch``)."""
        found: set[str] = set()
        for name in parameters(function):
            arg = argument(function, entry, name)
            if arg is not None and caller.is_example(
                self._roots(arg, entry.scope, caller.function)
            ):
                found.add(name)
        return frozenset(found)

    def _level(self, loop: LoopInfo, frame: _Frame) -> Level:
        """What ``loop`` iterates. Of the parts of its iterable (``zip(a, b)``), one known to hold
        elements (a tensor, an axis suffix, a name) decides, then one known to hold examples, then
        one that is only a part of an example; and a loop whose items are sequences themselves
        (``len(tokens)``, ``tokens[1:]``) goes over examples, not elements."""
        found: dict[tuple[Scale, bool], cst.BaseExpression] = {}
        for iterable in loop_iterables(loop):
            if small(iterable) or dict_view(iterable):
                continue
            for base in bases(iterable):
                scale, known = self._scale(base, loop.scope, frame)
                found.setdefault((scale, known), base)
            if any(scale is not Scale.FEW for scale, _ in found):
                # ``[f(t) for d in batch for t in d.tokens]``: a later clause reads an earlier
                # one's item, as a nested loop would.
                frame.scales[loop] = Scale.EXAMPLES
        for scale, known in (
            (Scale.ELEMENTS, True),
            (Scale.EXAMPLES, True),
            (Scale.ELEMENTS, False),
            (Scale.EXAMPLES, False),
        ):
            chosen = found.get((scale, known))
            if chosen is None:
                continue
            if scale is Scale.ELEMENTS and _items_are_sequences(self.model, loop, chosen):
                return Level(loop, Scale.EXAMPLES, chosen)
            return Level(loop, scale, chosen)
        first = next(loop_iterables(loop), None)
        return Level(loop, Scale.FEW, first if first is not None else cst.Name("_"))

    def _scale(self, base: cst.BaseExpression, scope: Scope, frame: _Frame) -> tuple[Scale, bool]:
        """What iterating ``base`` goes over, and whether that is known (from its type, axis
        suffix or name) rather than only guessed from its being a part of an example."""
        if isinstance(base, cst.Integer | cst.SimpleString):
            return Scale.FEW, True
        name = _last_name(base)
        dims = _dims(name) if name is not None else None
        if dims is not None:
            return dims, True  # ``sampled_tokens_G_T``: the cookbook says what its first axis is
        roots = self._roots(base, scope, frame.function)
        from_example = frame.is_example(roots)
        elements = name is not None and names_elements(name)
        examples = name is not None and _names_examples(name)
        if any(t.kind is Kind.ARRAY for t in self.model.types(base, scope)):
            # A tensor's elements when it is (a part of) one example's data; a tensor of the
            # step's examples (``rewards``) or of unknown, maybe tiny, size is not counted.
            if from_example or elements:
                return Scale.ELEMENTS, True
            return (Scale.EXAMPLES if examples else Scale.FEW), True
        if from_example:
            # A part of one example: its elements, unless named as a collection of examples of
            # their own (``group.trajectories``, ``group.sequences``); one named in the singular
            # (``full_sequence``, ``seq``) is one example, and iterating it goes over its elements.
            if name is not None and names_collection(name) and not elements:
                return Scale.EXAMPLES, True
            return Scale.ELEMENTS, elements
        if not frame.deep:
            # The first loop over the step's own collections goes over its examples, whatever
            # they are called (``all_ref_logprobs``: one list per datum); over the tokens only
            # of a step that is one example (``for t in example.tokens``).
            if elements and frame.step_loop in roots and self._one_example(frame.step_loop):
                return Scale.ELEMENTS, True
            if elements or examples:
                return Scale.EXAMPLES, False
            # What the step loop's item holds, or what a parameter brings in (``def
            # encode_all(b)`` called with the batch), whatever its name.
            from_step = frame.step_loop in roots or any(isinstance(r, str) for r in roots)
            return (Scale.EXAMPLES if from_step else Scale.FEW), False
        if elements:
            return Scale.ELEMENTS, True
        return (Scale.EXAMPLES if examples else Scale.FEW), examples

    def made_in_step(self, expr: cst.BaseExpression, site: CallSite, shape: CostShape) -> bool:
        """Whether ``expr`` (the text a tokenizer gets) is made on this step from what only exists
        after a request: a Tinker result, an awaited value, a decoded output, what a call that
        submits gives. Followed back through assignments, the loops' iterables and, for work in a
        function the step calls, the arguments of that call; anything else existed before the
        loop (the dataset, the function's inputs, module data)."""
        model = self.model
        step = shape.step
        entries = dict(zip(step.via, step.calls, strict=True)) if step is not None else {}
        stack: list[tuple[cst.CSTNode, Scope, FunctionInfo | None, int]] = [
            (expr, site.scope, site.function, 0)
        ]
        seen: set[int] = set()
        while stack:
            node, scope, function, depth = stack.pop()
            if id(node) in seen or depth > _MAX_DEPTH * 2:
                continue
            seen.add(id(node))
            if _fresh(model, node, scope):
                return True
            for name in _root_names(model, node):
                bindings = scope.lookup(name)
                if not bindings or bindings[0].scope.function is not function:
                    continue
                for binding in bindings:
                    if binding.kind in (
                        BindingKind.ITER,
                        BindingKind.ITER_UNPACK,
                        BindingKind.VALUE,
                        BindingKind.UNPACK,
                        BindingKind.ELEMENT,
                        BindingKind.ELEMENTS,
                    ):
                        if isinstance(binding.expr, cst.BaseExpression):
                            stack.append((binding.expr, binding.scope, function, depth + 1))
                    elif function is not None and function in entries:
                        arg = argument(function, entries[function], name)
                        entry = entries[function]
                        if arg is not None:
                            stack.append((arg, entry.scope, entry.function, depth + 1))
        return False

    def _one_example(self, step_loop: LoopInfo) -> bool:
        """Whether each step handles one example (``for example in dataset:``), not a batch: no
        loop inside the step goes over its item, and the item is not named as a collection."""
        cached = self._one_example_memo.get(step_loop)
        if cached is not None:
            return cached
        node = step_loop.node
        items = target_names(node.target) if isinstance(node, cst.For) else set()
        one = bool(items) and not any(names_collection(name) for name in items)
        if one:
            for loop in self.model.loops:
                parent = loop.parent
                while parent is not None and parent is not step_loop:
                    parent = parent.parent
                if parent is step_loop and any(
                    _is_one_of(base, items)
                    for iterable in loop_iterables(loop)
                    for base in bases(iterable)
                ):
                    one = False
                    break
        self._one_example_memo[step_loop] = one
        return one

    def _roots(
        self, expr: cst.BaseExpression, scope: Scope, function: FunctionInfo | None
    ) -> frozenset[LoopInfo | str]:
        """Where the names ``expr`` reads get their values in its function, followed back through
        assignments: the loops whose targets bind them, and the parameters (by name). Memoised:
        each place's shape asks again of the arguments along its step's chain of calls."""
        key = (id(expr), id(scope), id(function))
        found = self._roots_memo.get(key)
        if found is None:
            found = self._roots_memo[key] = frozenset(self._find_roots(expr, scope, function))
        return found

    def _find_roots(
        self, expr: cst.BaseExpression, scope: Scope, function: FunctionInfo | None
    ) -> set[LoopInfo | str]:
        roots: set[LoopInfo | str] = set()
        seen: set[int] = set()
        stack: list[tuple[cst.CSTNode, int]] = [(expr, 0)]
        model = self.model
        while stack:
            node, depth = stack.pop()
            if id(node) in seen or depth > _MAX_DEPTH:
                continue
            seen.add(id(node))
            for name in _root_names(model, node):
                bindings = scope.lookup(name)
                if not bindings or bindings[0].scope.function is not function:
                    continue  # a module-level or enclosing function's value: made before
                for binding in bindings:
                    if binding.kind in (BindingKind.ITER, BindingKind.ITER_UNPACK):
                        loop = self._loop_of_iterable.get(id(binding.expr))
                        if loop is not None:
                            roots.add(loop)
                    elif binding.kind in (
                        BindingKind.VALUE,
                        BindingKind.UNPACK,
                        BindingKind.ELEMENT,
                        BindingKind.ELEMENTS,
                    ):
                        if binding.expr is not None:
                            stack.append((binding.expr, depth + 1))
                    elif function is not None and name in parameters(function):
                        roots.add(name)
        return roots


@dataclass
class _Frame:
    """One function on the way from the step loop to a place: the scales of its loops so far,
    and its parameters that hold a part of an example."""

    function: FunctionInfo | None
    scales: dict[LoopInfo, Scale]
    example_params: frozenset[str]
    step_loop: LoopInfo | None  # in the step loop's own function
    deep: bool = False  # inside a loop over examples or elements already (in any function)

    def is_example(self, roots: frozenset[LoopInfo | str]) -> bool:
        """Whether a value with these roots is (a part of) one example or element."""
        for root in roots:
            if isinstance(root, str):
                if root in self.example_params:
                    return True
            elif self.scales.get(root, Scale.FEW) is not Scale.FEW:
                return True
        return False


_DIMS = re.compile(r"_([A-Z])(?:_[A-Z])*$")
_ELEMENT_AXES = frozenset("TLV")  # tokens, length, vocabulary
_FEW_AXES = frozenset("K")  # top-k


def _dims(name: str) -> Scale | None:
    """What iterating ``name`` goes over, when it carries the cookbook's axis suffix
    (``tokens_G_T``: groups, then tokens; ``data_D``: datums)."""
    match = _DIMS.search(name)
    if match is None:
        return None
    axis = match.group(1)
    if axis in _ELEMENT_AXES:
        return Scale.ELEMENTS
    return Scale.FEW if axis in _FEW_AXES else Scale.EXAMPLES


_DECODERS = frozenset({"decode", "batch_decode", "parse_response"})


def _fresh(model: ModelView, node: cst.CSTNode, scope: Scope) -> bool:
    """Whether evaluating ``node`` itself reads what a request of this step gave."""
    for current in model.walk(node, (cst.FunctionDef, cst.Lambda)):
        if isinstance(current, cst.Await):
            return True
        if isinstance(current, cst.Call):
            func = current.func
            if isinstance(func, cst.Attribute) and func.attr.value in (*_DECODERS, "result"):
                return True
            if model.roles_submitted_by_call(current, scope):
                return True
            if _calls_a_parameter(current, scope):
                return True  # ``run_episode(task)`` handed in: what it gives is not visible
        # A name or a whole dotted path (not the ``x`` of ``x.y``, which the path stands for).
        if (
            isinstance(current, cst.Attribute)
            or (
                isinstance(current, cst.Name)
                and not isinstance(model.parent(current), cst.Attribute)
            )
        ) and any(t.kind is Kind.RESULT or t.is_future for t in model.types(current, scope)):
            return True
    return False


def _calls_a_parameter(call: cst.Call, scope: Scope) -> bool:
    """``fn(x)`` where ``fn`` is a parameter of the enclosing function: a callback the caller
    chose (a rollout, an episode runner), whose result the model cannot see."""
    if not isinstance(call.func, cst.Name):
        return False
    function = scope.function
    bindings = scope.lookup(call.func.value)
    return (
        function is not None
        and bool(bindings)
        and bindings[0].scope is scope
        and call.func.value in parameters(function)
    )


def _items_are_sequences(model: ModelView, loop: LoopInfo, base: cst.BaseExpression) -> bool:
    """Whether the body uses the loop's items as sequences (``len(tokens)``, ``tokens[:-1]``, a
    loop over them): then each item is an example of its own (``item["tokens"][i]`` is one
    sequence of a group), not one element."""
    node = loop.node
    items = set()
    index_loop = False
    if isinstance(node, cst.For):
        items = target_names(node.target)
        index_loop = (
            isinstance(node.iter, cst.Call)
            and isinstance(node.iter.func, cst.Name)
            and node.iter.func.value == "range"
        )
    if not items:
        return False
    body = loop.body
    if index_loop:
        # ``for i in range(len(xs)): x = xs[i]``: the items are what ``xs[i]`` gives.
        base_code = model.module.code_for_node(base)
        for current in model.walk(body):
            if isinstance(current, cst.Assign) and isinstance(current.value, cst.Subscript):
                value = current.value
                if (
                    model.module.code_for_node(value.value) == base_code
                    and len(current.targets) == 1
                ):
                    items |= target_names(current.targets[0].target)
    for current in model.walk(body):
        if isinstance(current, cst.Call) and isinstance(current.func, cst.Name):
            if (
                current.func.value == "len"
                and current.args
                and _is_one_of(current.args[0].value, items)
            ):
                return True
        elif isinstance(current, cst.Subscript) and _is_one_of(current.value, items):
            if any(isinstance(element.slice, cst.Slice) for element in current.slice):
                return True
        elif isinstance(current, cst.For | cst.CompFor) and _is_one_of(current.iter, items):
            return True
    return False


def _is_one_of(expr: cst.BaseExpression, names: set[str]) -> bool:
    return isinstance(expr, cst.Name) and expr.value in names


def _root_names(model: ModelView, node: cst.CSTNode) -> set[str]:
    """The plain names ``node`` reads (``seq.tokens[i]`` -> ``seq``, ``i``), not attributes or
    keywords, and not inside nested functions or lambdas."""
    names: set[str] = set()
    stack = [node]
    children = model.children
    while stack:
        current = stack.pop()
        # Exact types (parsed trees hold only libcst's concrete classes; ``isinstance`` on them
        # goes through ``abc``).
        if type(current) is cst.Name:
            names.add(current.value)
        elif type(current) is cst.Attribute or type(current) is cst.Arg:
            stack.append(current.value)
        elif type(current) in _NOT_ENTERED:
            continue
        else:
            stack.extend(children(current))
    return names


_NOT_ENTERED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
