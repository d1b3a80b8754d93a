"""``python -m tinker_lint.watch [watchdog options] SCRIPT [ARGS...]`` (or ``-m MODULE``): run a
training script under the GIL-stall watchdog, as ``pyinstrument script.py`` runs one under its
profiler. Options not given come from ``TINKER_LINT_WATCHDOG_*`` (docs/watchdog.md).

The program runs as ``python SCRIPT ARGS`` (or ``python -m MODULE ARGS``) would run it: ``python
-m tinker_lint.watch`` puts the working directory first on ``sys.path``, where ``python SCRIPT``
puts the script's folder; left there, a ``json.py`` in the working directory was imported in place
of the standard library's, by the watchdog and by the script. So that entry is taken off before
anything is imported, and replaced by the script's folder (by the working directory again for
``-m MODULE``); ``sys.argv[0]`` is the script as given, ``__file__`` its absolute path, and the
script's code runs in a ``__main__`` module of its own, from this module's top level (above its
frames in ``inspect.stack()``: only this module's and the two of ``python -m``'s runpy).
"""

from __future__ import annotations

import os
import sys

# The working directory ``python -m`` put first (None: run otherwise, or with ``-P``): taken off
# before the imports below (argparse, the watchdog's json, ...), which must be the library's.
_CWD: str | None = None
if __name__ == "__main__" and sys.path and sys.path[0] == os.getcwd():
    _CWD = sys.path.pop(0)

import argparse  # noqa: E402
import builtins  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import runpy  # noqa: E402
import types  # noqa: E402
from importlib.machinery import ModuleSpec, SourceFileLoader  # noqa: E402

from tinker_lint.runtime import watch  # noqa: E402


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


def prepare(argv: list[str] | None = None) -> tuple[types.CodeType, dict[str, object]] | None:
    """Start the watchdog, and make ready to run the program: its code and the globals of its
    ``__main__`` module (installed as ``sys.modules["__main__"]``, with ``sys.argv`` and
    ``sys.path[0]`` as ``python SCRIPT`` or ``python -m MODULE`` sets them). None: it was run
    already (by runpy: a folder, a zip, a module without plain code)."""
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
        # As `python -m MODULE`: the working directory first on sys.path (where it was), argv[0]
        # the module's file (run_module sets it).
        if _CWD is not None:
            sys.path.insert(0, _CWD)
        sys.argv = [args.module, *args.target]
        found = _module_code(args.module)
        if found is None:  # not found, or not plain code: runpy says why, or runs it
            runpy.run_module(args.module, run_name="__main__", alter_sys=True)
            return None
        spec, code = found
        sys.argv[0] = str(spec.origin)
        return code, _main_module(
            __file__=spec.origin,
            __cached__=spec.cached,
            __loader__=spec.loader,
            __package__=spec.parent,
            __spec__=spec,
        )
    given, rest = args.target[0], args.target[1:]
    sys.argv = [given, *rest]  # the script as given, as `python SCRIPT` leaves it
    if os.path.isdir(given) or given.endswith(".pyc") or _is_zip(given):
        # A folder or a zip with a __main__.py (run_path puts it first on sys.path, as python
        # does; relative, where python's is absolute), or compiled code.
        runpy.run_path(given, run_name="__main__")
        return None
    if not getattr(sys.flags, "safe_path", False):  # `python -P SCRIPT` adds no folder
        # The folder CPython gives (``sys.path[0]`` of ``python SCRIPT``: links resolved).
        sys.path.insert(0, os.path.dirname(os.path.realpath(given)))
    # Absolute, as ``__file__`` of ``python SCRIPT`` is (and the watchdog keeps frames by their
    # file names under the root).
    path = os.path.abspath(given)
    with io.open_code(path) as handle:
        source = handle.read()
    code = compile(source, path, "exec", dont_inherit=True)
    loader = SourceFileLoader("__main__", path)
    return code, _main_module(
        __file__=path, __cached__=None, __loader__=loader, __package__=None, __spec__=None
    )


def _main_module(**attributes: object) -> dict[str, object]:
    """The globals of a new ``__main__`` module (``sys.modules["__main__"]`` from now on)."""
    module = types.ModuleType("__main__")
    module.__dict__.update(attributes, __builtins__=builtins)
    sys.modules["__main__"] = module
    return module.__dict__


def _module_code(name: str) -> tuple[ModuleSpec, types.CodeType] | None:
    """The spec and code ``python -m NAME`` runs (a package's ``__main__``), when it is found
    and has code; else None."""
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(f"{name}.__main__")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "get_code"):
            return None
        code = spec.loader.get_code(spec.name)
    except Exception:  # runpy's own lookup raises what python -m says
        return None
    return (spec, code) if code is not None else None


def _is_zip(path: str) -> bool:
    import zipfile

    return not path.endswith((".py", ".pyw")) and os.path.isfile(path) and zipfile.is_zipfile(path)


def main(argv: list[str] | None = None) -> int:
    """Run the program under the watchdog (``python -m`` runs it from the top level below, one
    frame fewer)."""
    script = prepare(argv)
    if script is not None:
        exec(script[0], script[1])
    return 0


if __name__ == "__main__":
    _script = prepare()
    if _script is not None:
        exec(_script[0], _script[1])
        del _script
