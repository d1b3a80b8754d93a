"""The ``tinker-lint`` command.

Exit codes, as ruff's: 0 nothing found (with ``--fix``: nothing left), 1 something found (with
``--diff``: something to fix), 2 a usage or configuration error.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from tinker_lint import __version__
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.guard import analysis_running
from tinker_lint.io.config import ConfigError, _codes, find_pyproject, load_settings, parse_version
from tinker_lint.io.settings import Settings
from tinker_lint.report import REPORTERS
from tinker_lint.report.text import write_fixes_applied, write_text
from tinker_lint.run.cache import Cache, default_cache_dir
from tinker_lint.run.cache import clean as clean_cache
from tinker_lint.run.resolve import Overrides, SettingsResolver
from tinker_lint.run.runner import FixMode, Run, run_paths
from tinker_lint.run.runner import lint_paths as lint_paths  # importable from here, as before

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its message short
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tinker-lint: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tinker-lint",
        description="Find slow or hanging Tinker training loops, statically.",
        epilog="`tinker-lint rule CODE` explains a rule; `tinker-lint rule --all` lists them; "
        "`tinker-lint doctor` checks the installed environment for known-bad versions; "
        "`tinker-lint clean` removes the results cache.",
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    parser.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TNK1)")
    parser.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    parser.add_argument("--extend-select", help="codes or prefixes to enable on top of select")
    parser.add_argument(
        "--tinker-version",
        help="tinker version the project targets (gates TNK105/TNK106 and their fixes); default: "
        "`tinker-version` in the configuration, else the project's pin or lock, else the installed "
        "tinker, else the newest known (and those fixes are unsafe)",
    )
    parser.add_argument(
        "--output-format", choices=sorted(REPORTERS), default="text", help="output format"
    )
    parser.add_argument(
        "--config",
        help="pyproject.toml to read [tool.tinker-lint] from, for every file (default: the "
        "nearest one above each file)",
    )
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    parser.add_argument(
        "--statistics", action="store_true", help="count the findings per code instead of listing"
    )
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply `exclude` to files named on the command line too (for pre-commit)",
    )
    parser.add_argument(
        "--fix", action="store_true", help="apply the safe fixes, then report what remains"
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply (with --fix/--diff) and offer the fixes that may change behaviour",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff and write nothing; exit 1 if there is anything "
        "to fix",
    )
    parser.add_argument(
        "--show-fixes", action="store_true", help="with --fix, list the fixes applied per file"
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the results cache"
    )
    parser.add_argument(
        "--cache-dir",
        help="where the results cache lives (default: .tinker_lint_cache in the project root, "
        "else in the current directory)",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        help="processes to lint with (default: one per usable core; 1: this process only)",
    )
    parser.add_argument("--version", action="version", version=f"tinker-lint {__version__}")
    return parser


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of processes, got {value!r}")
    return jobs


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def settings_resolver(args: argparse.Namespace) -> SettingsResolver:
    """Each file's settings (``run.resolve``): its nearest configuration, or ``--config``'s for
    every file, or none (``--isolated``); the flags over it. Raises ``ConfigError`` for a bad flag
    or a missing ``--config`` file; a bad configuration file, when a file under it is reached."""
    config = None
    if args.config and not args.isolated:
        config = Path(args.config)
        if not config.is_file():
            raise ConfigError(f"{args.config}: no such configuration file")
    codes: dict[str, tuple[str, ...] | None] = {}
    for flag in ("select", "ignore", "extend_select"):
        value = _split(getattr(args, flag))
        codes[flag] = None
        if value is not None:
            codes[flag] = _codes(value, f"--{flag.replace('_', '-')}", "command line")
    version = None
    if args.tinker_version:
        version = parse_version(args.tinker_version, "--tinker-version")
    overrides = Overrides(codes["select"], codes["ignore"], codes["extend_select"], version)
    return SettingsResolver(config=config, isolated=args.isolated, overrides=overrides)


def resolve_settings(args: argparse.Namespace) -> Settings:
    """The settings of the first path: where the results cache lives (each file is linted with its
    own, ``settings_resolver``)."""
    return settings_resolver(args).for_path(args.paths[0] if args.paths else ".")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["rule"]:
        from tinker_lint.docs import rule_command

        return rule_command(argv[1:])
    if argv[:1] == ["doctor"]:
        from tinker_lint.doctor import main as doctor_main

        return doctor_main(argv[1:])
    if argv[:1] == ["clean"]:
        return _clean(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        resolver = settings_resolver(args)
        # The first path's settings say where the cache lives; every file has its own settings.
        settings = resolver.for_path(args.paths[0] if args.paths else ".")
        cache = None
        if not args.no_cache:
            cache = Cache(args.cache_dir or default_cache_dir(settings), settings)
        fix = FixMode(write=not args.diff, unsafe_fixes=args.unsafe_fixes)
        run = run_paths(
            args.paths,
            settings,
            force_exclude=args.force_exclude,
            cache=cache,
            jobs=args.jobs,
            fix=fix if args.fix or args.diff else None,
            settings_for=resolver.for_path,
        )
    except ConfigError as error:
        sys.stderr.write(f"tinker-lint: error: {error}\n")
        return EXIT_ERROR
    if _warn(run.warnings, run.files):
        return EXIT_ERROR
    if args.diff:
        return _diff(args, run)
    _report(args, run.diagnostics, run.files, len(run.fixed))
    if args.fix and args.show_fixes and run.fixed:
        write_fixes_applied(run.fixed, sys.stdout)
    if run.diagnostics and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_CLEAN


def _clean(argv: list[str]) -> int:
    """``tinker-lint clean``: remove the results cache of the project here, as ``ruff clean``."""
    parser = argparse.ArgumentParser(
        prog="tinker-lint clean", description="Remove the results cache (.tinker_lint_cache)."
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="the cache to remove")
    args = parser.parse_args(argv)
    if args.cache_dir:
        directory = Path(args.cache_dir)
    else:
        try:
            settings = load_settings(find_pyproject(Path.cwd()))
        except ConfigError:
            settings = load_settings(None)
        directory = default_cache_dir(settings)
    try:
        removed = clean_cache(directory)
    except OSError as error:
        sys.stderr.write(f"tinker-lint: error: cannot remove {directory}: {error}\n")
        return EXIT_ERROR
    sys.stdout.write(f"Removed {directory}\n" if removed else f"No cache at {directory}\n")
    return EXIT_CLEAN


def _warn(warnings: list[str], files: int) -> bool:
    """Print the warnings; True if nothing at all could be found to check (a usage error)."""
    for warning in warnings:
        sys.stderr.write(f"tinker-lint: warning: {warning}\n")
    return any(w.endswith("no such file or directory") for w in warnings) and files == 0


def _report(
    args: argparse.Namespace, diagnostics: list[Diagnostic], files: int, fixed: int = 0
) -> None:
    if args.statistics:
        from tinker_lint.report.statistics import write_statistics  # needs the rules

        write_statistics(diagnostics, sys.stdout, as_json=args.output_format == "json")
        return
    if args.output_format in ("text", "concise"):
        write_text(
            diagnostics, sys.stdout, files=files, fixed=fixed, unsafe_fixes=args.unsafe_fixes
        )
    else:
        REPORTERS[args.output_format](diagnostics, sys.stdout, files=files)


def _diff(args: argparse.Namespace, run: Run) -> int:
    """``--diff``: the diffs on stdout (a patch, nothing else), exit 1 if there is anything to fix.
    As ruff's ``--diff``, the Python findings without a fix are not listed; the dependency files'
    findings, which never have one (a diff cannot show them), are listed on stderr and count."""
    sys.stdout.writelines(run.diffs)
    for d in run.dependency_diagnostics:
        sys.stderr.write(f"{d.path}:{d.line}:{d.col}: {d.code} {d.message}\n")
    fixed = len(run.fixed)
    noun = "error" if fixed == 1 else "errors"
    sys.stderr.write(f"Would fix {fixed} {noun}.\n" if fixed else "No errors would be fixed.\n")
    if (run.diffs or run.dependency_diagnostics) and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_CLEAN


def entry() -> int:
    """The console script: ``main`` with no traceback, ever. An interrupted run exits 130, a
    closed pipe (``tinker-lint . | head``) ends quietly, and an error that escaped every other
    guard is one line on stderr and exit 2 (``TINKER_LINT_DEBUG=1`` shows the traceback)."""
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not valid UTF-8 (or an ASCII-only terminal) must not stop the output.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        code = main()
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        sys.stderr.write("tinker-lint: interrupted\n")
        if analysis_running():
            # The analysis thread is inside libcst's native parser: letting the interpreter
            # finalize under it aborts the process (SIGABRT). Leave at once instead.
            sys.stderr.flush()
            os._exit(130)
        return 130
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so the flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FOUND
    except Exception as error:
        if os.environ.get("TINKER_LINT_DEBUG"):
            raise
        frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        at = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
        sys.stderr.write(
            f"tinker-lint: error: internal error ({type(error).__name__}: {error}{at}); "
            "please report it (TINKER_LINT_DEBUG=1 shows the traceback)\n"
        )
        return EXIT_ERROR
