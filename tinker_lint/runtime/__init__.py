"""Runtime evidence for the static findings: the GIL-stall watchdog (docs/watchdog.md) and the
recorder (`tinker_lint.runtime.record`: requests in flight and where the code waits for them).

Light on purpose: it runs inside the user's training process (and from a ``.pth`` hook), so it
imports only the standard library and nothing of the linter (no libcst).
"""

from tinker_lint.runtime.options import Options
from tinker_lint.runtime.watchdog import LABELS, RULES, Watchdog, current, stop, watch

__all__ = ["LABELS", "RULES", "Options", "Watchdog", "current", "stop", "watch"]
