"""What ``model.datasets`` says a dataset is (``tinker_lint/model/analyses/datasets.py``): Hugging Face
datasets by dataflow, torch datasets by what their ``__getitem__`` does, DataLoaders and the loops
reading them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tinker_lint.model.analyses.datasets import HF
from tinker_lint.model.query import SemanticModel


def model_of(source: str) -> SemanticModel:
    return SemanticModel(cst.parse_module(textwrap.dedent(source)))


def kind_of_last(source: str) -> HF | None:
    """What the expression of the module's last statement is."""
    model = model_of(source)
    statement = model.module.body[-1]
    assert isinstance(statement, cst.SimpleStatementLine)
    expr = statement.body[0]
    assert isinstance(expr, cst.Expr)
    return model.datasets.hf(expr.value, model.module_scope)


IMPORTS = "import datasets\nfrom datasets import Dataset, load_dataset, load_from_disk\n"


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ('ds = load_dataset("imdb")\nds', HF.DICT),
        ('ds = load_dataset("imdb", split="train")\nds', HF.DATASET),
        ('ds = load_dataset("imdb", split=["train", "test"])\nds', None),
        ('ds = load_dataset("c4", split="train", streaming=True)\nds', HF.ITERABLE),
        ('ds = load_dataset("imdb")["train"]\nds', HF.DATASET),
        ('ds = load_dataset("imdb", split="train").train_test_split(0.1)["test"]\nds', HF.DATASET),
        (
            'ds = load_dataset("imdb", split="train")\nds = ds.map(f).shuffle(seed=0)\nds',
            HF.DATASET,
        ),
        ("ds = load_from_disk(path)\nds", HF.DISK),
        ("ds = Dataset.from_dict(d)\nds", HF.DATASET),
        ("ds = Dataset.from_dict(d)\nds = ds.to_list()\nds", None),  # a list now
        ('ds = load_dataset("imdb", split="train")\nds["text"]', None),  # a column
        ("ds = make()\nds", None),
    ],
)
def test_hugging_face_datasets_by_dataflow(source: str, kind: HF | None) -> None:
    assert kind_of_last(IMPORTS + source) is kind


def test_annotations_parameters_and_attributes() -> None:
    model = model_of(
        IMPORTS
        + """
def annotated(ds: datasets.Dataset, other: "Dataset | None", plain):
    return ds, other, plain

def passed(rows):
    return rows

passed(load_dataset("imdb", split="train"))

class Holder:
    def __init__(self):
        self.rows = load_from_disk("x")

    def read(self):
        return self.rows
"""
    )
    annotated, passed, _, read = (f for f in model.functions)
    [ret] = annotated.returns
    assert isinstance(ret, cst.Tuple)
    kinds = [model.datasets.hf(e.value, annotated.scope) for e in ret.elements]
    assert kinds == [HF.DATASET, HF.DATASET, None]
    assert model.datasets.hf(passed.returns[0], passed.scope) is HF.DATASET
    assert model.datasets.hf(read.returns[0], read.scope) is HF.DISK


def test_a_dataloader_handed_to_prepare_has_no_reading_loop_to_judge() -> None:
    model = model_of(
        """
from torch.utils.data import DataLoader

def train(ds, model, opt, accelerator):
    loader = DataLoader(ds, batch_size=8)
    model, opt, loader = accelerator.prepare(model, opt, loader)
    for batch in loader:
        accelerator.backward(model(batch))

def plain(ds, model, opt):
    sampler, loader = build(ds)
    for batch in loader:
        model(batch).backward()

def build(ds):
    return None, DataLoader(ds, num_workers=2)
"""
    )
    prepared, built = model.datasets.loaders
    assert model.datasets.read_loops(prepared) is None
    assert (prepared.workers, prepared.pin_memory) == ("unset", "unset")
    [loop] = model.datasets.read_loops(built) or []
    assert model.line_of(loop.node) == 12
    assert built.workers == "many"


def test_the_flake8_gate_admits_a_data_generation_script_without_a_training_step() -> None:
    from tinker_lint.prefilter.mentions import may_concern_torch

    script = 'from datasets import load_dataset\nds = load_dataset("imdb", split="train")\n'
    assert may_concern_torch(script)
    assert not may_concern_torch("import json\nprint(json.dumps({}))\n")
