"""The CPU-side costs the TNK4xx messages quote: per-row `datasets` access, per-element tensor loops.

    python bench/torch_loops.py [--venv DIR] [--repeats 7] [--rows 1000] [--sizes 1500 4000]

Needs `torch` and `datasets` (not dependencies of tinker-lint). When either cannot be imported,
the script makes a venv in --venv DIR (default tinker-lint-torchbench in the temporary folder), installs them there
(`torch` from the PyTorch CPU wheel index when that answers, else from PyPI; `datasets` from
PyPI), and runs itself again with that venv's Python. Measures, and prints as one table, each
case against the form the rule's message recommends (its "x" column: how many times slower):

- `datasets` (TNK402): N rows of 512-token lists, saved with `save_to_disk` and read back with
  `load_from_disk` (memory-mapped, as training code reads them): `ds[i]["input_ids"]` per row,
  `ds["input_ids"][i]` per row (the column first: in `datasets` < 4 that materialises the
  whole column on every access), the torch-formatted row, against one batched slice
  `ds[i:i+B]`, `ds.with_format("torch")[i:i+B]`, `ds.select(range(i, i+B))`, and the column
  pulled into a Python list once before the loop;
- per-element tensor loops (TNK404), for each size: `for t in range(len(w)): if w[t] > 0`
  against `torch.nonzero(w > 0)`; `[x.item() for x in t]` against `t.tolist()`; `t[i] = v` for
  each value of a list against one `t[:n] = torch.tensor(values)`, and for a list of positions
  against one indexed assignment `t[positions] = value`;
- loops over a tensor's first dimension (TNK404), for --batch rows of [16, 64] logits: a
  per-row `F.cross_entropy` against one call over the flattened batch, and a per-row
  `log_softmax` + `gather` against the batched one and against gather - `logsumexp`;
- an EMA over 200 parameter tensors of 256 floats (TNK404 under --preview): one `mul_().add_()` per tensor
  against `torch._foreach_mul_` + `_foreach_add_` and `torch._foreach_lerp_`;
- `torch.tensor(values).to("cpu")` against `torch.tensor(values, device="cpu")` (TNK407): only
  the CPU side; the host-to-device copy the rule is about cannot be measured without a GPU;
- GAE over T steps (a recurrence, which TNK404 leaves alone): the loop over tensor elements,
  the same loop over Python floats (`.tolist()` first), and the reverse-cumsum trick, with the
  largest error of each against the loop: the trick is exact only without episode ends, and
  underflows in float32 over long horizons, so it is not a rewrite a linter may suggest.

Each figure is the median of --repeats runs of the whole case. A benchmark, not a test: figures
depend on the machine; `docs/torch-costs.md` records one run.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import venv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
DEFAULT_VENV = Path(tempfile.gettempdir()) / "tinker-lint-torchbench"
TOKENS_PER_ROW = 512


@dataclasses.dataclass(frozen=True)
class Case:
    """One measured way of doing one job; `baseline` marks the form the others are compared to."""

    group: str
    label: str
    seconds: float  # median wall time of one run of the whole case
    items: int  # rows, elements or steps one run handles
    baseline: bool = False
    note: str = ""


def format_table(cases: Sequence[Case]) -> str:
    """The cases as a text table, grouped in order of first appearance, each row's time per
    run and per item, and how many times slower it is per item than its group's baseline."""
    headers = ("case", "ms/run", "us/item", "x", "note")
    rows: list[tuple[str, ...]] = []
    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.group, []).append(case)
    for group, members in groups.items():
        base = next((c for c in members if c.baseline), None)
        rows.append((f"[{group}]", "", "", "", ""))
        for case in members:
            ratio = "-"
            if base and base.seconds > 0 and base.items and case.items:
                # per item: a case timed on a sample of the rows compares like for like
                ratio = f"{(case.seconds / case.items) / (base.seconds / base.items):.1f}"
            per_item = f"{case.seconds / case.items * 1e6:.3f}" if case.items else "-"
            rows.append(
                (
                    "  " + case.label + (" (baseline)" if case.baseline else ""),
                    f"{case.seconds * 1e3:.3f}",
                    per_item,
                    ratio,
                    case.note,
                )
            )
    widths = [max(len(r[i]) for r in (headers, *rows)) for i in range(len(headers))]
    lines = []
    for row in (headers, *rows):
        cells = [
            cell.ljust(width) if i in (0, 4) else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of `repeats` calls of `run`, after one warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- the dependencies, in a venv of the script's own when they are missing ------------------


def _have_deps() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "datasets"))


