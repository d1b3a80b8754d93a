"""``python -m tinker_lint.watch [watchdog options] SCRIPT [ARGS...]`` (or ``-m MODULE``): run a
training script under the GIL-stall watchdog, as ``pyinstrument script.py`` runs one under its
profiler. Options not given come from ``TINKER_LINT_WATCHDOG_*`` (docs/watchdog.md)."""

from __future__ import annotations

import argparse
import os
import runpy
import sys

from tinker_lint.runtime import watch


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tinker_lint.watch",
        description="Run a Python script or module under the tinker-lint GIL-stall watchdog.",
    )
    p.add_argument("--interval", type=float, help="seconds between loop ticks (0.1)")
    p.add_argument("--threshold", type=float, help="a tick or wake-up this late is a stall (0.25)")
    p.add_argument("--backstop", type=float, help="faulthandler backstop seconds, 0 = off (1.0)")
    p.add_argument("--pyspy", action="store_true", default=None, help="py-spy dump once per stall")
    p.add_argument("--out", help="events file (./tinker_lint_runtime.jsonl)")
    p.add_argument("-m", dest="module", help="run a module, as python -m does")
    p.add_argument("target", nargs=argparse.REMAINDER, help="SCRIPT [ARGS...] (or ARGS for -m)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.module and not args.target:
        parser().error("give a script to run (or -m MODULE)")
    try:
        watch(
            interval=args.interval,
            threshold=args.threshold,
            backstop=args.backstop,
            pyspy=args.pyspy,
            out=args.out,
        )
    except ValueError as error:
        parser().error(str(error))
    if args.module:
        sys.argv = [args.module, *args.target]
        runpy.run_module(args.module, run_name="__main__", alter_sys=True)
    else:
        # Absolute, so its frames' file names are (the watchdog keeps frames under the root).
        script = os.path.abspath(args.target[0])
        sys.argv = [script, *args.target[1:]]
        # As `python script.py` does: the script's directory first on sys.path.
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
