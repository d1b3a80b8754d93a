"""What keeps one odd file from crashing or hanging a run.

Two guards, both measured on the inputs in ``tests/test_robustness_inputs.py``:

- ``python_verdict``: CPython's own parser (through ``symtable``, which builds no Python objects)
  judges the text first. What it rejects, including nesting too deep for it to compile (more than
  200 brackets, 100 indents, or a tree deeper than its recursion limit allows), is reported as such
  and never reaches libcst, whose native parser needs seconds for a few hundred nested brackets and
  overflows the C stack (a segmentation fault, not an exception) at about 1,500.
- ``run_deep``: libcst's parser and visitors, and the model's walks, recurse once or more per level
  of the tree, and some trees CPython accepts are far deeper in libcst than in CPython's own tree (a
  chain of 10,000 ``or``: flat for CPython, 10,000 levels for libcst, which then crashes on the
  main thread's 8 MB stack). The analysis therefore runs on a thread with a large stack and a higher
  recursion limit, where such files are analysed or end in a ``RecursionError`` that is reported.
"""

from __future__ import annotations

import symtable
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

# Virtual memory only: pages are committed as the stack grows. 256 MB held a 1 MB file of one
# 200,000-term ``or`` chain (libcst then raises RecursionError); 8 MB crashed at 10,000 terms.
DEEP_STACK_BYTES = 256 * 1024 * 1024
DEEP_RECURSION_LIMIT = 30_000

T = TypeVar("T")


@dataclass(frozen=True)
class SyntaxProblem:
    """Why CPython would not compile a file, where (1-based line and column)."""

    message: str
    line: int = 1
    col: int = 1


def python_verdict(text: str, path: str) -> SyntaxProblem | None:
    """None if CPython compiles ``text`` (to the symbol table stage), else why not."""
    null = text.find("\x00")
    if null >= 0:
        line = text.count("\n", 0, null) + 1
        col = null - (text.rfind("\n", 0, null) + 1) + 1
        return SyntaxProblem("The file contains a null byte: it is not Python source", line, col)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours
            symtable.symtable(text, path, "exec")
    except SyntaxError as error:  # IndentationError and TabError included
        message = f"{type(error).__name__}: {error.msg}"
        return SyntaxProblem(message, error.lineno or 1, error.offset or 1)
    except RecursionError:
        return SyntaxProblem(
            "Nested too deeply for Python to compile (its recursion limit is exceeded)"
        )
    except MemoryError:
        return SyntaxProblem(
            "Too complex for Python's parser (its stack overflows): nested too deeply"
        )
    except ValueError as error:  # older Pythons: "source code string cannot contain null bytes"
        return SyntaxProblem(f"Not Python source: {error}")
    return None


_THREAD_NAME = "tinker-lint-analysis"
_limit_lock = threading.Lock()
_deep_calls = 0  # analyses under way on deep-stack threads
_saved_limit = 0


def analysis_running() -> bool:
    """Whether an analysis thread is still at work (after an interrupt left it behind). Counted,
    not asked of the thread: on Python 3.11 an interrupted ``join`` marks it stopped while it
    runs on."""
    return _deep_calls > 0


def _raise_limit() -> None:
    global _deep_calls, _saved_limit
    with _limit_lock:
        if _deep_calls == 0:
            _saved_limit = sys.getrecursionlimit()
            if _saved_limit < DEEP_RECURSION_LIMIT:
                sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        _deep_calls += 1


def _restore_limit() -> None:
    global _deep_calls
    with _limit_lock:
        _deep_calls -= 1
        if _deep_calls == 0 and sys.getrecursionlimit() == DEEP_RECURSION_LIMIT:
            sys.setrecursionlimit(_saved_limit)


def run_deep(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` on a thread with a large stack and a raised recursion limit; its result
    or its exception. Runs in this thread if no such thread can be started."""
    outcome: list[object] = []
    failure: list[BaseException] = []

    def target() -> None:
        _raise_limit()
        try:
            outcome.append(function(*args))
        except BaseException as error:  # handed to the caller as is
            failure.append(error)
        finally:
            _restore_limit()

    try:
        previous = threading.stack_size(DEEP_STACK_BYTES)
    except (ValueError, RuntimeError):  # a platform without settable stacks
        return function(*args)
    try:
        thread = threading.Thread(target=target, name=_THREAD_NAME, daemon=True)
        thread.start()
    except RuntimeError:  # no memory for the stack
        return function(*args)
    finally:
        threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]  # type: ignore[return-value]
