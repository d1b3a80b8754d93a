"""A copy of tinker-cookbook with Tinker snippets seeded into its functions: the rule patterns
inserted by a seeded, deterministic generator, so a project-wide run has helpers that wait called
across modules, in chains longer than the project index follows (``MAX_DEPTH``) and in import
cycles (issue 29: a file's findings must not depend on which other files are in the run).

    python3 bench/seed_snippets.py OUT [--cookbook DIR] [--seed 29]    # prints OUT

What is seeded, into each module picked (``random.Random(seed)``, files in sorted order):

* helpers appended at the end of the module: ``_tl_wait_N`` waits for a ``forward_backward``;
  ``_tl_chain_N`` either waits itself (a chain's end) or calls the ``_tl_chain_M`` of one or two
  other seeded modules, imported at the end of the module (``from pkg.mod import _tl_chain_M as
  _tl_next_N_K``): the modules' edges are random, so there are chains longer than ``MAX_DEPTH``,
  diamonds and import cycles;
* at the top of some of its functions' bodies: in an ``async def``, a call of a chain (a blocking
  wait in async code when the chain ends in a wait, TNK104) or a direct ``.result()``; in a
  ``def``, a training loop calling a chain (or ``_tl_wait_N``) before ``optim_step`` (TNK101),
  sometimes with per-step CPU work (a tokenizer call, ``json.dumps``).

Every file is parsed again after seeding; one whose seeded text does not parse is copied as it was.
"""

from __future__ import annotations

import argparse
import ast
import random
import shutil
import sys
from pathlib import Path

SEED = 29
# The fraction of modules that get helpers, and of their functions that get a call site.
MODULE_SHARE = 0.6
FUNCTION_SHARE = 0.35
END_SHARE = 0.25  # of seeded modules whose chain ends in a wait of its own

_MARK = "# --- seeded by bench/seed_snippets.py ---"


def module_name(path: Path, package: Path) -> str:
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def seed_tree(package: Path, out: Path, seed: int = SEED) -> Path:
    """Copy ``package`` (tinker-cookbook's ``tinker_cookbook`` directory) into ``out`` with the
    snippets seeded; returns the copy's package directory. ``out`` gets a ``pyproject.toml`` (the
    project root). The same package and seed give the same bytes."""
    target = out / package.name
    if target.exists():
        shutil.rmtree(target)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(package, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (out / "pyproject.toml").write_text('[project]\nname = "seeded-cookbook"\n', encoding="utf-8")
    rng = random.Random(seed)
    files = sorted(target.rglob("*.py"), key=lambda p: p.relative_to(target).as_posix())
    texts = {path: path.read_text(encoding="utf-8") for path in files}
    parsed = [path for path in files if _parses(texts[path])]
    seeded = [path for path in parsed if rng.random() < MODULE_SHARE]
    numbers = {path: i for i, path in enumerate(seeded)}
    for path in seeded:
        n = numbers[path]
        ends = rng.random() < END_SHARE
        others = [p for p in seeded if p != path]
        nexts = [] if ends or not others else rng.sample(others, rng.choice((1, 1, 1, 2)))
        helpers = _helpers(n, ends, [(module_name(p, target), numbers[p]) for p in nexts])
        text = _seed_functions(texts[path], n, rng)
        new = text.rstrip("\n") + "\n\n\n" + helpers
        if _parses(new):
            path.write_text(new, encoding="utf-8")
    return target


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _helpers(n: int, ends: bool, nexts: list[tuple[str, int]]) -> str:
    lines = [
        _MARK,
        f"def _tl_wait_{n}(training_client, batch):",
        '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()',
        "",
        "",
        f"def _tl_chain_{n}(training_client, batch):",
    ]
    if ends:
        lines.append(
            '    return training_client.forward_backward(batch, loss_fn="cross_entropy").result()'
        )
    else:
        for k, _ in enumerate(nexts):
            lines.append(f"    _tl_next_{n}_{k}(training_client, batch)")
        lines.append("    return None")
    lines.append("")
    for k, (module, m) in enumerate(nexts):
        lines.append(f"from {module} import _tl_chain_{m} as _tl_next_{n}_{k}  # noqa: E402")
    return "\n".join(lines) + "\n"


def _seed_functions(text: str, n: int, rng: random.Random) -> str:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []  # (0-based line, text)
    functions = [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    functions.sort(key=lambda f: (f.lineno, f.col_offset))
    for function in functions:
        if rng.random() >= FUNCTION_SHARE:
            continue
        body = function.body
        first = body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            if len(body) < 2:
                continue
            first = body[1]
        if first.lineno <= function.lineno or first.lineno - 1 >= len(lines):
            continue  # a body on the def's line
        line = lines[first.lineno - 1]
        indent = line[: len(line) - len(line.lstrip())]
        if len(indent) != first.col_offset or "\t" in indent:
            continue
        choice = rng.random()
        if isinstance(function, ast.AsyncFunctionDef):
            if choice < 0.7:
                snippet = [f"_tl_chain_{n}(training_client, None)"]
            else:
                snippet = [
                    '_tl_out = training_client.forward_backward([], loss_fn="cross_entropy")',
                    "_tl_out.result()",
                ]
        else:
            helper = f"_tl_chain_{n}" if choice < 0.75 else f"_tl_wait_{n}"
            snippet = [
                "for _tl_batch in _tl_batches:",
                f"    {helper}(training_client, _tl_batch)",
            ]
            if rng.random() < 0.3:
                snippet.append("    _tl_ids = tokenizer.encode(str(_tl_batch))")
            snippet.append("    training_client.optim_step(adam_params)")
        inserts.append((first.lineno - 1, "".join(f"{indent}{s}\n" for s in snippet)))
    for index, block in sorted(inserts, reverse=True):
        lines.insert(index, block)
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cookbook", type=Path, help="tinker_cookbook's package directory")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    package = args.cookbook
    if package is None:
        sys.path.insert(0, str(Path(__file__).parent))
        import corpora

        package = corpora.unpacked(corpora.COOKBOOK) / "tinker_cookbook"
    print(seed_tree(package, args.out, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
