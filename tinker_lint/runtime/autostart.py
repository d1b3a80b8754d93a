"""``TINKER_LINT_WATCHDOG=1``: started from ``tinker_lint_watchdog.pth`` (installed with the
package, next to it in site-packages), which imports this module only when the variable is set.

A ``.pth`` line runs in every interpreter of the environment, so a bad option must not stop the
user's program: it is said on one line and the watchdog stays off.
"""

from __future__ import annotations

import sys


def start() -> None:
    from tinker_lint.runtime.watchdog import watch

    try:
        watch()
    except Exception as error:
        print(
            f"tinker-lint: TINKER_LINT_WATCHDOG is set but the watchdog is off: {error}",
            file=sys.stderr,
        )


start()
