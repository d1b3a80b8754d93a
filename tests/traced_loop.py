"""A serialized loop under the real cookbook tracing and nothing else (no recorder, no watchdog):
what `tinker-lint trace --findings` can link by the span->source index alone (join key 3).

    python -m tests.traced_loop LOG_DIR      (tinker-cookbook on the path)

The requests go to the fake in-process server of ``tests.runtime_scenarios`` on the real SDK loop
thread. The cookbook times training ops at submission only (spec D3): the trace shows the spans,
not the bubbles, so the findings in ``train_step``'s ``train`` block are charged with its time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tinker_cookbook.utils import trace

from tests.runtime_scenarios import STEPS, install_fake_server


@trace.scope
def train_step(tc: Any) -> None:
    with trace.scope_span_sync("train"):
        tc.forward_backward([], "cross_entropy").result()  # wait: traced-fwd
        tc.optim_step(None).result()  # wait: traced-optim


def main() -> None:
    log_dir = Path(sys.argv[1])
    log_dir.mkdir(parents=True, exist_ok=True)
    tc = install_fake_server()
    trace.trace_init(output_file=str(log_dir / "trace_events.jsonl"))
    for _ in range(STEPS):
        train_step(tc)
    trace.trace_shutdown()


if __name__ == "__main__":
    main()