def _reachable(url: str, timeout: float = 5.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except OSError:
        return False


def _install(python: Path, torch_spec: str) -> None:
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    if _reachable(CPU_INDEX + "/torch/"):
        # the CPU wheel: a tenth of the size of PyPI's, which pulls in the CUDA libraries
        subprocess.run([*pip, "--index-url", CPU_INDEX, torch_spec], check=True)
    else:
        print(f"{CPU_INDEX} does not answer: torch from PyPI", file=sys.stderr)
        subprocess.run([*pip, torch_spec], check=True)
    subprocess.run([*pip, "datasets"], check=True)


def _reexec_in_venv(directory: Path, torch_spec: str) -> None:
    python = directory / "bin" / "python"
    if not python.exists():
        print(f"making a venv in {directory}", file=sys.stderr)
        venv.create(directory, with_pip=True)
    probe = subprocess.run([str(python), "-c", "import torch, datasets"], capture_output=True)
    if probe.returncode != 0:
        _install(python, torch_spec)
    argv = [str(python), str(Path(__file__).resolve()), *sys.argv[1:], "--no-install"]
    os.execv(argv[0], argv)


# --- the measurements (torch and datasets are imported only here) ----------------------------


def bench_datasets(rows: int, batch: int, repeats: int) -> list[Case]:
    import datasets

    datasets.disable_progress_bars()
    group = f"datasets: {rows} rows x {TOKENS_PER_ROW} tokens, batches of {batch}"
    table = {
        "input_ids": [[(r * 31 + t) % 50_000 for t in range(TOKENS_PER_ROW)] for r in range(rows)],
        "label": list(range(rows)),
    }
    starts = range(0, rows, batch)
    with tempfile.TemporaryDirectory() as tmp:
        datasets.Dataset.from_dict(table).save_to_disk(tmp)
        ds = datasets.load_from_disk(tmp)
        ds_torch = ds.with_format("torch")

        def per_row() -> None:
            for i in range(rows):
                ds[i]["input_ids"]

        def per_row_torch() -> None:
            for i in range(rows):
                ds_torch[i]["input_ids"]

        # datasets < 4 turns ds["input_ids"] into the whole column, per access: time it on a
        # sample of rows there, so that the script ends, and say so in the note
        column_rows = rows if int(datasets.__version__.split(".")[0]) >= 4 else min(rows, 20)

        def column_then_row() -> None:
            for i in range(column_rows):
                ds["input_ids"][i]

        def sliced() -> None:
            for i in starts:
                ds[i : i + batch]["input_ids"]

        def sliced_torch() -> None:
            for i in starts:
                ds_torch[i : i + batch]["input_ids"]

        def selected() -> None:
            for i in starts:
                ds.select(range(i, min(i + batch, rows)))["input_ids"]

        def column_once() -> None:
            column = ds[:]["input_ids"]
            for i in range(rows):
                column[i]

        column_note = "" if column_rows == rows else f"first {column_rows} rows only"
        lists = f"{group}, as Python lists"
        torch_format = f'{group}, with_format("torch")'
        return [
            Case(lists, 'ds[i]["input_ids"], per row', median_seconds(per_row, repeats), rows),
            Case(
                lists,
                'ds["input_ids"][i], per row',
                median_seconds(column_then_row, repeats),
                column_rows,
                note=column_note,
            ),
            Case(lists, "ds[i:i+B], per batch", median_seconds(sliced, repeats), rows, True),
            Case(
                lists,
                "ds.select(range(i, i+B)), per batch",
                median_seconds(selected, repeats),
                rows,
            ),
            Case(
                lists,
                'ds[:]["input_ids"] once, then index the list',
                median_seconds(column_once, repeats),
                rows,
            ),
            Case(torch_format, "ds[i], per row", median_seconds(per_row_torch, repeats), rows),
            Case(
                torch_format,
                "ds[i:i+B], per batch",
                median_seconds(sliced_torch, repeats),
                rows,
                True,
            ),
        ]


def bench_tensor_loops(size: int, repeats: int) -> list[Case]:
    import torch

    generator = torch.Generator().manual_seed(size)
    w = torch.randn(size, generator=generator)
    values = [float(v) for v in range(size)]
    positions = list(range(0, size, 3))
    position_tensor = torch.tensor(positions)
    out = torch.zeros(size)

    def branch_per_element() -> list[int]:
        found = []
        for t in range(len(w)):
            if w[t] > 0:  # a 0-d tensor per element, then its truth value
                found.append(t)
        return found

    def nonzero() -> list[int]:
        return torch.nonzero(w > 0).flatten().tolist()

    def item_per_element() -> list[float]:
        return [x.item() for x in w]

    def tolist() -> list[float]:
        return w.tolist()

    def setitem_per_value() -> None:
        for i, v in enumerate(values):
            out[i] = v

    def one_copy() -> None:
        out[:size] = torch.tensor(values)

    def setitem_per_position() -> None:
        for i in positions:
            out[i] = 0.0

    def indexed_assignment() -> None:
        out[position_tensor] = 0.0

    assert branch_per_element() == nonzero()
    assert item_per_element() == tolist()
    n_positions = len(positions)
    pairs = (
        ("keep the positive elements", size, branch_per_element, nonzero),
        ("read every element into Python", size, item_per_element, tolist),
        ("write a list of values into a tensor", size, setitem_per_value, one_copy),
        (
            "write one value at a third of the positions",
            n_positions,
            setitem_per_position,
            indexed_assignment,
        ),
    )
    labels = {
        branch_per_element: "for t in range(len(w)): if w[t] > 0",
        nonzero: "torch.nonzero(w > 0).tolist()",
        item_per_element: "[x.item() for x in t]",
        tolist: "t.tolist()",
        setitem_per_value: "for i, v in enumerate(values): t[i] = v",
        one_copy: "t[:n] = torch.tensor(values)",
        setitem_per_position: "for i in positions: t[i] = 0",
        indexed_assignment: "t[positions] = 0",
    }
    cases = []
    for job, items, loop, vectorized in pairs:
        group = f"{size} elements: {job}"
        cases.append(Case(group, labels[loop], median_seconds(loop, repeats), items))
        cases.append(
            Case(group, labels[vectorized], median_seconds(vectorized, repeats), items, True)
        )
    return cases


def bench_row_loops(rows: int, repeats: int, length: int = 16, vocab: int = 64) -> list[Case]:
    """Loops over a tensor's first dimension (TNK404): a per-row loss and a per-row
    log-softmax over ``rows`` rows of [length, vocab] logits, against one call over the batch."""
    import torch
    import torch.nn.functional as F

    generator = torch.Generator().manual_seed(rows)
    logits = torch.randn(rows, length, vocab, generator=generator)
    labels = torch.randint(vocab, (rows, length), generator=generator)

    def loss_per_row() -> Any:
        losses = [F.cross_entropy(row, target) for row, target in zip(logits, labels, strict=True)]
        return torch.stack(losses).mean()

    def loss_batched() -> Any:
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())

    def logps_per_row() -> Any:
        per_row = []
        for row, target in zip(logits, labels, strict=True):
            per_row.append(torch.gather(row.log_softmax(-1), -1, target[:, None]).squeeze(-1))
        return torch.stack(per_row)

    def logps_batched() -> Any:
        return torch.gather(logits.log_softmax(-1), -1, labels[..., None]).squeeze(-1)

    def logps_gather_logsumexp() -> Any:
        picked = torch.gather(logits, -1, labels[..., None]).squeeze(-1)
        return picked - torch.logsumexp(logits, -1)

    assert torch.allclose(loss_per_row(), loss_batched(), atol=1e-5)
    assert torch.allclose(logps_per_row(), logps_batched(), atol=1e-5)
    assert torch.allclose(logps_gather_logsumexp(), logps_batched(), atol=1e-4)
    shape = f"{rows} rows of [{length}, {vocab}] logits"
    return [
        Case(
            f"{shape}: loss",
            "for row, t in zip(logits, labels): F.cross_entropy(row, t)",
            median_seconds(loss_per_row, repeats),
            rows,
        ),
        Case(
            f"{shape}: loss",
            "F.cross_entropy(logits.flatten(0, 1), labels.flatten())",
            median_seconds(loss_batched, repeats),
            rows,
            True,
        ),
        Case(
            f"{shape}: token log-probs",
            "per row: gather(row.log_softmax(-1), -1, t)",
            median_seconds(logps_per_row, repeats),
            rows,
        ),
        Case(
            f"{shape}: token log-probs",
            "gather(logits.log_softmax(-1), -1, labels)",
            median_seconds(logps_batched, repeats),
            rows,
            True,
        ),
        Case(
            f"{shape}: token log-probs",
            "gather(logits, -1, labels) - logsumexp(logits, -1)",
            median_seconds(logps_gather_logsumexp, repeats),
            rows,
        ),
    ]


