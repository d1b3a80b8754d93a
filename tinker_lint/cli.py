"""The ``tinker-lint`` command.

Exit codes, as ruff's: 0 nothing found (with ``--fix``: nothing left), 1 something found (with
``--diff``: something to fix), 2 a usage or configuration error.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from tinker_lint import __version__
from tinker_lint.codes import ALL_CODES
from tinker_lint.guard import analysis_running
from tinker_lint.io.config import ConfigError, _codes, find_pyproject, load_settings, parse_version
from tinker_lint.io.files import MAX_READ_BYTES
from tinker_lint.io.settings import Settings, char_count
from tinker_lint.io.terminal import printable
from tinker_lint.report import REPORTERS
from tinker_lint.report.colour import Style, wants_colour
from tinker_lint.report.text import write_fixes_applied, write_text
from tinker_lint.run.resolve import Overrides, SettingsResolver
from tinker_lint.run.runner import FixMode, Run, run_paths, run_source
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
        usage="tinker-lint [check] [options] [paths ...]",
        description="Find slow or hanging Tinker training loops, statically. `tinker-lint check "
        "PATH` and `tinker-lint PATH` are the same; a path named like a subcommand needs `check` "
        "(docs/configuration.md#subcommands-and-paths).",
        epilog="`tinker-lint rule CODE` explains a rule; `tinker-lint rule --all` lists them; "
        "`tinker-lint doctor` checks the installed environment for known-bad versions; "
        "`tinker-lint trace LOG_PATH` reports what a run's logs say the loop cost; "
        "`tinker-lint server` is a Language Server for editors (docs/server.md); "
        "`tinker-lint clean` removes the results cache.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        help="files or directories (default: .); `-` reads one file from stdin (for editors)",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the name of the file read from stdin: it is reported under this name, its "
        "configuration is looked up from there, and it is read as Python unless the name is a "
        "dependency file's; with --fix, the fixed text goes to stdout and the findings to stderr",
    )
    parser.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TNK1)")
    parser.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    parser.add_argument(
        "--extend-select",
        help="codes or prefixes to enable on top of select; an opt-in rule (TNK403; `tinker-lint "
        "rule --all` marks them) runs only when its own code is named here or in --select",
    )
    parser.add_argument(
        "--preview",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also report the less certain cases some rules keep for preview (default: `preview` "
        "in the configuration, else off); it turns no opt-in rule on",
    )
    parser.add_argument(
        "--tinker-version",
        help="tinker version the project targets (gates TNK105/TNK106 and their fixes); default: "
        "`tinker-version` in the configuration, else the project's pin or lock, else the installed "
        "tinker, else the newest known (and those fixes are unsafe)",
    )
    parser.add_argument(
        "--output-format",
        choices=sorted(REPORTERS),
        default="text",
        help="text (or full, ruff's name for it): each finding with its source lines (the "
        "default); concise: one line each",
    )
    parser.add_argument(
        "--max-file-chars",
        type=char_count,
        metavar="N",
        help="Python files longer than this are checked for syntax only and reported as TNK003 "
        "(default: 1,000,000; 0: no limit)",
    )
    parser.add_argument(
        "--config",
        help="pyproject.toml to read [tool.tinker-lint] from, for every file (default: the "
        "nearest one above each file)",
    )
    parser.add_argument("--isolated", action="store_true", help="ignore configuration files")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the findings and errors only: no summary, no progress, no warnings",
    )
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
        "--add-noqa",
        action="store_true",
        help="add a `# noqa: CODES` to each line with a finding (into its `# noqa` if it has one), "
        "as ruff's --add-noqa; nothing else is reported",
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
    overrides = Overrides(
        codes["select"],
        codes["ignore"],
        codes["extend_select"],
        version,
        max_file_chars=args.max_file_chars,
        preview=args.preview,
    )
    return SettingsResolver(config=config, isolated=args.isolated, overrides=overrides)


def resolve_settings(args: argparse.Namespace) -> Settings:
    """The settings of the first path: where the results cache lives (each file is linted with its
    own, ``settings_resolver``)."""
    return settings_resolver(args).for_path(args.paths[0] if args.paths else ".")


def _rule(argv: list[str]) -> int:
    from tinker_lint.docs import rule_command

    return rule_command(argv)


def _doctor(argv: list[str]) -> int:
    from tinker_lint.doctor import main as doctor_main

    return doctor_main(argv)


def _trace(argv: list[str]) -> int:
    from tinker_lint.trace.command import main as trace_main

    return trace_main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:
        return check(argv[1:])
    subcommand = SUBCOMMANDS.get(argv[0]) if argv else None
    if subcommand is None:
        return check(argv)  # `tinker-lint PATH...`, as before `check` existed
    if argv[1:2] == ["--"]:
        return subcommand(argv[2:])  # `tinker-lint clean --`: the subcommand, whatever is here
    if os.path.lexists(argv[0]) and _reads_as_check(argv):
        word = argv[0]
        sys.stderr.write(
            f"tinker-lint: error: `{word}` is both a subcommand and a path here: write "
            f"`tinker-lint check {word}` to check the path, or `tinker-lint {word} --` to run "
            "the subcommand\n"
        )
        return EXIT_ERROR
    return subcommand(argv[1:])


def _reads_as_check(argv: list[str]) -> bool:
    """Whether ``argv`` is also a valid ``tinker-lint check`` command line: options it takes and
    paths that exist. A subcommand's own option (``server --stdio``) or argument (``rule TNK101``,
    not a path) says which is meant; only when both readings stand is the word ambiguous."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return False  # a question about the subcommand
    parser = build_parser()

    def refuse(message: str) -> NoReturn:
        raise ValueError(message)

    parser.error = refuse  # type: ignore[method-assign]
    try:
        args, unknown = parser.parse_known_args(argv)
    except ValueError:
        return False
    return not unknown and all(path == "-" or os.path.lexists(path) for path in args.paths)


