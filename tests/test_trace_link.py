"""The seam to the static findings: join key 1, a finding's line at a recorded wait call site."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trace_logs import Loop
from tinker_lint.diagnostics import Diagnostic
from tinker_lint.trace.analysis import analyse, read_log_dir
from tinker_lint.trace.link import WAIT_SITE, link, same_file
from tinker_lint.trace.readers import WaitSite


def finding(path: str, line: int, code: str) -> Diagnostic:
    return Diagnostic(path, line, 5, code, "message")


def test_bubbles_are_charged_to_the_wait_that_saw_the_queue_empty(tmp_path: Path) -> None:
    loop = Loop(4)
    logs = read_log_dir(
        loop.write(tmp_path, capture=False, recorder=True, wait_file="/home/u/proj/train.py")
    )
    analysis = analyse(logs)
    assert logs.runtime is not None and len(logs.runtime.waits) == 8
    findings = [
        finding("train.py", 45, "TNK104"),
        finding("train.py", 42, "TNK101"),
        finding("other/train.py", 42, "TNK101"),  # another file of the same name
        finding("train.py", 50, "TNK201"),  # no wait recorded there
    ]
    linked = link(findings, analysis, logs.runtime.waits)
    assert [(item.finding.code, item.finding.line, item.evidence) for item in linked] == [
        ("TNK101", 42, WAIT_SITE),
        ("TNK104", 45, WAIT_SITE),
    ]
    fwd, optim = linked
    # Four optim_step submits each followed a forward_backward completed during the line-42 wait;
    # three forward_backward submits followed an optim_step completed during the line-45 one.
    assert (fwd.waits, fwd.bubbles) == (4, 4) and (optim.waits, optim.bubbles) == (4, 3)
    assert fwd.wait_seconds == pytest.approx(4 * 0.305) and fwd.turnaround == pytest.approx(0.04)
    assert optim.turnaround == pytest.approx(0.6)
    assert fwd.summary(analysis) == (
        "TNK101 train.py:42: 4 bubble(s) after this wait; 4 wait(s), 1.220 s blocked; client "
        "turnaround 0.040 s; nothing queued 29% of the training window (evidence: recorded wait "
        "call site)"
    )


def test_bubbles_off_the_trace_clock_are_not_charged(tmp_path: Path) -> None:
    # Capture without a clock anchor: the waits (perf_counter) cannot meet the ops (wall clock).
    logs = read_log_dir(Loop(2).write(tmp_path, anchor=False))
    analysis = analyse(logs)
    assert analysis.training is not None and len(analysis.training.bubbles) == 3
    waits = [WaitSite("wait", "train.py", 42, "f", 0.0, 1e12)]
    (linked,) = link([finding("train.py", 42, "TNK101")], analysis, waits)
    assert (linked.waits, linked.bubbles) == (1, 0)


@pytest.mark.parametrize(
    ("recorded", "given", "same"),
    [
        ("/home/u/proj/train.py", "train.py", True),
        ("/home/u/proj/src/train.py", "src/train.py", True),
        ("/home/u/proj/src/train.py", "./src/train.py", True),
        ("/home/u/proj/train.py", "src/train.py", False),
        ("/home/u/proj/mytrain.py", "train.py", False),
    ],
)
def test_same_file(recorded: str, given: str, same: bool) -> None:
    assert same_file(recorded, given) is same