def bench_parameter_updates(tensors: int, repeats: int, numel: int = 256) -> list[Case]:
    """An EMA of ``tensors`` parameter tensors (TNK404 under --preview): one loop iteration per
    tensor, against `torch._foreach_mul_` + `_foreach_add_` and `torch._foreach_lerp_`."""
    import torch

    generator = torch.Generator().manual_seed(tensors)
    params = [torch.randn(numel, generator=generator) for _ in range(tensors)]
    ema = [p.clone() for p in params]
    decay = 0.999

    def per_parameter() -> None:
        for e, p in zip(ema, params, strict=True):
            e.mul_(decay).add_(p, alpha=1 - decay)

    def foreach_mul_add() -> None:
        torch._foreach_mul_(ema, decay)
        torch._foreach_add_(ema, params, alpha=1 - decay)

    def foreach_lerp() -> None:
        torch._foreach_lerp_(ema, params, 1 - decay)

    group = f"EMA of {tensors} parameter tensors of {numel} floats"
    return [
        Case(
            group,
            "for e, p in zip(ema, params): e.mul_(d).add_(p, alpha=1 - d)",
            median_seconds(per_parameter, repeats),
            tensors,
        ),
        Case(
            group,
            "torch._foreach_mul_ + torch._foreach_add_",
            median_seconds(foreach_mul_add, repeats),
            tensors,
            True,
        ),
        Case(group, "torch._foreach_lerp_", median_seconds(foreach_lerp, repeats), tensors),
    ]


