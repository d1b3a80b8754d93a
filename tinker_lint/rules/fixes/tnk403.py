"""TNK403's fix: pass ``non_blocking=True`` to a host-to-device copy of a loader batch.

Why it is safe: a CPU-to-GPU copy with ``non_blocking=True`` is ordered on the current stream
before every kernel queued after it, so the step reads the copied values whatever the source's
memory (PyTorch's "non_blocking and pin_memory" tutorial: pinned, the copy overlaps; pageable, the
driver stages it and the call still returns). What it must not do is have the *source* written
before the copy ran: a DataLoader batch is a fresh tensor each step, nothing writes it. When the
loop writes the source in place after the copy (a preallocated staging tensor, ``x.copy_(...)``,
``x[...] = ...``), the copy could read the new values: the fix is unsafe then.
"""

from __future__ import annotations

import libcst as cst

from tinker_lint.fix.plan import SAFE, UNSAFE, FixPlan

TITLE = "Pass `non_blocking=True` to the host-to-device copy"


def plan_non_blocking(call: cst.Call, written_after: str | None) -> FixPlan:
    """``x.to(device)`` -> ``x.to(device, non_blocking=True)``, ``x.cuda()`` ->
    ``x.cuda(non_blocking=True)``; ``written_after``: the in-place write of the source later in
    the loop that makes it unsafe, if any."""
    keyword = cst.Arg(
        value=cst.Name("True"),
        keyword=cst.Name("non_blocking"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )
    args = list(call.args)
    if args:
        last = args[-1]
        # The new argument takes the last one's comma (a trailing comma stays trailing).
        keyword = keyword.with_changes(comma=last.comma)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    changed = call.with_changes(args=[*args, keyword])
    if written_after is None:
        return FixPlan(TITLE, SAFE, ((call, changed),))
    return FixPlan(
        TITLE,
        UNSAFE,
        ((call, changed),),
        f"the loop writes the source in place afterwards (`{written_after}`): the copy could read "
        "the new values",
    )
