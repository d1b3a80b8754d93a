"""``tinker-lint trace LOG_PATH``: read what a training run left and say what it cost.

Exit codes, as the linter's: 0 nothing found, 1 something found (more bubbles than
``--max-bubbles``: a training op submitted with none in flight; or more stalls than
``--max-stalls``), 2 bad input (LOG_PATH missing, or holding none of the files) or a request
the logs cannot answer (``--perfetto`` with no trace file, ``--max-stalls`` with no watchdog
records, ``--max-bubbles`` with no training-op completions: a gate on a figure that was not
measured must not pass).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from tinker_lint.trace import readers
from tinker_lint.trace.analysis import Analysis, NoLogs, analyse, read_log_dir
from tinker_lint.trace.link import BadFindings, link, read_findings
from tinker_lint.trace.report import (
    capture_events,
    file_events,
    write_github,
    write_json,
    write_perfetto,
    write_sarif,
    write_text,
)
from tinker_lint.trace.span_index import SourceSpan, source_spans

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"tinker-lint trace: error: {message}\n")
        raise SystemExit(EXIT_ERROR)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count (0, 1, 2...), got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tinker-lint trace",
        description="Read a training run's logs (the cookbook's metrics.jsonl, timing_spans.jsonl, "
        "trace_events.jsonl, capture/*.jsonl, and tinker_lint_runtime.jsonl) and report step time, "
        "coverage, training requests in flight, time with nothing queued and pipeline bubbles.",
        epilog="Exit codes: 0 nothing found, 1 bubbles or stalls found (more than --max-bubbles "
        "or --max-stalls), 2 bad input (or --max-stalls with no watchdog records, --max-bubbles "
        "with no training-op completions: a figure not measured).",
    )
    parser.add_argument("log_path", metavar="LOG_PATH", help="the run's log directory")
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="github: GitHub Actions annotations (bubbles, stalls, linked findings at their "
        "line); sarif: SARIF 2.1.0 for code scanning (the same results)",
    )
    parser.add_argument(
        "--perfetto",
        metavar="FILE",
        help="also write every trace event (trace_events.jsonl, tinker_lint_runtime.jsonl, and "
        "the capture files' requests when a clock anchor places them) into one Chrome-JSON trace "
        "for ui.perfetto.dev, with ids renumbered so none collide",
    )
    parser.add_argument(
        "--findings",
        metavar="FILE",
        help="the output of `tinker-lint --output-format json`: each finding at a wait the "
        "recorder saw (tinker_lint_runtime.jsonl) is printed with the bubbles after that wait, "
        "each on a watchdog stall's stack with the stall, and any other inside a cookbook span "
        "(trace_events.jsonl) with that span's time; the files it names are read from the "
        "current directory",
    )
    parser.add_argument(
        "--max-bubbles",
        type=_count,
        default=None,  # None: not asked; bubbles, when measured, are then held to 0
        metavar="N",
        help="exit 1 only with more than N bubbles (default 0). A pipelined loop still has one "
        "where a step waits for something else: the cookbook's pipelined supervised run shows "
        "one, at its Gantt chart write. Given, and the logs have no training-op completions "
        "(bubbles not measured), exit 2",
    )
    parser.add_argument(
        "--max-stalls",
        type=_count,
        default=None,  # None: not asked; stalls, when measured, are then held to 0
        metavar="N",
        help="exit 1 only with more than N watchdog stalls (default 0); given, and the logs "
        "have no watchdog records (stalls not measured), exit 2",
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    return parser


class _SpanSources:
    """The cookbook span regions of each file a finding names, read (never imported) when join
    key 3 first asks for them. A file that cannot be read is said, not skipped silently."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.read: dict[str, list[SourceSpan]] = {}

    def __call__(self, path: str) -> list[SourceSpan]:
        if path not in self.read:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                self.analysis.not_computable.append(
                    f"cannot read {path} ({error.strerror}): its findings are not matched to the "
                    "cookbook span around their line; run from the directory the linter ran in"
                )
                text = ""
            self.read[path] = source_spans(text)
        return self.read[path]


