"""The semantic model's own tree walk must see what libcst's visitors see: the same children, in the
same (source) order, less layout and punctuation."""

from __future__ import annotations

import libcst as cst
import pytest

from tinker_lint.model.semantic import _TRIVIA, SemanticModel
from tinker_lint.rules import PYTHON_RULES

SOURCE = '''\
"""Every kind of statement and expression the index must get right."""
from __future__ import annotations
import asyncio, tinker as tk
from . import sibling
from ..pkg import (a as b, c)
from m import *

@decorator(arg=1)
class Trainer(Base, metaclass=Meta):
    field: int = 3

    async def run(self, xs: list[int], /, y=2, *args, z: str = "", **kw) -> None:
        global G
        async with lock as held, other():
            async for item in stream():
                if item % every == 0 and not done:
                    await asyncio.gather(*[self.tc.sample(p) for p in xs])
                elif (n := len(xs)) > 3:
                    continue
                else:
                    break
            else:
                pass
        try:
            x = {k: v for k, v in kw.items() if v}; y += 1
        except* (ValueError, TypeError) as error:
            raise RuntimeError("no") from error
        finally:
            del x[0], y.attr
        match xs:
            case [first, *rest] if first:
                print(f"{first!r:>{width}} {rest=}", sep="")
            case {"key": value, **others}:
                pass
            case Point(x=0) | None:
                pass
        lam = lambda q, *r: q(r) + sum(s for s in r)
        return await self.tc.forward_backward(data).result_async() if lam else ~a[1:2, ::3]

while True:
    with open(f) as h: h.read(); break
assert x is not None, "msg"
nonlocal_ = [*a, *b] @ c ** -d // e << f >> g & h | i ^ j
print(t"tmpl {x}") if False else None
'''


def _sources() -> list[str]:
    found = [SOURCE]
    for rule in PYTHON_RULES:
        found.extend(example.code for example in (*rule.VALID, *rule.INVALID))
    return found


def _libcst_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    return [child for child in node.children if type(child) not in _TRIVIA]


@pytest.mark.parametrize("source", _sources())
def test_index_matches_libcst_children(source: str) -> None:
    module = cst.parse_module(source)
    model = SemanticModel(module)
    checked = 0
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            continue  # not entered: its body runs later
        expected = _libcst_children(node)
        assert model.children(node) == expected, type(node).__name__
        for child in expected:
            assert model.parent(child) is node
        stack.extend(expected)
        checked += 1
    assert checked > 20
