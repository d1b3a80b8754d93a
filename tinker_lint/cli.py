"""The ``tinker-lint`` command.

Exit codes, as ruff's: 0 nothing found, 1 something found, 2 a usage or configuration error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from tinker_lint import __version__
from tinker_lint.cache import Cache, default_cache_dir
from tinker_lint.io.config import ConfigError, _codes, find_pyproject, load_settings, parse_version
from tinker_lint.report import REPORTERS
from tinker_lint.runner import lint_paths
from tinker_lint.settings import Settings

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; keep its message short
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tinker-lint: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tinker-lint",
        description="Find slow or hanging Tinker training loops, statically.",
        epilog="`tinker-lint rule CODE` explains a rule; `tinker-lint rule --all` lists them; "
        "`tinker-lint doctor` checks the installed environment for known-bad versions.",
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    parser.add_argument("--select", help="comma-separated codes or prefixes to enable (e.g. TNK1)")
    parser.add_argument("--ignore", help="comma-separated codes or prefixes to disable")
    parser.add_argument("--extend-select", help="codes or prefixes to enable on top of select")
    parser.add_argument(
        "--tinker-version",
        help="tinker version the project targets (gates TNK105/TNK106); default: the installed "
        "tinker, else the newest known",
    )
    parser.add_argument(
        "--output-format", choices=sorted(REPORTERS), default="text", help="output format"
    )
    parser.add_argument("--config", help="pyproject.toml to read [tool.tinker-lint] from")
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


def resolve_settings(args: argparse.Namespace) -> Settings:
    if args.isolated:
        settings = load_settings(None)
    elif args.config:
        config = Path(args.config)
        if not config.is_file():
            raise ConfigError(f"{args.config}: no such configuration file")
        settings = load_settings(config)
    else:
        settings = load_settings(find_pyproject(Path(args.paths[0] if args.paths else ".")))
    changes: dict[str, object] = {}
    for flag in ("select", "ignore", "extend_select"):
        value = _split(getattr(args, flag))
        if value is not None:
            changes[flag] = _codes(value, f"--{flag.replace('_', '-')}", "command line")
    if args.tinker_version:
        changes["tinker_version"] = parse_version(args.tinker_version, "--tinker-version")
        changes["tinker_version_source"] = "--tinker-version"
    return replace(settings, **changes) if changes else settings


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["rule"]:
        from tinker_lint.docs import rule_command

        return rule_command(argv[1:])
    if argv[:1] == ["doctor"]:
        from tinker_lint.doctor import main as doctor_main

        return doctor_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = resolve_settings(args)
    except ConfigError as error:
        sys.stderr.write(f"tinker-lint: error: {error}\n")
        return EXIT_ERROR
    cache = None
    if not args.no_cache:
        cache = Cache(args.cache_dir or default_cache_dir(settings), settings)
    diagnostics, files, warnings = lint_paths(
        args.paths, settings, force_exclude=args.force_exclude, cache=cache, jobs=args.jobs
    )
    for warning in warnings:
        sys.stderr.write(f"tinker-lint: warning: {warning}\n")
    if any(w.endswith("no such file or directory") for w in warnings) and files == 0:
        return EXIT_ERROR
    if args.statistics:
        from tinker_lint.report.statistics import write_statistics

        write_statistics(diagnostics, sys.stdout, as_json=args.output_format == "json")
    else:
        REPORTERS[args.output_format](diagnostics, sys.stdout, files=files)
    if diagnostics and not args.exit_zero:
        return EXIT_FOUND
    return EXIT_CLEAN