STALLS_UNMEASURED = (
    "no watchdog records: run with TINKER_LINT_WATCHDOG=1 and its TINKER_LINT_WATCHDOG_OUT in the "
    "log folder"
)
BUBBLES_UNMEASURED = (
    "no training-op completions: capture/train_op.jsonl, or the recorder's spans in "
    "tinker_lint_runtime.jsonl"
)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    log_path = Path(args.log_path)
    try:
        logs = read_log_dir(log_path)
    except NoLogs as error:
        sys.stderr.write(f"tinker-lint trace: error: {error}\n")
        return EXIT_ERROR
    except OSError as error:  # unreadable directory or file
        sys.stderr.write(f"tinker-lint trace: error: cannot read {log_path}: {error.strerror}\n")
        return EXIT_ERROR
    analysis = analyse(logs)
    linked = None
    if args.findings:
        try:
            findings = read_findings(Path(args.findings))
        except BadFindings as error:
            sys.stderr.write(f"tinker-lint trace: error: {error}\n")
            return EXIT_ERROR
        waits = logs.runtime.waits if logs.runtime is not None else []
        # Only a stall that names lines can be linked to a finding.
        stalls = [s for s in logs.runtime.stalls if s.lines] if logs.runtime is not None else []
        if not waits and not stalls:
            analysis.not_computable.append(
                "no recorded wait call sites or watchdog stalls (tinker_lint_runtime.jsonl): "
                "findings are linked only by the cookbook span around their line, if any"
                if logs.trace is not None
                else "no recorded wait call sites or watchdog stalls "
                "(tinker_lint_runtime.jsonl) and no trace_events.jsonl: no finding is linked "
                "to a measured cost"
            )
        linked = link(findings, analysis, waits, stalls, logs.trace, _SpanSources(analysis))
    if args.output_format == "json":
        write_json(analysis, sys.stdout, linked)
    elif args.output_format == "github":
        write_github(analysis, sys.stdout, linked)
    elif args.output_format == "sarif":
        write_sarif(analysis, sys.stdout, linked)
    else:
        write_text(analysis, sys.stdout, linked)
    if args.perfetto:
        sources: list[tuple[str, Iterable[dict[str, Any]]]] = [
            (name, file_events(log_path / name, name))
            for name in (readers.TRACE_EVENTS, readers.RUNTIME)
            if (log_path / name).is_file()
        ]
        captured = capture_events(logs)
        if captured:
            sources.append(
                ("capture (on the trace's clock by the runtime file's anchor)", captured)
            )
        if not sources:
            sys.stderr.write(
                "tinker-lint trace: no trace_events.jsonl or tinker_lint_runtime.jsonl: "
                "nothing to write to --perfetto\n"
            )
            return EXIT_ERROR
        try:
            with open(args.perfetto, "w", encoding="utf-8") as out:
                count = write_perfetto(sources, out)
        except OSError as error:
            sys.stderr.write(
                f"tinker-lint trace: error: cannot write {args.perfetto}: {error.strerror}\n"
            )
            return EXIT_ERROR
        sys.stderr.write(f"tinker-lint trace: wrote {count} events to {args.perfetto}\n")
    # A gate on a figure that was not measured: not a pass (even with --exit-zero, which forgives
    # findings, not a check that could not run).
    gates = (
        ("--max-stalls", args.max_stalls, analysis.stalls, "stalls", STALLS_UNMEASURED),
        ("--max-bubbles", args.max_bubbles, analysis.training, "bubbles", BUBBLES_UNMEASURED),
    )
    for flag, limit, measured, what, why in gates:
        if limit is not None and measured is None:
            sys.stderr.write(
                f"tinker-lint trace: error: {flag} {limit}: {what} were not measured in "
                f"{log_path} ({why}, or leave out {flag})\n"
            )
            return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    bubble_count = len(analysis.training.bubbles) if analysis.training is not None else 0
    stall_count = analysis.stalls.stalls if analysis.stalls is not None else 0
    max_stalls = args.max_stalls if args.max_stalls is not None else 0
    max_bubbles = args.max_bubbles if args.max_bubbles is not None else 0
    if bubble_count > max_bubbles or stall_count > max_stalls:
        return EXIT_FOUND
    return EXIT_CLEAN
