"""Stacks: live samples, faulthandler dumps, which thread held the GIL, and what a stall was."""

from __future__ import annotations

import linecache
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from types import FrameType

# (file, line, function), innermost first.
Frame = tuple[str, int, str]

INNERMOST_KEPT = 8  # frames kept from the innermost one; frames under the root are always kept
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))
# The watchdog's own frames (its run_forever wrapper, python -m tinker_lint.watch) are not the user's.
_OWN = (_OWN_DIR + os.sep, os.path.join(os.path.dirname(_OWN_DIR), "watch.py"))
_VENDOR = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)

# A thread whose innermost frame is one of these is parked, not holding the GIL.
_PARKED_FUNCTIONS = frozenset(
    {
        "wait",
        "_wait_for_tstate_lock",
        "join",
        "select",
        "poll",
        "epoll",
        "acquire",
        "sleep",
        "result",
        "recv",
        "recv_into",
        "recvfrom",
        "accept",
        "read",
        "readinto",
        "readline",
        "get",
        "_worker",
        "run_forever",
        "_run_once",
    }
)
# A source line that makes a blocking call (the call itself is C, so the line is the innermost frame).
_BLOCKING_LINE = re.compile(
    r"\bsleep\(|\.result\(|\.join\(|\.wait\(|\.acquire\(|\bselect\(|\.recv\w*\(|\.read\w*\(|"
    r"\burlopen\(|\brequests\.\w+\(|\binput\(|\.communicate\(|subprocess\.run\("
)
_SERIALIZATION = re.compile(r"pydantic|model_dump|__repr__|serializ|json", re.IGNORECASE)


def under(path: str, root: str) -> bool:
    """``path`` is the project's own code: under ``root``, not vendored, not the watchdog."""
    return (
        path.startswith(root) and not any(v in path for v in _VENDOR) and not path.startswith(_OWN)
    )


def walk(frame: FrameType | None, root: str) -> tuple[Frame, ...]:
    """The stack from ``frame`` outwards: its innermost frames, then every frame under ``root``
    (a fixed depth from the inside loses the user's frames under deep import chains)."""
    kept: list[Frame] = []
    depth = 0
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        if depth < INNERMOST_KEPT or under(path, root):
            kept.append((path, frame.f_lineno, code.co_name))
        depth += 1
        frame = frame.f_back
    return tuple(kept)


def is_blocking(frame: Frame, root: str) -> bool:
    """The innermost frame is waiting (sleep, a future's result, a lock, I/O), not computing: a
    library's waiting function, or a line that calls one (the call itself is C, so no frame)."""
    path, line, function = frame
    if function in _PARKED_FUNCTIONS and not under(path, root):
        return True
    return bool(_BLOCKING_LINE.search(linecache.getline(path, line)))


def site(stack: tuple[Frame, ...], root: str) -> Frame | None:
    """The innermost frame under ``root`` (the user's line), else the innermost frame."""
    for frame in stack:
        if under(frame[0], root):
            return frame
    return stack[0] if stack else None


def serializing(stack: tuple[Frame, ...]) -> bool:
    return any(_SERIALIZATION.search(f"{path} {function}") for path, _, function in stack[:12])


@dataclass
class ThreadSamples:
    """Stack samples of one thread during one stall: inclusive counts per line."""

    name: str
    count: int = 0
    lines: Counter[Frame] = field(default_factory=Counter)  # inclusive: once per sample
    sites: Counter[Frame] = field(default_factory=Counter)  # the innermost user line
    innermost: Counter[Frame] = field(default_factory=Counter)
    blocking: int = 0  # samples whose innermost frame waits
    serializing: int = 0

    def add(self, stack: tuple[Frame, ...], root: str) -> None:
        if not stack:
            return
        self.count += 1
        self.lines.update(dict.fromkeys(stack, 1))  # innermost first: ties list the callee first
        where = site(stack, root)
        if where is not None:
            self.sites[where] += 1
        self.innermost[stack[0]] += 1
        self.blocking += is_blocking(stack[0], root)
        self.serializing += serializing(stack)


# faulthandler's text: "Thread 0x00007f... (most recent call first):" then '  File "p", line N in f'.
_THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-fA-F]+)")
_FILE = re.compile(r'^  File "(.*)", line (\d+) in (.*)$')


def parse_dump(text: str) -> dict[int, tuple[Frame, ...]]:
    """Thread ident -> stack, innermost first, from faulthandler's dump."""
    threads: dict[int, list[Frame]] = {}
    current: list[Frame] | None = None
    for line in text.splitlines():
        thread = _THREAD.match(line)
        if thread:
            current = threads.setdefault(int(thread.group(1), 16), [])
            continue
        frame = _FILE.match(line)
        if frame and current is not None:
            current.append((frame.group(1), int(frame.group(2)), frame.group(3)))
    return {ident: tuple(stack) for ident, stack in threads.items()}


def holder(
    stacks: dict[int, tuple[Frame, ...]],
    main_ident: int | None,
    exclude: frozenset[int],
    root: str,
) -> int | None:
    """The thread that held the GIL in a dump: one not parked in a wait, the main thread first."""
    running = [
        ident
        for ident, stack in stacks.items()
        if ident not in exclude and stack and not is_blocking(stack[0], root)
    ]
    if main_ident in running:
        return main_ident
    return running[0] if running else None


def where(frame: Frame | None, root: str) -> str:
    """``train.py:42 in step`` (relative to the root when under it)."""
    if frame is None:
        return "an unknown line"
    path, line, function = frame
    if path.startswith(root):
        path = os.path.relpath(path, root)
    return f"{path}:{line} in {function}"
