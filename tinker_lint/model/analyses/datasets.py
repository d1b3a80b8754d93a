"""What a dataset is, by dataflow in the module: the one owner of "what is this dataset" (TNK402,
TNK405).

- A Hugging Face ``datasets.Dataset`` (an Arrow table read row by row): ``load_dataset(...,
  split=...)`` (not ``streaming=True``: an ``IterableDataset``), ``load_from_disk``,
  ``Dataset.from_*``, what ``.map/.filter/.select/.shuffle/.with_format/...`` of one return, a split
  of a ``DatasetDict`` (``load_dataset(name)["train"]``, ``.train_test_split()["test"]``), a value
  annotated ``datasets.Dataset``; through names, ``self.x`` attributes, the returns of the module's
  functions and the arguments its calls pass for a parameter.
- A map-style torch dataset whose ``__getitem__`` does per-sample work the training process waits
  for: disk reads (``torch.load``, ``np.load``, ``Image.open``, ``cv2.imread``, ``open``,
  ``torchaudio.load``, ...), a ``load_*`` function, or a read of a ``datasets.Dataset`` row (not
  a tokenizer call alone: one encode per sample is small beside a step), itself or through the methods and functions of the module it calls;
  and torchvision's ``ImageFolder``/``DatasetFolder``, which open an image file per sample. A class
  whose ``__getitem__`` indexes what ``__init__`` loaded is in memory, and an ``IterableDataset``
  manages its own reading: neither is heavy.
- ``DataLoader(...)`` calls (resolved through imports), their dataset, ``num_workers`` and
  ``pin_memory``, and the loops their batches are read in.

Anything else is unknown, and the rules say nothing about it: silence beats guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses.bindings import argument, parameters
from tinker_lint.model.facts.arguments import passed
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.scopes import (
    Binding,
    BindingKind,
    CallSite,
    FunctionInfo,
    LoopInfo,
    Scope,
    self_attribute_bindings,
)

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView


class HF(Enum):
    """What a value from the ``datasets`` library is."""

    DATASET = "dataset"  # ``datasets.Dataset``: map-style, rows read from Arrow
    DICT = "dict"  # ``datasets.DatasetDict``: splits by name
    DISK = "disk"  # ``load_from_disk``: a Dataset or a DatasetDict, whichever was saved
    ITERABLE = "iterable"  # ``IterableDataset`` (streaming): read in order


_LOADERS = {
    "datasets.load_from_disk": HF.DISK,
    "datasets.Dataset.load_from_disk": HF.DATASET,
    "datasets.DatasetDict.load_from_disk": HF.DICT,
    "datasets.concatenate_datasets": HF.DATASET,
    "datasets.DatasetDict": HF.DICT,
}
# The last names of every origin above: a module with none of them holds no provable dataset.
DATASET_ORIGINS = frozenset(
    {"load_dataset", "load_from_disk", "concatenate_datasets", "Dataset", "DatasetDict"}
)
_DATASET_CLASSES = frozenset({"datasets.Dataset", "datasets.arrow_dataset.Dataset"})
# Methods whose result is the same kind of object as their receiver.
_SAME_KIND = frozenset(
    {
        "map",
        "filter",
        "select",
        "shuffle",
        "with_format",
        "with_transform",
        "sort",
        "remove_columns",
        "rename_column",
        "rename_columns",
        "select_columns",
        "cast",
        "cast_column",
        "flatten",
        "flatten_indices",
        "add_column",
        "shard",
        "class_encode_column",
        "take",
        "skip",
        "repeat",
    }
)

# Calls that read or decode a file: made per sample in ``__getitem__``, the training process waits
# for them on every batch when the DataLoader has no workers.
_DISK_READS = frozenset(
    {
        "torch.load",
        "numpy.load",
        "numpy.fromfile",
        "numpy.loadtxt",
        "numpy.genfromtxt",
        "numpy.memmap",
        "PIL.Image.open",
        "cv2.imread",
        "cv2.VideoCapture",
        "imageio.imread",
        "imageio.v2.imread",
        "imageio.v3.imread",
        "skimage.io.imread",
        "tifffile.imread",
        "torchaudio.load",
        "soundfile.read",
        "librosa.load",
        "decord.VideoReader",
        "decord.AudioReader",
        "torchvision.io.read_image",
        "torchvision.io.decode_image",
        "torchvision.io.read_video",
        "torchvision.io.read_file",
        "h5py.File",
        "pandas.read_csv",
        "pandas.read_parquet",
        "pandas.read_json",
        "pickle.load",
        "json.load",
        "scipy.io.loadmat",
        "scipy.io.wavfile.read",
        "nibabel.load",
        "pydicom.dcmread",
    }
)
# Library datasets that open a file per sample.
_FILE_DATASETS = frozenset(
    {
        "torchvision.datasets.ImageFolder",
        "torchvision.datasets.DatasetFolder",
        "torchvision.datasets.folder.ImageFolder",
        "torchvision.datasets.folder.DatasetFolder",
    }
)
_ITERABLE_BASES = frozenset({"torch.utils.data.IterableDataset", "datasets.IterableDataset"})
_DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# Wrappers that keep a dataset's samples: ``Subset(ds, idx)``, ``random_split(ds, [...])``.
_WRAPPERS = frozenset(
    {
        "torch.utils.data.Subset",
        "torch.utils.data.random_split",
        "torch.utils.data.dataset.Subset",
        "torch.utils.data.dataset.random_split",
    }
)
# Calls whose argument an iteration reads through: ``enumerate(loader)``, ``tqdm(loader)``.
_ITER_WRAPPERS = frozenset({"enumerate", "iter", "zip", "tqdm", "cycle", "islice"})
_MAX_DEPTH = 6
# A value to follow: an expression, its scope, and its position in the tuple it is (or None).
_Value = tuple[cst.BaseExpression, Scope, "int | None"]


@dataclass(frozen=True)
class Work:
    """Per-sample work a dataset's ``__getitem__`` does: the call, and what it is."""

    node: cst.CSTNode  # the call (or the class, for a library dataset)
    what: str  # "calls `Image.open()`", "calls a tokenizer", "opens ... per sample"
    owner: str  # "`ImageDataset.__getitem__`", "`ImageFolder`"


