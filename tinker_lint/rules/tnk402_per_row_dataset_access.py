"""TNK402 per-row-dataset-access."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.query import (
    DATASET_ORIGINS,
    HF,
    Binding,
    BindingKind,
    CallSite,
    LoopInfo,
    Scope,
    SemanticModel,
    dotted_name,
    has_keyword,
    passed,
    place,
)
from tinker_lint.prefilter.mentions import DATASETS
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import code_of
from tinker_lint.rules.torchloop import every_torch_step, in_torch_step

_ROW_COST = (
    "each read converts one row from Arrow (0.15-0.4 ms a row measured, 3-28x a batched read)"
)
_ROW_FIX = (
    "read the batch at once (`ds[indices]`, a slice `ds[i:i + n]`), use "
    '`with_format("torch")` with a `DataLoader`, or pull the needed columns into lists once '
    "before the loop"
)
# Calls that return an integer: an index made from them reads one row.
_INT_CALLS = frozenset({"random.randint", "random.randrange", "int", "len"})
# Calls that return a flat list (or 1-d array) of indices.
_INDEX_LISTS = frozenset(
    {
        "random.sample",
        "numpy.random.permutation",
        "numpy.random.choice",
        "numpy.arange",
        "torch.randperm",
        "torch.arange",
    }
)
# Classes whose instances run a model (``X.from_pretrained`` of a model class too).
_MODEL_MAKERS = frozenset(
    {"transformers.pipeline", "sentence_transformers.SentenceTransformer", "vllm.LLM"}
)
_NOT_MODELS = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "GenerationConfig")
_MODEL_METHODS = frozenset({"forward", "generate", "encode", "embed", "predict"})
_OUTPUT_FIELDS = frozenset({"logits", "hidden_states", "last_hidden_state", "pooler_output"})


class PerRowDatasetAccess(Rule):
    code = "TNK402"
    name = "per-row-dataset-access"
    level = "warning"
    needs_tinker = False
    summary = (
        "Read a `datasets.Dataset` a batch at a time: `ds[i]` per row in a training or "
        "data-generation loop, `ds[col][i]` in any loop, and `ds.map(f)` calling a model per row "
        "each pay Arrow's per-access cost again and again"
    )
    # A row read on every training step, in a data-generation loop, a column materialized per
    # row, a model run per row by ``map``.
    variants = {
        "step": (
            "`{read}` reads one dataset row at a time {in_step}",
            "It runs {every_step}: " + _ROW_COST + ": " + _ROW_FIX,
        ),
        "generation": (
            "`{read}` reads one dataset row at a time in the generation loop on line {line}",
            "The loop runs the model under `torch.no_grad()` on every iteration, and "
            + _ROW_COST
            + ": "
            + _ROW_FIX,
        ),
        "column": (
            "`{read}` reads the column `{column}` for one row in the loop on line {line}",
            "In `datasets` < 4.0 that materializes the whole column on every access (36 ms an "
            "access on 1000 rows, measured), and it still costs ~0.5-1.5 ms a row after: read "
            "the rows at once (`{table}[indices][{key}]`) or pull the column into a list once "
            "before the loop",
        ),
        "map": (
            "`{call}` calls `{forward}()` on one row at a time",
            "`batched=False` (the default) runs the model on one example per forward pass: pass "
            "`batched=True` (and a `batch_size`) with a function that takes a batch of rows",
        ),
    }
    message, help = variants["step"]
    why = """
A `datasets.Dataset` is an Arrow table on disk: every `ds[i]` looks the row up, copies it out of
Arrow and converts it to Python objects (or tensors, with `with_format`). Measured here
(`docs/torch-costs.md`, `bench/torch_loops.py`, 1000 rows of 512 tokens, `load_from_disk`): one
row at a time costs 147-164 us per row against 21-44 us in a slice of 32 (3.4-7.7x), and with
`with_format("torch")` 374-401 us per row against 13-14 us (28x). `ds["col"][i]` is worse: in
`datasets` 3.6 it materializes the whole column on every access (36 ms per access on that small
dataset; the spec measured 22 s per access on 100k rows of 1024 tokens), and since 4.0's lazy
`Column` it still costs 0.5-0.8 ms per row (about 20x a slice). `ds.map(f)` without `batched=True`
calls `f` once per row, so a model inside it runs one example per forward pass.

