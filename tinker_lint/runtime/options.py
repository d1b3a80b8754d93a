"""The watchdog's options: keyword arguments, else ``TINKER_LINT_WATCHDOG_*`` variables, else defaults."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV_PREFIX = "TINKER_LINT_WATCHDOG"
DEFAULT_OUT = "tinker_lint_runtime.jsonl"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True)
class Options:
    """What the watchdog measures and where it writes (docs/watchdog.md, "Options")."""

    interval: float = 0.1  # seconds between ticks posted to each loop
    threshold: float = 0.25  # a tick or a wake-up this late opens a stall
    backstop: float = 1.0  # faulthandler dump after this long without a re-arm; 0 = off
    pyspy: bool = False  # run `py-spy dump` once per stall when py-spy is on PATH
    out: str = DEFAULT_OUT  # the JSONL events file (appended to)
    root: str = field(default_factory=os.getcwd)  # frames under it are kept on every sample
    sample_interval: float = 0.01  # stack samples while a stall is open
    summary: bool = True  # print the exit summary to stderr

    def __post_init__(self) -> None:
        if not self.interval > 0:
            raise ValueError(f"interval must be above 0 s, not {self.interval}")
        # Every Python thread gives the GIL up every switch interval (5 ms): a threshold near it
        # flags ordinary hand-offs as stalls.
        floor = 4 * sys.getswitchinterval()
        if not self.threshold >= floor:
            raise ValueError(
                f"threshold must be at least {floor:.3f} s (4x sys.getswitchinterval()), "
                f"not {self.threshold}"
            )
        if self.backstop < 0:
            raise ValueError(f"backstop must be 0 (off) or above, not {self.backstop}")
        if not self.sample_interval > 0:
            raise ValueError(f"sample_interval must be above 0 s, not {self.sample_interval}")


def _float(env: Mapping[str, str], name: str) -> float | None:
    text = env.get(f"{ENV_PREFIX}_{name}", "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}_{name}={text!r} is not a number of seconds") from None


def _bool(env: Mapping[str, str], name: str) -> bool | None:
    text = env.get(f"{ENV_PREFIX}_{name}", "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return None if not text else False
    raise ValueError(f"{ENV_PREFIX}_{name}={text!r}: use 1 or 0")


def options_from(env: Mapping[str, str] | None = None, **given: object) -> Options:
    """Options from keyword arguments (``None`` = not given), then ``env``, then the defaults."""
    env = os.environ if env is None else env
    found: dict[str, object] = {}
    for name in ("interval", "threshold", "backstop"):
        value = _float(env, name.upper())
        if value is not None:
            found[name] = value
    pyspy = _bool(env, "PYSPY")
    if pyspy is not None:
        found["pyspy"] = pyspy
    out = env.get(f"{ENV_PREFIX}_OUT", "").strip()
    if out:
        found["out"] = out
    found.update({k: v for k, v in given.items() if v is not None})
    return Options(**found)  # type: ignore[arg-type]