@dataclass(frozen=True)
class Loader:
    """A ``DataLoader(...)`` call and how it is configured."""

    site: CallSite
    dataset: cst.BaseExpression | None  # its dataset argument
    workers: str  # "unset" | "0" | "1" | "many" | "variable" | "kwargs"
    pin_memory: str  # "unset" | "true" | "false" | "variable" | "kwargs"


class Datasets:
    """The dataset questions of one module, memoised."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        self._hf: dict[tuple[int, int], HF | None] = {}
        self._in_progress: set[tuple[int, int]] = set()

    # ======================================================================================
    # Hugging Face datasets
    # ======================================================================================
    def hf(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> HF | None:
        """What ``expr`` is, when dataflow shows it is a value of the ``datasets`` library."""
        key = (id(expr), id(scope))
        if key in self._hf:
            return self._hf[key]
        if key in self._in_progress or depth > _MAX_DEPTH:
            return None
        self._in_progress.add(key)
        try:
            result = self._infer_hf(expr, scope, depth)
        finally:
            self._in_progress.discard(key)
        if depth == 0:
            self._hf[key] = result
        return result

    def is_dataset(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return self.hf(expr, scope) is HF.DATASET

    def _infer_hf(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> HF | None:
        model = self.model
        if isinstance(expr, cst.Call):
            qualified = model.qualify(expr.func, scope) or ""
            if qualified == "datasets.load_dataset":
                return _load_dataset(expr)
            if qualified in _LOADERS:
                return _LOADERS[qualified]
            if qualified.startswith("datasets.Dataset.from_"):
                return HF.DATASET
            if qualified.startswith("datasets.IterableDataset."):
                return HF.ITERABLE
            func = expr.func
            if isinstance(func, cst.Attribute) and not qualified:
                method = func.attr.value
                if method in _SAME_KIND or method in ("train_test_split", "to_iterable_dataset"):
                    receiver = self.hf(func.value, scope, depth + 1)
                    if receiver is None:
                        return None
                    if method == "train_test_split":
                        return HF.DICT if receiver is HF.DATASET else None
                    if method == "to_iterable_dataset":
                        return HF.ITERABLE
                    return receiver
            target = model.resolve_function(func, scope)
            if target is not None:
                return self._agree([(value, target.scope) for value in target.returns], depth)
            return None
        if isinstance(expr, cst.Subscript):
            value = self.hf(expr.value, scope, depth + 1)
            if value is HF.DICT:
                return HF.DATASET  # ``dd["train"]``, ``dd[split]``: a DatasetDict has no rows
            return None
        if isinstance(expr, cst.Name):
            return self._bindings(scope.lookup(expr.value), depth)
        if isinstance(expr, cst.Attribute):
            return self._bindings(self.attribute_bindings(expr, scope), depth)
        return None

    def _bindings(self, bindings: list[Binding], depth: int) -> HF | None:
        """What every binding of a name says, when they agree."""
        found: set[HF] = set()
        for binding in bindings:
            value = binding.expr
            if binding.kind is BindingKind.VALUE and isinstance(value, cst.BaseExpression):
                kind = self.hf(value, binding.scope, depth + 1)
                if kind is None and self._refers_to_itself(value, binding):
                    continue  # ``ds = ds.map(f)`` answered by the other bindings
                if kind is None:
                    return None
                found.add(kind)
            elif binding.kind is BindingKind.ANNOTATION and isinstance(value, cst.BaseExpression):
                kind = self._annotated(value, binding.scope)
                if kind is None:
                    return None
                found.add(kind)
            elif binding.kind is BindingKind.UNKNOWN and binding.scope.function is not None:
                kind = self._parameter(binding, depth)
                if kind is None:
                    return None
                found.add(kind)
            else:
                return None
        return found.pop() if len(found) == 1 else None

    def _refers_to_itself(self, value: cst.BaseExpression, binding: Binding) -> bool:
        """``ds = ds.map(f).shuffle()``: a binding that keeps the kind of the name it rebinds
        (what the name's other bindings say)."""
        names = {name for name, bs in binding.scope.bindings.items() if binding in bs}
        while (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _SAME_KIND
        ):
            value = value.func.value
        return isinstance(value, cst.Name) and value.value in names

    def _agree(self, values: list[tuple[cst.BaseExpression, Scope]], depth: int) -> HF | None:
        kinds = {self.hf(value, scope, depth + 1) for value, scope in values}
        if len(kinds) != 1:
            return None
        return kinds.pop()

    def _annotated(self, annotation: cst.BaseExpression, scope: Scope) -> HF | None:
        """``ds: datasets.Dataset``, ``Dataset | None``, ``Optional[Dataset]``."""
        if isinstance(annotation, cst.SimpleString):
            text = str(annotation.evaluated_value)
            try:
                annotation = cst.parse_expression(text)
            except cst.ParserSyntaxError:
                return None
            scope = self.model.module_scope
        if isinstance(annotation, cst.BinaryOperation) and isinstance(
            annotation.operator, cst.BitOr
        ):
            sides = [annotation.left, annotation.right]
            kinds = {
                self._annotated(side, scope)
                for side in sides
                if not (isinstance(side, cst.Name) and side.value == "None")
            }
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(annotation, cst.Subscript):
            if (dotted_name(annotation.value) or "").rsplit(".", 1)[-1] == "Optional":
                [element] = annotation.slice[:1]
                if isinstance(element.slice, cst.Index):
                    return self._annotated(element.slice.value, scope)
            return None
        qualified = self.model.qualify(annotation, scope)
        if qualified in _DATASET_CLASSES:
            return HF.DATASET
        if qualified == "datasets.DatasetDict":
            return HF.DICT
        return None

    def _parameter(self, binding: Binding, depth: int) -> HF | None:
        """A parameter without annotation: what every call of its function in this module passes
        for it (at least one call)."""
        function = binding.scope.function
        assert function is not None
        names = [name for name, bs in binding.scope.bindings.items() if binding in bs]
        if len(names) != 1 or names[0] not in parameters(function):
            return None
        calls = self._calls_of(function)
        values: list[tuple[cst.BaseExpression, Scope]] = []
        for site in calls:
            value = argument(function, site, names[0])
            if value is None:
                return None
            values.append((value, site.scope))
        return self._agree(values, depth) if values else None

    def _calls_of(self, function: FunctionInfo) -> list[CallSite]:
        return self.model.torch_steps.callers_of(function)

    def attribute_bindings(self, expr: cst.Attribute, scope: Scope) -> list[Binding]:
        """Where ``self.x`` got its values, for ``self`` of a class of this module."""
        return self_attribute_bindings(expr, scope, self.model.class_attrs)

    # ======================================================================================
    # Torch datasets
    # ======================================================================================
    def work(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> Work | None:
        """The per-sample work ``expr``'s ``__getitem__`` does, when dataflow shows it is an
        instance of a dataset class of this module (or a library one) that does some."""
        if depth > _MAX_DEPTH:
            return None
        model = self.model
        if isinstance(expr, cst.Call):
            qualified = model.qualify(expr.func, scope) or ""
            if qualified in _FILE_DATASETS:
                name = qualified.rsplit(".", 1)[-1]
                return Work(expr, "opens and decodes an image file per sample", f"`{name}`")
            if qualified in _WRAPPERS and expr.args:
                return self.work(expr.args[0].value, scope, depth + 1)
            if isinstance(expr.func, cst.Name):
                for binding in scope.lookup(expr.func.value):
                    if binding.kind is BindingKind.CLASS and isinstance(binding.expr, cst.ClassDef):
                        return self._class_work(binding.expr.name.value)
            return None
        bindings: list[Binding] = []
        if isinstance(expr, cst.Name):
            bindings = scope.lookup(expr.value)
        elif isinstance(expr, cst.Attribute):
            bindings = self.attribute_bindings(expr, scope)
        found: Work | None = None
        for binding in bindings:
            value = binding.expr
            if binding.kind not in (BindingKind.VALUE, BindingKind.UNPACK) or not isinstance(
                value, cst.BaseExpression
            ):
                return None
            work = self.work(value, binding.scope, depth + 1)
            if work is None:
                return None  # one binding that does no visible work: not shown
            found = found or work
        return found

    def _class_work(self, name: str) -> Work | None:
        if self.is_iterable_class(name):
            return None
        getitem = self._method(name, "__getitem__")
        if getitem is None:
            return None
        owner = f"`{name}.__getitem__`"
        seen: set[FunctionInfo] = set()
        todo = [getitem]
        model = self.model
        while todo:
            function = todo.pop(0)
            if function in seen:
                continue
            seen.add(function)
            for site in function.calls:
                what = self._heavy(site)
                if what is not None:
                    return Work(site.node, what, owner)
                target = model.resolve_function(site.node.func, site.scope)
                if target is not None and target not in seen:
                    todo.append(target)
            for node in model.walk(function.node.body):
                if (
                    isinstance(node, cst.Subscript)
                    and _row_index(node)
                    and self.hf(node.value, function.scope) in (HF.DATASET, HF.DISK)
                ):
                    return Work(node, "reads a row of a `datasets.Dataset`", owner)
        return None

    def _method(self, class_name: str, name: str) -> FunctionInfo | None:
        """``class_name.name``, defined on it or on a base class of this module."""
        seen: set[str] = set()
        todo = [class_name]
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            method = self.model.methods.get(current, {}).get(name)
            if method is not None:
                return method
            node = self.model.index.classes.get(current)
            if node is not None:
                todo.extend(n for base in node.bases if (n := dotted_name(base.value)))
        return None

    def is_iterable_class(self, name: str, depth: int = 0) -> bool:
        """A class of this module that is an ``IterableDataset``: it reads in ``__iter__``."""
        node = self.model.index.classes.get(name)
        if node is None or depth > _MAX_DEPTH:
            return False
        for base in node.bases:
            qualified = self.model.qualify(base.value, self.model.module_scope)
            if qualified in _ITERABLE_BASES:
                return True
            local = dotted_name(base.value)
            if local is not None and self.is_iterable_class(local, depth + 1):
                return True
        return False

    def _heavy(self, site: CallSite) -> str | None:
        """ "calls `Image.open()`" when ``site`` reads or decodes a file, else None."""
        model = self.model
        func = site.node.func
        qualified = model.qualify(func, site.scope) or ""
        short = (dotted_name(func) or "").rsplit(".", 2)
        if qualified in _DISK_READS:
            return f"calls `{'.'.join(short[-2:])}()`"
        if (
            isinstance(func, cst.Name)
            and func.value == "open"
            and not site.scope.lookup("open")
            and "open" not in model.imports.aliases
        ):
            return "calls `open()`"  # the builtin
        # A tokenizer call is not heavy work by itself: one example's encode takes a fraction of
        # a millisecond to a few, against the forward and backward of the model it feeds (a
        # loader built per request and tokenizing one chat per sample, tinkerbell's HF backend,
        # would gain nothing from workers, which start per loader).
        # ``load_image(path)`` of another module: a loader by its name (the module's own
        # functions are followed instead).
        last = (dotted_name(func) or "").rsplit(".", 1)[-1]
        if (
            last.startswith(("load_", "_load_"))
            and last != "load_state_dict"
            and model.resolve_function(func, site.scope) is None
        ):
            return f"calls `{last}()`"
        return None

    # ======================================================================================
    # DataLoaders
    # ======================================================================================
    @cached_property
    def loaders(self) -> list[Loader]:
        """Every ``DataLoader(...)`` call of the module, in source order."""
        model = self.model
        found: list[Loader] = []
        for site in model.calls:
            if model.qualify(site.node.func, site.scope) not in _DATALOADERS:
                continue
            found.append(
                Loader(
                    site,
                    passed(site.node, "dataset", 0),
                    _workers(site.node),
                    _pin_memory(site.node),
                )
            )
        return found

    def read_loops(self, loader: Loader) -> list[LoopInfo] | None:
        """The loops that read ``loader``'s batches (``for batch in loader:``, ``while ...:
        next(it)``), following the loader through names, ``self.x``, the returns of the module's
        functions and the parameters of those it is passed to; None when it is handed to something
        that configures it elsewhere (``accelerator.prepare``, ``fabric.setup_dataloaders``)."""
        values: list[_Value] = [(loader.site.node, loader.site.scope, None)]
        loops: list[LoopInfo] = []
        seen: set[tuple[int, int | None]] = set()
        while values:
            value, scope, position = values.pop(0)
            if (id(value), position) in seen or len(seen) > 50:
                continue
            seen.add((id(value), position))
            for use, use_scope in self._uses(value, scope, position):
                outcome = self._use(use, use_scope, values)
                if outcome is False:
                    return None
                if isinstance(outcome, LoopInfo) and outcome not in loops:
                    loops.append(outcome)
        return loops

    def _uses(
        self, value: cst.BaseExpression, scope: Scope, position: int | None = None
    ) -> list[tuple[cst.BaseExpression, Scope]]:
        """Where ``value`` goes: the expression itself, and every read of a name or ``self.x`` it
        is bound to (``position``: of a tuple the value is, ``a, loader = make()``)."""
        model = self.model
        uses: list[tuple[cst.BaseExpression, Scope]] = []
        if position is None:
            uses.append((value, scope))
        parent = model.parent(value)
        targets: list[cst.BaseExpression] = []
        if isinstance(parent, cst.Assign):
            targets = [t.target for t in parent.targets]
        elif isinstance(parent, cst.AnnAssign | cst.NamedExpr):
            targets = [parent.target]
        for target in targets:
            if position is not None:
                if not isinstance(target, cst.Tuple | cst.List) or position >= len(target.elements):
                    continue
                target = target.elements[position].value
            if isinstance(target, cst.Name):
                bindings = scope.lookup(target.value)
                uses.extend(self._reads_of_name(target.value, bindings))
            elif (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and scope.function is not None
                and target.value.value == scope.function.self_name
            ):
                uses.extend(self._reads_of_attribute(scope.function, target.attr.value))
        return uses

    def _reads_of_name(
        self, name: str, bindings: list[Binding]
    ) -> list[tuple[cst.BaseExpression, Scope]]:
        return [
            (site_node, site_scope)
            for site_node, site_scope in self._names.get(name, [])
            if site_scope.lookup(name) is bindings and site_node is not None
        ]

    def _reads_of_attribute(
        self, function: FunctionInfo, attr: str
    ) -> list[tuple[cst.BaseExpression, Scope]]:
        found: list[tuple[cst.BaseExpression, Scope]] = []
        for method in self.model.methods.get(function.class_name or "", {}).values():
            for node in self.model.walk(method.node.body):
                if (
                    isinstance(node, cst.Attribute)
                    and node.attr.value == attr
                    and isinstance(node.value, cst.Name)
                    and node.value.value == method.self_name
                ):
                    found.append((node, method.scope))
        return found

    @cached_property
    def _names(self) -> dict[str, list[tuple[cst.Name, Scope]]]:
        """Every name read of the module with the scope it is read in."""
        model = self.model
        found: dict[str, list[tuple[cst.Name, Scope]]] = {}
        scopes: list[tuple[cst.CSTNode, Scope]] = [(model.module, model.module_scope)]
        scopes.extend((f.node.body, f.scope) for f in model.functions)
        for root, scope in scopes:
            for node in model.walk(root, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                if isinstance(node, cst.Name):
                    found.setdefault(node.value, []).append((node, scope))
        return found

    def _use(
        self,
        use: cst.BaseExpression,
        scope: Scope,
        values: list[_Value],
    ) -> LoopInfo | bool | None:
        """What one use of the loader does: the loop reading it, False when it is handed to a
        ``prepare``-like call, None otherwise (``values`` gets what to follow next)."""
        model = self.model
        node: cst.BaseExpression = use
        while True:
            parent = model.parent(node)
            if isinstance(parent, cst.Arg):
                call = model.parent(parent)
                if not isinstance(call, cst.Call):
                    return None
                name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
                if name.startswith(("prepare", "setup_dataloader")):
                    return False
                if name in _ITER_WRAPPERS:
                    node = call
                    continue
                if name == "next":
                    site = model.call_site_of.get(id(call))
                    return site.loops[-1] if site is not None and site.loops else None
                target = model.resolve_function(call.func, scope)
                site = model.call_site_of.get(id(call))
                if target is not None and site is not None:
                    self._into_parameter(target, site, parent, values)
                return None
            if isinstance(parent, cst.For) and parent.iter is node:
                return model.loop_of_node.get(id(parent))
            if isinstance(parent, cst.CompFor) and parent.iter is node:
                return None  # a comprehension over the batches: not a training loop
            position: int | None = None
            if isinstance(parent, cst.Element) and isinstance(model.parent(parent), cst.Tuple):
                outer = model.parent(parent)
                assert isinstance(outer, cst.Tuple)
                position = [e.value for e in outer.elements].index(node)
                parent = model.parent(outer)  # ``return sampler, loader``
            if isinstance(parent, cst.Return) and scope.function is not None:
                for site in self._calls_of(scope.function):
                    values.append((site.node, site.scope, position))
                return None
            if isinstance(parent, cst.Assign | cst.AnnAssign) and node is not use:
                values.append((node, scope, None))  # ``it = iter(loader)``
                return None
            return None

    def _into_parameter(
        self,
        target: FunctionInfo,
        site: CallSite,
        arg: cst.Arg,
        values: list[_Value],
    ) -> None:
        """Follow a loader passed to a function of this module into its parameter."""
        for name in parameters(target):
            if argument(target, site, name) is arg.value:
                bindings = target.scope.bindings.get(name, [])
                for read, read_scope in self._reads_of_name(name, bindings):
                    values.append((read, read_scope, None))
                # The reads themselves are the uses: follow each as its own value.
                return


def _load_dataset(call: cst.Call) -> HF | None:
    """``load_dataset(name)`` is a DatasetDict, with ``split=`` a Dataset, streaming iterable."""
    streaming = passed(call, "streaming", None)
    if isinstance(streaming, cst.Name) and streaming.value == "True":
        return HF.ITERABLE
    if streaming is not None and not (
        isinstance(streaming, cst.Name) and streaming.value == "False"
    ):
        return None
    split = passed(call, "split", 4)
    if split is None:
        return HF.DICT
    if isinstance(split, cst.List | cst.Tuple | cst.ListComp):
        return None  # a list of splits: a list of datasets
    return HF.DATASET


def _has_kwargs(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def _workers(call: cst.Call) -> str:
    value = passed(call, "num_workers", 5)
    if value is None:
        return "kwargs" if _has_kwargs(call) else "unset"
    if isinstance(value, cst.Integer):
        number = int(value.value, 0)
        return str(number) if number in (0, 1) else "many"
    return "variable"


def _pin_memory(call: cst.Call) -> str:
    value = passed(call, "pin_memory", 7)
    if value is None:
        return "kwargs" if _has_kwargs(call) else "unset"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value.lower()
    return "variable"


def _row_index(node: cst.Subscript) -> bool:
    """``ds[i]``, ``ds[idx + 1]``: one index that is not a string (a column or a split) nor a
    slice (a batch)."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    value = node.slice[0].slice.value
    return not isinstance(
        value,
        cst.SimpleString
        | cst.ConcatenatedString
        | cst.FormattedString
        | cst.List
        | cst.Tuple
        | cst.ListComp,
    )