Reported, when dataflow in the module shows the object is a `datasets.Dataset`
(`load_dataset(..., split=...)`, `load_from_disk`, `Dataset.from_*`, `.map/.filter/.select/
.shuffle/.with_format` results, a `DatasetDict` split, a `datasets.Dataset` annotation, through
names, `self.x` and parameters):

- `ds[i]` (one row) read many times a step, in a loop inside a torch training step (a batch built
  row by row), or inside a loop that runs a model forward under `torch.no_grad()` (a
  data-generation loop);
- `ds["col"][i]` in any loop;
- `ds.map(f)` without `batched=True` where `f` calls a model.

Not reported: `__getitem__` of a torch `Dataset` wrapping the dataset (it runs in DataLoader
workers), dicts and `BatchEncoding`s (`enc["input_ids"][i]`), numpy buffers, one row per example
followed by `generate()` (seconds of generation dwarf the read), one row per step (the step's own
work dwarfs it), `for ex in ds:` (sequential
reads), `ds[0]`, reads outside a training or generation loop (setup), `map` for tokenization.
"""
    fix_description = (
        'Read the batch at once (`ds[indices]` or a slice), use `with_format("torch")` with a '
        "`DataLoader`, or pull the needed columns into Python lists once before the loop; "
        "`map(f, batched=True)`."
    )
    INVALID = (
        Example(
            """\
import random

from datasets import load_dataset

ds = load_dataset("imdb", split="train")
for step in range(1000):
    rows = [ds[i] for i in random.sample(range(len(ds)), 32)]
    loss = model(collate(rows)).loss
    loss.backward()
    optimizer.step()
""",
            expect=((7, 13),),
        ),
    )
    VALID = (
        Example(
            """\
import random

from datasets import load_dataset

ds = load_dataset("imdb", split="train")
for step in range(1000):
    rows = ds[random.sample(range(len(ds)), 32)]
    loss = model(collate(rows)).loss
    loss.backward()
    optimizer.step()
