"""Robustness sweep: lint every file of large real corpora in-process and count what comes out.

    PYTHONPATH=. python3 bench/sweep.py                  # stdlib + cookbook + SDK, all rules forced
    PYTHONPATH=. python3 bench/sweep.py --corpus sdk --prefilter   # as the CLI runs (pre-filter on)
    PYTHONPATH=. python3 bench/sweep.py some/dir other/file.py

By default the pre-filter is off: the semantic model and every rule run on every file, whether or not
its text mentions Tinker, so the model is exercised on all of the standard library. The cookbook
(0.6.1) and the SDK (0.38.0) are downloaded once from PyPI (``bench/corpora.py``). Reports files,
findings, TNK000 (internal errors), TNK001 (files CPython does not compile, or that do not decode),
files not analysed (valid Python the engine declined: too large, too deep, libcst cannot parse it),
exceptions that escaped the engine, and time. Exits 1 if any TNK000, any escaped exception, or any TNK001 on a file
CPython compiles (``compile()`` is the oracle), else 0.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import sysconfig
import time
import traceback
from collections.abc import Iterator

from bench.corpora import SDK, cookbook_package, unpacked
from tests.robustness_support import compiles
from tinker_lint.io.config import default_settings
from tinker_lint.run.engine import lint_bytes


def stdlib_dir() -> str:
    return sysconfig.get_paths()["stdlib"]


CORPORA = {
    "stdlib": stdlib_dir,
    # Downloaded once from PyPI (bench/corpora.py): no default names one machine's folder.
    "cookbook": lambda: str(cookbook_package()),
    "sdk": lambda: str(unpacked(SDK) / "tinker"),
}


def python_files(root: str) -> Iterator[str]:
    """Every ``.py``/``.pyi`` file under ``root`` (sorted, symlinks not followed). For the standard
    library, third-party ``site-packages`` is left out: it is not CPython's code."""
    if os.path.isfile(root):
        yield root
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "site-packages")
        for name in sorted(filenames):
            if name.endswith((".py", ".pyi")):
                yield os.path.join(directory, name)


def sweep(paths: list[str], *, prefilter: bool, verbose: bool) -> dict[str, object]:
    settings = default_settings()
    counts: collections.Counter[str] = collections.Counter()
    files = 0
    escaped: list[str] = []
    internal: list[str] = []
    unparsable: collections.Counter[str] = collections.Counter()
    not_analysed: list[str] = []
    slowest: list[tuple[float, str]] = []
    start = time.perf_counter()
    for root in paths:
        for path in python_files(root):
            files += 1
            with open(path, "rb") as handle:
                raw = handle.read()
            began = time.perf_counter()
            try:
                result = lint_bytes(raw, path, settings, prefilter=prefilter)
            except BaseException as error:  # anything escaping the engine is the bug we hunt
                if isinstance(error, KeyboardInterrupt):
                    raise
                escaped.append(f"{path}: {type(error).__name__}: {error}")
                if verbose:
                    traceback.print_exc()
                continue
            slowest.append((time.perf_counter() - began, path))
            not_analysed.extend(w for w in result.warnings if "not analysed" in w)
            for d in result.diagnostics:
                counts[d.code] += 1
                if d.code == "TNK000":
                    internal.append(f"{d.path}:{d.line}:{d.col}: {d.message}")
                elif d.code == "TNK001":
                    unparsable[d.message.split(":")[0]] += 1
                    if compiles(raw):  # a syntax error CPython does not see is our bug
                        internal.append(f"{d.path}:{d.line}:{d.col}: TNK001 on valid Python")
                    if verbose:
                        print(f"{d.path}:{d.line}:{d.col}: TNK001 {d.message}")
    elapsed = time.perf_counter() - start
    slowest.sort(reverse=True)
    return {
        "files": files,
        "findings": sum(n for code, n in counts.items() if code not in ("TNK000", "TNK001")),
        "by_code": dict(sorted(counts.items())),
        "TNK000": counts["TNK000"],
        "TNK001": counts["TNK001"],
        "TNK001_kinds": dict(unparsable),
        "escaped": escaped,
        "internal": internal,
        "not_analysed": not_analysed,
        "seconds": elapsed,
        "slowest": slowest[:5],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or directories (default: the corpora)")
    parser.add_argument("--corpus", choices=[*CORPORA, "all"], action="append")
    parser.add_argument(
        "--prefilter", action="store_true", help="keep the per-rule text pre-filter (as the CLI)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every TNK001")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if args.paths:
        targets = {"paths": args.paths}
    else:
        names = args.corpus or ["all"]
        names = list(CORPORA) if "all" in names else names
        targets = {name: [CORPORA[name]()] for name in names}
    failed = False
    mode = "pre-filter on (as the CLI)" if args.prefilter else "all rules forced on every file"
    print(f"mode: {mode}; python {sys.version.split()[0]}")
    total = collections.Counter()
    for name, paths in targets.items():
        result = sweep(paths, prefilter=args.prefilter, verbose=args.verbose)
        for key in ("files", "findings", "TNK000", "TNK001", "seconds"):
            total[key] += result[key]
        total["escaped"] += len(result["escaped"])
        total["not_analysed"] += len(result["not_analysed"])
        print(
            f"{name:9s} files={result['files']:5d} findings={result['findings']:4d} "
            f"TNK000={result['TNK000']} TNK001={result['TNK001']} "
            f"not-analysed={len(result['not_analysed'])} escaped={len(result['escaped'])} "
            f"time={result['seconds']:.1f}s"
        )
        for line in result["not_analysed"]:
            print(f"          {line}")
        print(f"          by code: {result['by_code']}")
        if result["TNK001_kinds"]:
            print(f"          TNK001: {result['TNK001_kinds']}")
        slow = ", ".join(f"{os.path.basename(p)} {t:.2f}s" for t, p in result["slowest"][:3])
        print(f"          slowest: {slow}")
        for line in [*result["escaped"], *result["internal"]]:
            print(f"  !! {line}")
            failed = True
    if len(targets) > 1:
        print(
            f"{'total':9s} files={total['files']:5d} findings={total['findings']:4d} "
            f"TNK000={total['TNK000']} TNK001={total['TNK001']} "
            f"not-analysed={total['not_analysed']} escaped={total['escaped']} "
            f"time={total['seconds']:.1f}s"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
