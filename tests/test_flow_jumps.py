"""``flow.has_jump`` and ``flow.leaves_loop``, asked of every ``if`` of a loop body: a jump is a
statement, found in the blocks and clauses of compound statements, never in an expression, a
nested function or class; a ``break`` inside a loop of its own ends that loop, not this one."""

from __future__ import annotations

import libcst as cst

from tinker_lint.model.analyses.flow import has_jump, leaves_loop
from tinker_lint.model.query import SemanticModel

PROGRAM = """\
for item in items:
    if a:
        while b:
            break
    if c:
        f(lambda: 0)
    if d:
        def g():
            return 1
        class K:
            raise_it = 1
    if e:
        log()
        break
    if h:
        continue
    if k:
        for z in zs:
            pass
        else:
            break
    if m:
        try:
            pass
        except ValueError:
            raise
    if n:
        pass
    elif p:
        with q:
            return
    if r:
        match s:
            case 1:
                break
"""


def test_jumps_of_each_if_in_a_loop_body() -> None:
    model = SemanticModel(cst.parse_module(PROGRAM))
    loop = model.module.body[0]
    assert isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock)
    found = [
        (model.line_of(stmt), has_jump(model, stmt), leaves_loop(model, stmt))
        for stmt in loop.body.body
    ]
    assert found == [
        (2, True, False),  # the ``break`` ends the ``while``
        (5, False, False),  # a lambda holds no statement
        (7, False, False),  # nor do a nested function and class
        (12, True, True),
        (15, True, False),  # ``continue`` goes on with the loop
        (17, True, False),  # the ``for``'s own ``else``: the walk does not enter that loop
        (22, True, True),  # ``raise`` in a handler
        (27, True, True),  # ``return`` in the ``elif``'s ``with``
        (32, True, True),  # ``break`` in a ``case``
    ]
