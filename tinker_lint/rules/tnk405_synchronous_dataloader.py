"""TNK405 synchronous-dataloader."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.analyses.dataflow import chain_root, target_names
from tinker_lint.model.analyses.datasets import Loader
from tinker_lint.model.facts.scopes import LoopInfo
from tinker_lint.model.query import BindingKind, CallSite, SemanticModel
from tinker_lint.prefilter.mentions import TORCH_STEP, TORCH_STEP_RECEIVER
from tinker_lint.prefilter.needs import Needs, words
from tinker_lint.rules.base import Context, Example, Finding, Rule

_WORKERS = {
    "unset": "loads every sample in the training process (`num_workers` defaults to 0)",
    "0": "loads every sample in the training process (`num_workers=0`)",
    "1": "loads every sample in a single worker process (`num_workers=1`)",
}
_FIX = (
    "pass `num_workers=min(8, os.cpu_count())` (tune it){pin}, and `persistent_workers=True` if "
    "epochs are short or workers start with `spawn`"
)


class SynchronousDataloader(Rule):
    code = "TNK405"
    name = "synchronous-dataloader"
    level = "warning"
    needs_tinker = False
    summary = (
        "Give a `DataLoader` workers when its dataset reads or decodes a file for each sample: "
        "with `num_workers=0` the GPU waits while the training process prepares every batch"
    )
    message = "`DataLoader(...)` {workers}"
    help = "{dataset} {work} ({where}), and the training loop on line {loop} waits for it: {remedy}"
    why = """
