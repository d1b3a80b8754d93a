"""A trace over 100 MB is read line by line in bounded memory (``@pytest.mark.slow``: ~30 s).

Read in a subprocess so that its peak resident size is its own. What it keeps grows with the spans
(about 36 bytes each, in arrays) and the sampling profile's sorted times, not with the bytes read:
its growth over a bare interpreter with the same imports stays below half the file's size, where
``json.load`` of the converted file would need several times the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trace_logs import SAMPLES_PER_STEP, SPANS_PER_STEP, write_big_trace

ROOT = Path(__file__).resolve().parent.parent

BASELINE = """
import json, resource, sys
from pathlib import Path
from tinker_lint.trace.analysis import analyse, read_log_dir
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

PROBE = """
import json, resource, sys
from pathlib import Path
from tinker_lint.trace.analysis import analyse, read_log_dir
logs = read_log_dir(Path(sys.argv[1]))
analysis = analyse(logs)
print(json.dumps({
    "spans": len(logs.trace.spans),
    "repair": [logs.trace.repair.lost_begin, logs.trace.repair.lost_end],
    "coverage": analysis.coverage,
    "sampling": [analysis.sampling.ops, analysis.sampling.max_depth],
    "health": analysis.health,
    "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
"""


@pytest.mark.slow
def test_a_trace_over_100_mb_streams(tmp_path: Path) -> None:
    path = tmp_path / "trace_events.jsonl"
    steps = write_big_trace(path, 100 * 1024 * 1024 + 1)
    size = path.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result = json.loads(done.stdout)
    bare = subprocess.run(
        [sys.executable, "-c", BASELINE], capture_output=True, text=True, env=env, check=True
    )
    growth = (result["max_rss_kb"] - int(bare.stdout)) * 1024
    assert result["spans"] == steps * SPANS_PER_STEP
    assert result["repair"] == [0, 0] and result["health"] == {}
    covered, run = result["coverage"]
    # Each 1 s step has 0.9 s of client spans; the run ends at the last step's 0.9 s.
    assert covered == pytest.approx(0.9 * steps, rel=1e-9)
    assert run == pytest.approx(steps - 0.1, rel=1e-9)
    assert result["sampling"] == [steps * SAMPLES_PER_STEP, SAMPLES_PER_STEP]
    assert growth < size / 2, (growth, size)