def check(argv: list[str]) -> int:
    """``tinker-lint check [PATH...]`` (and ``tinker-lint PATH...``): lint."""
    parser = build_parser()
    args = parser.parse_args(argv)
    stdin = "-" in args.paths or (args.stdin_filename is not None and not args.paths)
    if args.add_noqa and (args.fix or args.diff or stdin):
        sys.stderr.write("tinker-lint: error: --add-noqa cannot be used with --fix, --diff or -\n")
        return EXIT_ERROR
    if stdin and args.paths not in ([], ["-"]):
        sys.stderr.write("tinker-lint: error: `-` (stdin) cannot be given with other paths\n")
        return EXIT_ERROR
    # The configuration is looked up from the first path: for stdin, the name it is given.
    args.paths = [args.stdin_filename or "."] if stdin else args.paths or ["."]
    started = time.monotonic()
    try:
        resolver = settings_resolver(args)
        # The first path's settings say where the cache lives; every file has its own settings.
        settings = resolver.for_path(args.paths[0])
    except ConfigError as error:
        sys.stderr.write(f"tinker-lint: error: {error}\n")
        return EXIT_ERROR
    except OSError as error:  # the path itself, or a directory above it, cannot be looked into
        return _cannot_read(error, args.paths[0])
    if not any(settings.is_enabled(code) for code in ALL_CODES):
        where = f" ({settings.config_path})" if settings.config_path else ""
        sys.stderr.write(
            "tinker-lint: error: no rule selected: the select and ignore settings"
            f"{where} leave nothing to check\n"
        )
        return EXIT_ERROR
    fix = FixMode(write=not args.diff, unsafe_fixes=args.unsafe_fixes)
    if stdin:
        return _stdin(args, settings, fix if args.fix or args.diff else None)
    cache = None
    if not args.no_cache:
        from tinker_lint.run.cache import Cache, default_cache_dir

        cache = Cache(args.cache_dir or default_cache_dir(settings), settings)
    progress = ProgressLine(sys.stderr, started, enabled=not args.quiet)
    try:
        run = run_paths(
            args.paths,
            settings,
            force_exclude=args.force_exclude,
            cache=cache,
            jobs=args.jobs,
            fix=fix if args.fix or args.diff else None,
            settings_for=resolver.for_path,
            progress=progress,
        )
    except ConfigError as error:  # a configuration file under a directory walked
        sys.stderr.write(f"tinker-lint: error: {error}\n")
        return EXIT_ERROR
    finally:
        progress.close()
    if _warn(run, quiet=args.quiet):
        return EXIT_ERROR
    if args.add_noqa:
        from tinker_lint.run.add_noqa import add_noqa_command

        return add_noqa_command(run, sys.stderr)
    if args.diff:
        return _diff(args, run)
    _report(args, run)
    if args.fix and args.show_fixes and run.fixed:
        write_fixes_applied(run.fixed, sys.stdout)
    if run.diagnostics and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_CLEAN