`DataLoader`'s default `num_workers=0` makes data loading "synchronous and done in the main
process" (`torch.utils.data` docs): every sample's `__getitem__` runs between two training steps,
and the GPU idles while it does. With workers, samples are prepared in other processes while the
GPU computes. The PyTorch tuning guide recommends `num_workers > 0` and `pin_memory=True`; the
profiler's `SynchronizedDataLoaderPattern` flags `num_workers=0`; Lightning warns at run time when
a loader has fewer than 2 workers. `pin_memory=True` lets the host-to-device copy of each batch run
from page-locked memory, pinned in a background thread (+8.6% throughput in metatrain PR #1273).

Workers cost process start-up and pickling: for an in-memory dataset (a list, a `TensorDataset`,
a class whose `__getitem__` indexes what `__init__` loaded) they can make loading slower. So the
rule reports only a `DataLoader` whose dataset is shown, in the module, to do per-sample work in
`__getitem__` (or in what it calls): a file read or decode (`torch.load`, `np.load`,
`Image.open`, `cv2.imread`, `open`, `torchaudio.load`, torchvision's `ImageFolder`), a `load_*`
function, or a row read of a `datasets.Dataset`; with `num_workers` unset, `0` or `1`; and whose batches a torch training loop of the module iterates. The second part of the fix,
`pin_memory=True`, is given when that loop copies its batches to the device.

Not reported: a `__getitem__` whose only work is tokenizing (one encode per sample is small beside
the step of the model it feeds, and workers start per loader), unknown or in-memory datasets, `num_workers=args.workers` (a variable) or
`**kwargs`, `IterableDataset`s (they manage their own reading), loaders handed to
`accelerator.prepare` or `fabric.setup_dataloaders` (configured elsewhere), loaders read only by
evaluation loops, and training on the CPU (every batch moved with `.to("cpu")`).
"""
    fix_description = (
        "`num_workers=min(8, os.cpu_count())` (tune), `pin_memory=True` when batches go to the "
        "GPU, and `persistent_workers=True` if epochs are short or workers start with `spawn`."
    )
    INVALID = (
        Example(
            """\
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        return Image.open(self.paths[index])


loader = DataLoader(Images(paths), batch_size=32)
for batch in loader:
    model(batch.cuda()).loss.backward()
    optimizer.step()
""",
            expect=((17, 10),),
        ),
    )
    VALID = (
        Example(
            """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(inputs, labels), batch_size=32)
for x, y in loader:
    model(x.cuda(), y.cuda()).loss.backward()
    optimizer.step()
"""
        ),
    )

    prefilter = Needs(
        text=(words({"DataLoader"}), TORCH_STEP, TORCH_STEP_RECEIVER),
        tree=(lambda s: s.torch_step,),
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        datasets = model.datasets
        for loader in datasets.loaders:
            workers = _WORKERS.get(loader.workers)
            if workers is None or loader.dataset is None:
                continue
            work = datasets.work(loader.dataset, loader.site.scope)
            if work is None:
                continue
            loop = _training_loop(model, loader)
            if loop is None:
                continue
            moves = _batch_moves(model, loop)
            if moves and all(device == "cpu" for _, device in moves):
                continue  # training on the CPU: nothing to overlap the loading with
            pin = ""
            to_device = [site for site, device in moves if device == "device"]
            if to_device and loader.pin_memory in ("unset", "false"):
                line = ctx.line_of(to_device[0].node)
                pin = (
                    f", `pin_memory=True` (the loop copies each batch to the device on line {line})"
                )
            where = f"line {ctx.line_of(work.node)}"
            yield self.finding(
                loader.site.node,
                workers=workers,
                dataset=work.owner,
                work=work.what,
                where=where,
                loop=ctx.line_of(loop.node),
                remedy=_FIX.format(pin=pin),
            )


def _training_loop(model: SemanticModel, loader: Loader) -> LoopInfo | None:
    """The first loop reading ``loader``'s batches that trains: a torch step runs in it (in it,
    in a loop inside it, or in a function it calls), outside eval-only code."""
    loops = model.datasets.read_loops(loader)
    if not loops:
        return None
    steps = model.torch_steps
    for loop in loops:
        for site in loop.calls:
            step = steps.step_of(site)
            if step is None or step.loop is None:
                continue
            inner: LoopInfo | None = step.loop
            while inner is not None and inner is not loop:
                inner = inner.parent
            if inner is loop:
                return loop
    return None


def _batch_moves(model: SemanticModel, loop: LoopInfo) -> list[tuple[CallSite, str]]:
    """The ``.to(...)``/``.cuda()`` calls in ``loop`` on what its batches hold, each with where
    it copies to: "cpu", "device", or "dtype" (``.to(torch.float16)``)."""
    batch = _batch_names(model, loop)
    moves: list[tuple[CallSite, str]] = []
    for site in loop.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda"):
            continue
        root = chain_root(func.value, attributes=True)  # ``batch["x"].float()`` -> ``batch``
        if not isinstance(root, cst.Name) or root.value not in batch:
            continue
        if func.attr.value == "cuda":
            moves.append((site, "device"))
            continue
        target = _device_argument(site.node)
        if target is None:
            continue
        moves.append((site, _device_kind(model, site, target)))
    return moves


def _batch_names(model: SemanticModel, loop: LoopInfo) -> set[str]:
    """Names that hold a batch of the loop or a part of one: the loop's targets (or what
    ``next(...)`` gives in it), and names assigned from them in its body, followed a few times."""
    names: set[str] = set()
    node = loop.node
    if isinstance(node, cst.For):
        names |= target_names(node.target)
    assignments: list[tuple[set[str], cst.BaseExpression]] = []
    for inner in model.walk(loop.body, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if isinstance(inner, cst.Assign):
            targets: set[str] = set()
            for target in inner.targets:
                targets |= target_names(target.target)
            assignments.append((targets, inner.value))
        elif isinstance(inner, cst.CompFor):
            assignments.append((target_names(inner.target), inner.iter))
    for targets, value in assignments:
        if any(
            isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "next"
            for n in model.walk(value)
        ):
            names |= targets
    for _ in range(4):
        before = len(names)
        for targets, value in assignments:
            if any(isinstance(n, cst.Name) and n.value in names for n in model.walk(value)):
                names |= targets
        if len(names) == before:
            break
    return names


def _device_argument(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "device":
            return arg.value
    return None


def _device_kind(model: SemanticModel, site: CallSite, value: cst.BaseExpression) -> str:
    """ "cpu" for ``"cpu"``, ``torch.device("cpu")`` or a name bound only to one; "dtype" for
    ``torch.float16``; else "device"."""
    if _is_cpu(model, site, value):
        return "cpu"
    if isinstance(value, cst.Name):
        bindings = site.scope.lookup(value.value)
        if bindings and all(
            b.kind is BindingKind.VALUE
            and isinstance(b.expr, cst.BaseExpression)
            and _is_cpu(model, site, b.expr)
            for b in bindings
        ):
            return "cpu"
    qualified = model.qualify(value, site.scope) or ""
    if qualified.startswith("torch.") and qualified != "torch.device":
        return "dtype"
    return "device"


def _is_cpu(model: SemanticModel, site: CallSite, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value == "cpu"
    if isinstance(value, cst.Call) and model.qualify(value.func, site.scope) == "torch.device":
        return bool(value.args) and _is_cpu(model, site, value.args[0].value)
    return False
