"""Join key 3: the cookbook span whose source holds a finding's line, and its cost in the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trace_logs import Loop
from tinker_lint.cli import main
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.report.json import to_json
from tinker_lint.trace.analysis import analyse, read_log_dir
from tinker_lint.trace.link import TRACED_SPAN, WAIT_SITE, link
from tinker_lint.trace.span_index import SourceSpan, innermost, source_spans

SOURCE = """\
import tinker_cookbook.utils.trace as tr
from tinker_cookbook.utils import trace
from tinker_cookbook.utils.trace import scope_span_sync as timed


@trace.scope
async def train_step(batch):
    async with trace.scope_span("wait_fwd"):
        fwd = await submit(batch)  # line 9
    with timed("compute_metrics"):
        log(fwd)  # line 11


@tr.scope
def evaluate(batch):
    with timed("compute_metrics"):
        log(batch)  # line 17
    with timed(name_of(batch)):
        log(batch)  # line 19: a computed name is no span the index can name


def helper():
    with timed("compute_metrics"):
        log(1)  # line 24: no scoped function around it
"""

OWN_SCOPE = """\
from mylib import scope, scope_span


@scope
def train_step(batch):
    with scope_span("compute_metrics"):
        log(batch)
"""


def test_the_index_names_each_span_and_the_span_it_opens_in() -> None:
    assert source_spans(SOURCE) == [
        SourceSpan("train_step", None, 7, 11),
        SourceSpan("wait_fwd", "train_step", 8, 9),
        SourceSpan("compute_metrics", "train_step", 10, 11),
        SourceSpan("evaluate", None, 15, 19),
        SourceSpan("compute_metrics", "evaluate", 16, 17),
        SourceSpan("compute_metrics", None, 23, 24),
    ]


def test_innermost_region_of_a_line() -> None:
    spans = source_spans(SOURCE)
    assert innermost(spans, 9) == SourceSpan("wait_fwd", "train_step", 8, 9)
    assert innermost(spans, 7) == SourceSpan("train_step", None, 7, 11)
    assert innermost(spans, 19) == SourceSpan("evaluate", None, 15, 19)
    assert innermost(spans, 1) is None


@pytest.mark.parametrize("text", [OWN_SCOPE, "def f(:\n", ""])
def test_no_span_without_the_cookbook_s_tracing_or_a_tree(text: str) -> None:
    assert source_spans(text) == []


def finding(line: int, code: str) -> Diagnostic:
    return Diagnostic("train.py", line, 9, code, "message")


def test_findings_in_a_traced_span_are_charged_with_its_instances_and_bubbles(
    tmp_path: Path,
) -> None:
    # The hand-made loop's trace: train_step > get_batch, wait_fwd, wait_optim, compute_metrics
    # per step; forward_backward completes inside wait_fwd, and optim_step's submit follows it
    # into an empty queue (4 bubbles), as a TNK101 finding at line 9 would explain.
    logs = read_log_dir(Loop(4).write(tmp_path / "logs"))
    analysis = analyse(logs)
    sources = {"train.py": source_spans(SOURCE)}.__getitem__
    findings = [finding(9, "TNK101"), finding(11, "TNK201"), finding(17, "TNK201")]
    linked = link(findings, analysis, (), (), logs.trace, sources)
    assert [(item.finding.line, item.evidence, item.span) for item in linked] == [
        (9, TRACED_SPAN, "train_step>wait_fwd"),
        (11, TRACED_SPAN, "train_step>compute_metrics"),
    ]  # line 17's compute_metrics opens inside evaluate, which never ran
    wait, metrics = linked
    assert (wait.span_instances, wait.bubbles) == (4, 4)
    assert wait.span_seconds == pytest.approx(4 * 0.305)
    assert wait.turnaround == pytest.approx(4 * 0.01, abs=1e-5)  # capture is on the wall clock
    assert (metrics.span_instances, metrics.bubbles) == (4, 0)
    assert metrics.span_seconds == pytest.approx(4 * 0.095)
    assert wait.summary(analysis) == (
        "TNK101 train.py:9: inside span `train_step>wait_fwd`: 4 instance(s), 1.220 s (51% of "
        "the run); 4 bubble(s) after an op completed inside it; nothing queued 29% of the "
        "training window (evidence: inside a traced span (coarse: the findings in it share its "
        "cost))"
    )


def test_a_span_with_no_parent_in_the_source_takes_every_instance_of_its_name(
    tmp_path: Path,
) -> None:
    logs = read_log_dir(Loop(3).write(tmp_path / "logs"))
    sources = {"train.py": source_spans(SOURCE)}.__getitem__
    (item,) = link([finding(24, "TNK201")], analyse(logs), (), (), logs.trace, sources)
    assert (item.span, item.span_instances) == ("compute_metrics", 3)


def test_an_exact_key_wins_over_the_span(tmp_path: Path) -> None:
    # The hand-made recorder's wait at train.py:42, and a traced block said to hold that line.
    log_dir = Loop(2).write(tmp_path / "logs", capture=False, recorder=True, wait_file="train.py")
    logs = read_log_dir(log_dir)
    assert logs.runtime is not None
    sources = {"train.py": [SourceSpan("wait_fwd", None, 40, 43)]}.__getitem__
    (item,) = link(
        [finding(42, "TNK101")], analyse(logs), logs.runtime.waits, (), logs.trace, sources
    )
    assert (item.evidence, item.span, item.waits) == (WAIT_SITE, None, 2)


def test_the_command_reads_the_finding_s_file_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Loop(2).write(tmp_path / "logs")
    (tmp_path / "train.py").write_text(SOURCE)
    findings = [finding(9, "TNK101"), Diagnostic("gone.py", 3, 1, "TNK201", "message")]
    (tmp_path / "findings.json").write_text(json.dumps([to_json(item) for item in findings]))
    monkeypatch.chdir(tmp_path)
    code = main(["trace", "logs", "--findings", "findings.json", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1  # the loop's bubbles
    assert [(x["code"], x["row"], x["span"]) for x in report["linked"]] == [
        ("TNK101", 9, "train_step>wait_fwd")
    ]
    assert (
        "cannot read gone.py (No such file or directory): its findings are not matched to the "
        "cookbook span around their line; run from the directory the linter ran in"
    ) in report["not_computable"]