def bench_built_then_moved(size: int, repeats: int) -> list[Case]:
    import torch

    group = f"tensor built then moved: {size} floats"
    values = [float(v) for v in range(size)]
    note = "CPU to CPU; a GPU copy cannot be measured here"
    return [
        Case(
            group,
            'torch.tensor(list).to("cpu")',
            median_seconds(lambda: torch.tensor(values).to("cpu"), repeats),
            size,
            note=note,
        ),
        Case(
            group,
            'torch.tensor(list, device="cpu")',
            median_seconds(lambda: torch.tensor(values, device="cpu"), repeats),
            size,
            True,
        ),
    ]


def _gae_inputs(steps: int, dones_every: int, dtype: Any) -> tuple[Any, Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(steps)
    rewards = torch.randn(steps, generator=generator, dtype=torch.float64).to(dtype)
    values = torch.randn(steps + 1, generator=generator, dtype=torch.float64).to(dtype)
    dones = torch.zeros(steps, dtype=dtype)
    if dones_every:
        dones[dones_every - 1 :: dones_every] = 1.0
    return rewards, values, dones


def gae_tensor_loop(rewards: Any, values: Any, dones: Any, gamma: float, lam: float) -> Any:
    """The recurrence as written in RL code: one step at a time, on tensor elements."""
    import torch

    advantages = torch.zeros_like(rewards)
    gae = 0.0
    for t in reversed(range(len(rewards))):
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * values[t + 1] * not_done - values[t]
        gae = delta + gamma * lam * not_done * gae
        advantages[t] = gae
    return advantages


def gae_list_loop(rewards: Any, values: Any, dones: Any, gamma: float, lam: float) -> Any:
    """The same recurrence over Python floats: `.tolist()` once, one tensor at the end."""
    import torch

    r, v, d = rewards.tolist(), values.tolist(), dones.tolist()
    advantages = [0.0] * len(r)
    gae = 0.0
    for t in reversed(range(len(r))):
        not_done = 1.0 - d[t]
        delta = r[t] + gamma * v[t + 1] * not_done - v[t]
        gae = delta + gamma * lam * not_done * gae
        advantages[t] = gae
    return torch.tensor(advantages, dtype=rewards.dtype)


def gae_reverse_cumsum(rewards: Any, values: Any, dones: Any, gamma: float, lam: float) -> Any:
    """A_t = sum_k c^(k-t) delta_k = (reverse cumsum of c^k delta_k) / c^t, c = gamma * lam.

    Ignores the resets at episode ends (`dones`), which make the discount vary; c^t underflows
    in float32 after a few hundred steps."""
    import torch

    c = gamma * lam
    delta = rewards + gamma * values[1:] * (1.0 - dones) - values[:-1]
    powers = c ** torch.arange(len(rewards), dtype=rewards.dtype)
    return torch.flip(torch.cumsum(torch.flip(delta * powers, [0]), 0), [0]) / powers


def bench_gae(steps: int, repeats: int) -> list[Case]:
    import torch

    gamma, lam = 0.99, 0.95
    cases = []
    # episodes of 200 steps at the default 2000 steps; shorter runs still see ten episode ends
    ends_every = min(200, max(2, steps // 10))
    for dtype, dones_every, name in (
        (torch.float64, 0, "float64, no episode ends"),
        (torch.float64, ends_every, f"float64, an episode end every {ends_every} steps"),
        (torch.float32, 0, "float32, no episode ends"),
    ):
        group = f"GAE (a recurrence) over {steps} steps, {name}"
        inputs = _gae_inputs(steps, dones_every, dtype)
        reference = gae_tensor_loop(*inputs, gamma, lam)
        for label, way, baseline in (
            ("loop over tensor elements", gae_tensor_loop, False),
            ("the same loop over .tolist() floats", gae_list_loop, True),
            ("reverse cumsum / c^t (vectorized)", gae_reverse_cumsum, False),
        ):
            result = way(*inputs, gamma, lam)
            error = (result - reference).abs().max().item()
            seconds = median_seconds(functools.partial(way, *inputs, gamma, lam), repeats)
            cases.append(Case(group, label, seconds, steps, baseline, f"max error {error:.2g}"))
    return cases


def machine_info() -> str:
    import datasets
    import pyarrow
    import torch

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{when}; Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"datasets {datasets.__version__}, pyarrow {pyarrow.__version__}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="venv to make when needed")
    parser.add_argument(
        "--torch", dest="torch_spec", default="torch", help="what to pip-install for torch"
    )
    parser.add_argument("--no-install", action="store_true", help="fail when torch is missing")
    parser.add_argument("--repeats", type=int, default=7, help="runs per case (the median)")
    parser.add_argument("--rows", type=int, default=1000, help="dataset rows")
    parser.add_argument("--batch", type=int, default=32, help="rows per batched read")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1500, 4000], help="elements")
    parser.add_argument("--steps", type=int, default=2000, help="GAE steps")
    args = parser.parse_args(argv)
    if not _have_deps():
        if args.no_install:
            parser.error("torch and datasets are not importable (and --no-install)")
        _reexec_in_venv(args.venv, args.torch_spec)
    print(machine_info())
    print(f"median of {args.repeats} runs per case; x = times slower than the group's baseline")
    cases = bench_datasets(args.rows, args.batch, args.repeats)
    for size in args.sizes:
        cases += bench_tensor_loops(size, args.repeats)
    cases += bench_row_loops(args.batch, args.repeats)
    cases += bench_parameter_updates(200, args.repeats)
    cases += bench_built_then_moved(2048, args.repeats)
    cases += bench_gae(args.steps, args.repeats)
    print(format_table(cases))


if __name__ == "__main__":
    main()