def _server(argv: list[str]) -> int:
    """``tinker-lint server``: the Language Server (docs/server.md), from the ``server`` extra."""
    import importlib.util

    missing = [name for name in ("pygls", "lsprotocol") if importlib.util.find_spec(name) is None]
    if missing:
        sys.stderr.write(
            f"tinker-lint: error: `tinker-lint server` needs {' and '.join(missing)}: "
            "install tinker-lint[server] (pip install 'tinker-lint[server]')\n"
        )
        return EXIT_ERROR
    from tinker_lint.server.app import main as server_main

    return server_main(argv)


def _cannot_read(error: OSError, path: str) -> int:
    """A usage error, not an internal one: the path named cannot be looked into (its directory,
    or one above it where the configuration is looked for, has no read or search permission)."""
    where = f"{error.filename}: " if error.filename and error.filename != path else ""
    reason = error.strerror or str(error)
    sys.stderr.write(f"tinker-lint: error: {path}: cannot be read ({where}{reason})\n")
    return EXIT_ERROR


# What ``-`` reads at most: what a source file may hold (``io.files``); ``< /dev/zero`` must end
# with a message, not read gigabytes.
STDIN_LIMIT = MAX_READ_BYTES


def _stdin(args: argparse.Namespace, settings: Settings, fix: FixMode | None) -> int:
    """``-``: one file from stdin, as ruff reads it for editors. With ``--fix`` stdout is the fixed
    text (all of it, fixed or not) and the report goes to stderr; ``--diff`` prints the patch."""
    from tinker_lint.io.files import is_force_excluded

    raw = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    path = os.path.normpath(args.stdin_filename) if args.stdin_filename else "-"
    if len(raw) > STDIN_LIMIT:
        sys.stderr.write(
            f"tinker-lint: error: {path}: more than {STDIN_LIMIT // 2**20} MiB on stdin, which no "
            "source file is; name the file instead\n"
        )
        return EXIT_ERROR
    if args.force_exclude and is_force_excluded(path, settings.exclude, settings.project_root):
        run = Run(source=raw)  # excluded: nothing checked, and --fix gives the text back as it was
    else:
        run = run_source(raw, path, settings, fix=fix)
    _warn(run, quiet=args.quiet)
    if args.diff:
        return _diff(args, run)
    report_to = sys.stdout
    if fix is not None:
        # The bytes as they are (encoding, BOM, line ends kept), the fixed ones if any.
        fixed = run.source if run.source is not None else raw
        sys.stdout.flush()
        if hasattr(sys.stdout, "buffer"):
            sys.stdout.buffer.write(fixed)
        else:  # a text-only stream (an embedding that replaced sys.stdout)
            sys.stdout.write(_text(fixed))
        sys.stdout.flush()
        report_to = sys.stderr
    _report(args, run, out=report_to, sources={path: _text(run.source or raw)})
    if run.diagnostics and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_CLEAN


def _text(raw: bytes) -> str:
    from tinker_lint.io.files import DecodeError, decode_source

    try:
        return decode_source(raw).text
    except DecodeError:
        return ""


# A run that takes longer than this shows a progress line (on a terminal only).
PROGRESS_AFTER_SECONDS = 2.0