"""
        ),
    )

    # The import, and a name one of the model's origins of a ``datasets.Dataset`` starts from
    # (``model/analyses/datasets.py``: the loaders, the classes and their ``from_*`` constructors). In the
    # tree, one of the forms ``check`` reads: a read on every torch step (``_row_read``), or with
    # no step at all a ``.map`` call, a column read in a loop, or a row read in a loop inside a
    # ``for``/``while`` loop (``_generation_loop``).
    prefilter = Needs(
        text=(DATASETS, words(DATASET_ORIGINS)), tree=(lambda s: s.torch_step or s.row_access,)
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        # Every form read is in a loop of its function: walk the outermost loops only (a nested
        # function's loops are outermost in it).
        for loop in model.loops:
            if loop.parent is not None:
                continue
            for node in model.walk(loop.node, (cst.FunctionDef, cst.ClassDef)):
                if type(node) is cst.Subscript:
                    finding = _column_read(ctx, node) or _row_read(ctx, node)
                    if finding is not None:
                        yield finding
        for site in model.calls:
            finding = _map_per_row(ctx, site)
            if finding is not None:
                yield finding


def _finding(node: cst.CSTNode, variant: str, **fields: object) -> Finding:
    return PerRowDatasetAccess().finding(node, None, variant, **fields)


def _column_read(ctx: Context, node: cst.Subscript) -> Finding | None:
    """``ds["text"][i]`` in a loop."""
    model = ctx.model
    column = node.value
    if not isinstance(column, cst.Subscript) or len(column.slice) != 1:
        return None
    key = column.slice[0].slice
    if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)):
        return None
    where = place(model, node)
    if not where.loops or not model.datasets.is_dataset(column.value, where.scope):
        return None
    loop = where.loops[-1]
    return _finding(
        node,
        "column",
        read=code_of(model, node),
        column=code_of(model, column),
        line=ctx.line_of(loop.node),
        table=code_of(model, column.value),
        key=code_of(model, key.value),
    )


def _row_read(ctx: Context, node: cst.Subscript) -> Finding | None:
    """``ds[i]`` on every step of a training loop or in a data-generation loop."""
    model = ctx.model
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    where = place(model, node)
    if not where.loops:
        return None
    function = where.function
    if function is not None and function.name in ("__getitem__", "__getitems__"):
        return None  # a torch Dataset's sample: DataLoader workers read it
    if model.datasets.hf(node.value, where.scope) not in (HF.DATASET, HF.DISK):
        return None
    if not _one_row(model, index, where.scope):
        return None
    read = code_of(model, node)
    step = model.torch_steps.step_of(where)
    if step is not None:
        if step.loop is not None and _generates(model, step.loop):
            return None  # one row per example, then seconds of generation
        if step.loop is not None and step.via is None and where.loops[-1] is step.loop:
            return None  # one row per step: the step's own work dwarfs the read
        return _finding(
            node,
            "step",
            read=read,
            in_step=in_torch_step(ctx, step),
            every_step=every_torch_step(ctx, step),
        )
    generation = _generation_loop(model, where)
    if generation is not None:
        return _finding(node, "generation", read=read, line=ctx.line_of(generation.node))
    return None


def _one_row(model: SemanticModel, index: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
    """An index that is one integer computed in the loop: a loop variable, arithmetic on one,
    ``random.randint(...)``, ``int(...)``, ``x.item()``. Not a literal (``ds[0]``: a look at the
    data), not a list of indices (a batched read, the fix)."""
    if depth > 3:
        return False
    if isinstance(index, cst.BinaryOperation):
        return _one_row(model, index.left, scope, depth + 1) or _one_row(
            model, index.right, scope, depth + 1
        )
    if isinstance(index, cst.Call):
        qualified = model.qualify(index.func, scope) or dotted_name(index.func) or ""
        if qualified in _INT_CALLS and not scope.lookup(qualified.split(".")[0]):
            return True
        return isinstance(index.func, cst.Attribute) and index.func.attr.value == "item"
    if isinstance(index, cst.Name):
        bindings: list[Binding] = scope.lookup(index.value)
        if not bindings:
            return False
        for binding in bindings:
            if binding.kind in (BindingKind.ITER, BindingKind.ITER_UNPACK):
                if not _iterates_numbers(model, binding):
                    return False
                continue
            if binding.kind is BindingKind.VALUE and isinstance(binding.expr, cst.BaseExpression):
                if not _one_row(model, binding.expr, binding.scope, depth + 1):
                    return False
                continue
            return False
        return True
    return False


def _iterates_numbers(model: SemanticModel, binding: Binding, depth: int = 0) -> bool:
    """``for i in range(n)``, ``for j, i in enumerate(...)`` (``j``), ``for i in
    random.sample(...)`` or a name bound to such a list of indices: a loop variable that is one
    index. Not a row (``for row in ds``) nor a batch of indices (``for idx in batch_sampler``)."""
    iterable = binding.expr
    if not isinstance(iterable, cst.BaseExpression) or depth > 2:
        return False
    if binding.kind is BindingKind.ITER_UNPACK:
        enumerated = (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Name)
            and iterable.func.value == "enumerate"
        )
        return enumerated and binding.index == 0
    if binding.kind is not BindingKind.ITER:
        return False
    return _index_list(model, iterable, binding.scope, depth)


def _index_list(
    model: SemanticModel, expr: cst.BaseExpression, scope: Scope, depth: int = 0
) -> bool:
    """``range(n)``, ``random.sample(...)``, ``np.random.permutation(n)``, ``torch.randperm(n)``
    (``.tolist()`` of one), ``list(...)``/``sorted(...)`` of one, or a name bound to one."""
    if depth > 3:
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value == "tolist" and not expr.args:
            return _index_list(model, func.value, scope, depth + 1)
        if isinstance(func, cst.Name) and not scope.lookup(func.value):
            if func.value == "range":
                return True
            if func.value in ("list", "sorted", "reversed") and expr.args:
                return _index_list(model, expr.args[0].value, scope, depth + 1)
        return model.qualify(func, scope) in _INDEX_LISTS
    if isinstance(expr, cst.Name):
        bindings = scope.lookup(expr.value)
        return bool(bindings) and all(
            b.kind is BindingKind.VALUE
            and isinstance(b.expr, cst.BaseExpression)
            and _index_list(model, b.expr, b.scope, depth + 1)
            for b in bindings
        )
    return False


def _generates(model: SemanticModel, loop: LoopInfo) -> bool:
    return any(
        isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "generate"
        for site in loop.calls
    )


def _generation_loop(model: SemanticModel, where: CallSite) -> LoopInfo | None:
    """The innermost loop around the loop of ``where`` (a batch built row by row) that runs a
    model forward under ``torch.no_grad()`` (hidden states, embeddings, teacher logits), not
    ``generate()``."""
    for loop in reversed(where.loops[:-1]):  # the read repeats inside the loop: a batch
        if loop.is_comprehension:
            continue
        if _generates(model, loop):
            return None
        for site in loop.calls:
            if model.torch_steps.under_no_grad(site) and _runs_model(model, site):
                return loop
    return None


def _runs_model(model: SemanticModel, site: CallSite) -> bool:
    """A forward pass: a call of a model by dataflow (``from_pretrained`` of a model class,
    ``pipeline(...)``, ``SentenceTransformer(...)``), or one asking for a model's outputs
    (``output_hidden_states=True``, ``.logits``/``.hidden_states`` of its result)."""
    call = site.node
    func = call.func
    receiver: cst.BaseExpression = func
    if isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS:
        receiver = func.value
    if _is_model(model, receiver, site.scope):
        return True
    if has_keyword(call, "output_hidden_states"):
        return True
    parent = model.parent(call)
    return isinstance(parent, cst.Attribute) and parent.attr.value in _OUTPUT_FIELDS


def _is_model(model: SemanticModel, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        qualified = model.qualify(func, scope) or ""
        if qualified in _MODEL_MAKERS:
            return True
        if isinstance(func, cst.Attribute):
            if func.attr.value == "from_pretrained":
                owner = qualified.rsplit(".", 2)[-2] if qualified.count(".") >= 1 else ""
                return bool(owner) and not any(word in owner for word in _NOT_MODELS)
            if func.attr.value in ("to", "cuda", "eval", "half", "bfloat16", "float"):
                return _is_model(model, func.value, scope, depth + 1)
        return False
    bindings: list[Binding] = []
    if isinstance(expr, cst.Name):
        bindings = scope.lookup(expr.value)
    elif isinstance(expr, cst.Attribute):
        bindings = model.datasets.attribute_bindings(expr, scope)
    values = [
        b
        for b in bindings
        if b.kind is BindingKind.VALUE and isinstance(b.expr, cst.BaseExpression)
    ]
    return bool(values) and all(
        _is_model(model, b.expr, b.scope, depth + 1)  # type: ignore[arg-type]
        for b in values
    )


def _map_per_row(ctx: Context, site: CallSite) -> Finding | None:
    """``ds.map(f)`` without ``batched=True`` where ``f`` runs a model."""
    model = ctx.model
    func = site.node.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "map":
        return None
    kind = model.datasets.hf(func.value, site.scope)
    if kind not in (HF.DATASET, HF.DICT, HF.DISK):
        return None
    for arg in site.node.args:
        batched = arg.keyword is not None and arg.keyword.value == "batched"
        if batched and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
            return None  # ``batched=True``, or a variable
    function = passed(site.node, "function", 0)  # ``ds.map(function, ...)``
    if function is None:
        return None
    forward = _model_call_in(model, function, site.scope)
    if forward is None:
        return None
    return _finding(
        site.node, "map", call=code_of(model, site.node), forward=code_of(model, forward.func)
    )


def _model_call_in(
    model: SemanticModel, function: cst.BaseExpression, scope: Scope
) -> cst.Call | None:
    """The first call of a model in ``function`` (a lambda, or a function of this module)."""
    if isinstance(function, cst.Lambda):
        for node in _subtree(function.body):
            if isinstance(node, cst.Call):
                target = node.func
                if isinstance(target, cst.Attribute) and target.attr.value in _MODEL_METHODS:
                    target = target.value
                if _is_model(model, target, scope):
                    return node
        return None
    defined = model.resolve_function(function, scope)
    if defined is None:
        return None
    for site in defined.calls:
        if _runs_model(model, site):
            return site.node
    return None


def _subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """A lambda's body (the model's tree index does not enter lambdas)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
