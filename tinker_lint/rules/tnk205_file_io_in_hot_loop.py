"""TNK205 file-io-in-hot-loop."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.semantic import CallSite, SemanticModel
from tinker_lint.prefilter.needs import Needs, parts, words
from tinker_lint.rules.base import Context, Example, Finding, Rule
from tinker_lint.rules.hotloop import (
    WHY_GIL,
    builtin,
    callee,
    calls_in_hot_loops,
    every_step,
)

FILE_FUNCTIONS = frozenset(
    {
        "io.open",
        "gzip.open",
        "bz2.open",
        "lzma.open",
        "codecs.open",
        "numpy.load",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.loadtxt",
        "numpy.savetxt",
        "numpy.genfromtxt",
        "numpy.fromfile",
        "torch.load",
        "torch.save",
        "datasets.load_dataset",
        "datasets.load_from_disk",
    }
)
PATH_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes"})
PANDAS_READERS = "pandas.read_"  # any function of pandas whose name starts so


class FileIoInHotLoop(Rule):
    code = "TNK205"
    needs_hot_loop = True
    name = "file-io-in-hot-loop"
    level = "note"
    summary = (
        "Load before the loop; write on a cadence: file I/O in the loop that submits Tinker "
        "requests stalls the SDK's thread"
    )
    message = (
        "`{call}` does file I/O {every_step}, outside a cadence guard: load before the loop; "
        "write on a cadence"
    )
    why = (
        WHY_GIL
        + """
Opening, reading and writing files on every step (`open()`, `Path.read_*` / `write_*`,
`np.load` / `np.save`, `torch.load` / `torch.save`, `load_dataset`, `pd.read_*`) adds system calls,
decoding and parsing to each step, in the loop whose background thread keeps the Tinker session
alive. Load data once before the loop; write checkpoints and logs on a cadence
(`if step % save_every == 0:`), or from a background thread.

Not reported under a cadence guard, or in a loop that submits nothing.
"""
    )
    fix_description = (
        "Read inputs once before the loop; open log files once and keep the handle, and write "
        "checkpoints and dumps under a cadence guard (`if step % save_every == 0:`)."
    )
    INVALID = (
        Example(
            """\
import json

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    with open("log.jsonl", "a") as f:
        f.write(json.dumps({"step": step}) + "\\n")
""",
            expect=((5, 10),),
        ),
    )
    VALID = (
        Example(
            """\
import json

for step, batch in enumerate(batches):
    training_client.forward_backward(batch, loss_fn="cross_entropy")
    if step % log_every == 0:
        with open("log.jsonl", "a") as f:
            f.write(json.dumps({"step": step}) + "\\n")
"""
        ),
    )

    # What ``does_file_io`` matches: the builtin ``open``, a path method, a file function by the
    # last part of its name (``np.load``, ``from torch import save``), a pandas reader.
    prefilter = Needs(
        text=(
            words({"open", *PATH_METHODS, *(name.rsplit(".", 1)[-1] for name in FILE_FUNCTIONS)})
            | parts({PANDAS_READERS.rsplit(".", 1)[-1]}),
        )
    )

    def check(self, ctx: Context) -> Iterator[Finding]:
        model = ctx.model
        for site, hot in calls_in_hot_loops(model, does_file_io):
            yield Finding(
                site.node,
                f"`{callee(model, site.node)}` does file I/O {every_step(ctx, hot)}, outside a "
                "cadence guard: load before the loop; write on a cadence",
            )


def does_file_io(model: SemanticModel, site: CallSite) -> bool:
    func = site.node.func
    if isinstance(func, cst.Attribute) and func.attr.value in PATH_METHODS:
        return True
    if builtin(model, site, "open"):
        return True
    qualified = model.qualify(func, site.scope)
    if qualified is None:
        return False
    return qualified in FILE_FUNCTIONS or qualified.startswith(PANDAS_READERS)
