"""Does what the server keeps from one lint to the next change any finding? Chains of random
edits of real files, each edited text linted through the server's ``Linter`` (with everything
kept per buffer: ``incremental/buffers.py``) and compared with a fresh whole lint of the same text
(``lint_text(..., reuse_parse=False)``: nothing kept, nothing taken over).

    python3 bench/edit_parity.py [--root DIR] [--stride N] [--edits K] [--seed S] [--only SUBSTR]

Defaults to every file of tinker-cookbook 0.6.1, downloaded once (``bench/corpora.py``; 8 edits each:
about a minute);
``--root`` any directory of Python files (the torchval copies, a pinned corpus).

Prints each difference (file, edit, what differs) and a count; exit 1 when any differ.
Edits (each applied to the previous text, as typing does): duplicate a line, delete a line, swap
two adjacent lines, insert a line copied from elsewhere in the file (reindented), rename an
identifier on a line, insert ``x = 1`` at a line's indent, append ``.result()`` to a call.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import cookbook_package  # noqa: E402
from tinker_lint.diagnostics import Diagnostic  # noqa: E402  (this checkout's)
from tinker_lint.run.engine import lint_text  # noqa: E402
from tinker_lint.server.lint import Linter  # noqa: E402

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def edit(text: str, rng: random.Random) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if len(lines) < 3:
        return text + "x = 1\n", "append"
    i = rng.randrange(1, len(lines) - 1)
    kind = rng.choice(["dup", "del", "swap", "copy", "rename", "assign", "result", "dup", "copy"])
    line = lines[i]
    if kind == "dup":
        lines.insert(i, line)
    elif kind == "del":
        del lines[i]
    elif kind == "swap":
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == "copy":
        other = lines[rng.randrange(len(lines))]
        lines.insert(i, _indent(line) + other.lstrip())
    elif kind == "rename":
        names = _IDENT.findall(line)
        if names:
            old = rng.choice(names)
            lines[i] = re.sub(rf"\b{re.escape(old)}\b", old + "_x", line, count=1)
    elif kind == "assign":
        lines.insert(i, _indent(line) + "x = 1\n")
    elif kind == "result":
        j = line.rfind(")")
        if j >= 0:
            lines[i] = line[: j + 1] + ".result()" + line[j + 1 :]
    return "".join(lines), f"{kind}@{i + 1}"


def key(d: Diagnostic) -> tuple[object, ...]:  # everything a client sees of a diagnostic
    fix = None
    if d.fix is not None:
        fix = (d.fix.applicability, d.fix.message, tuple(d.fix.edits))
    return (d.path, d.line, d.col, d.end_line, d.end_col, d.code, d.message, fix)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--root", type=Path, help="default: tinker-cookbook 0.6.1's package, downloaded once"
    )
    parser.add_argument("--stride", type=int, default=1, help="every Nth file")
    parser.add_argument("--edits", type=int, default=8, help="edits per file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="a substring of the paths to take")
    args = parser.parse_args()
    root = args.root if args.root is not None else cookbook_package()
    files = sorted(p for p in root.rglob("*.py") if args.only in str(p))[:: args.stride]
    linter = Linter()
    differ = total = 0
    started = time.perf_counter()
    for number, path in enumerate(files):
        rng = random.Random(f"{args.seed}:{path.name}:{number}")
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        name = str(path)
        linter.set_buffer(name, text)
        linter.lint(name, text)
        for _ in range(args.edits):
            text, what = edit(text, rng)
            linter.set_buffer(name, text)
            served = linter.lint(name, text)
            if served.settings is None:
                continue
            fresh = lint_text(text, name, served.settings, project=linter.index, reuse_parse=False)
            total += 1
            a = sorted(map(key, served.diagnostics))
            b = sorted(map(key, fresh.diagnostics))
            if a != b or served.warnings[: len(fresh.warnings)] != fresh.warnings:
                differ += 1
                print(f"DIFF {path.relative_to(args.root)} {what}")
                for x in sorted(set(a) - set(b)):
                    print("  server only:", x[1:7])
                for x in sorted(set(b) - set(a)):
                    print("  fresh only: ", x[1:7])
        linter.set_buffer(name, None)
    took = time.perf_counter() - started
    print(f"{differ} of {total} edited texts differ ({len(files)} files, {took:.0f} s)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