class ProgressLine:
    """``tinker-lint: 120/2,736 files checked`` on stderr, rewritten in place, once the run has
    taken ``PROGRESS_AFTER_SECONDS``; only when stderr is a terminal (a log or a pipe gets
    nothing), and erased at the end, so that the report is all that stays."""

    def __init__(self, stream: TextIO, started: float, *, enabled: bool = True) -> None:
        self.stream = stream
        self.started = started
        self.enabled = enabled and stream.isatty()
        self.shown = False
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.started < PROGRESS_AFTER_SECONDS:
            return
        if self.shown and now - self.last < 0.1 and done < total:
            return  # at most ten a second
        self.last = now
        self.stream.write(f"\rtinker-lint: {done:,}/{total:,} files checked")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _clean(argv: list[str]) -> int:
    """``tinker-lint clean``: remove the results cache of the project here, as ``ruff clean``."""
    parser = argparse.ArgumentParser(
        prog="tinker-lint clean", description="Remove the results cache (.tinker_lint_cache)."
    )
    parser.add_argument("--cache-dir", metavar="DIR", help="the cache to remove")
    args = parser.parse_args(argv)
    from tinker_lint.run.cache import Refused, default_cache_dir
    from tinker_lint.run.cache import clean as clean_cache

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
    except Refused as why:  # a link where the cache would be: never removed through
        sys.stderr.write(f"tinker-lint: warning: {printable(str(directory))}: not removed: {why}\n")
        return EXIT_CLEAN
    except OSError as error:
        sys.stderr.write(
            f"tinker-lint: error: cannot remove {printable(str(directory))}: {printable(str(error))}\n"
        )
        return EXIT_ERROR
    shown = printable(str(directory))
    sys.stdout.write(f"Removed {shown}\n" if removed else f"No cache at {shown}\n")
    return EXIT_CLEAN


def _warn(run: Run, *, quiet: bool = False) -> bool:
    """Print the warnings (not with ``--quiet``); True if nothing was checked because no path
    named could be (a missing path, a broken symbolic link, a directory that cannot be listed): a
    usage error, printed whatever ``--quiet`` says."""
    for warning in () if quiet else run.warnings:
        # A warning names a file, and may come from the cache: neither may drive the terminal.
        sys.stderr.write(f"tinker-lint: warning: {printable(warning)}\n")
    if run.unchecked and run.files == 0:
        named = ", ".join(printable(path) for path, _ in run.unchecked)
        sys.stderr.write(f"tinker-lint: error: nothing was checked: {named} cannot be read\n")
        return True
    return False


def _report(
    args: argparse.Namespace,
    run: Run,
    *,
    out: TextIO | None = None,
    sources: dict[str, str] | None = None,
) -> None:
    out = out or sys.stdout
    diagnostics = run.diagnostics
    if args.statistics:
        from tinker_lint.report.statistics import write_statistics  # needs the rules

        write_statistics(diagnostics, out, as_json=args.output_format == "json")
        return
    if args.output_format in ("text", "full", "concise"):
        write_text(
            diagnostics,
            out,
            files=run.files,
            fixed=len(run.fixed),
            unsafe_fixes=args.unsafe_fixes,
            full=args.output_format != "concise",
            sources=sources,
            style=Style(wants_colour(out)),
            summary=not args.quiet,
        )
    elif args.output_format == "sarif":
        REPORTERS["sarif"](diagnostics, out, files=run.files, warnings=run.warnings)
    else:
        REPORTERS[args.output_format](diagnostics, out, files=run.files)


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


# ``tinker-lint WORD ...``: each subcommand but ``check`` (the lint itself, ``check``).
SUBCOMMANDS: dict[str, Callable[[list[str]], int]] = {
    "rule": _rule,
    "doctor": _doctor,
    "clean": _clean,
    "trace": _trace,
    "server": _server,
}


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
        # The process ends: its last collection (when the interpreter shuts down) need not walk
        # what the run kept (the project index's trees): about 0.4 s of CPU on the cookbook.
        # Everything is still freed as the modules are torn down.
        gc.freeze()
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
        import traceback

        frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        at = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
        sys.stderr.write(
            f"tinker-lint: error: internal error ({type(error).__name__}: {error}{at}); "
            "please report it (TINKER_LINT_DEBUG=1 shows the traceback)\n"
        )
        return EXIT_ERROR
