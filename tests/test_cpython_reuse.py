"""``syntax/cpython.py``: CPython's verdict and tree of an edited text, compiled only where it
changed, must be the whole text's (``guard.python_verdict``, ``ast.parse``): for every kind of
syntax error an edit can make or mend, inside a function and at the module's level, and over
chains of random edits of real files."""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tinker_lint.guard import SyntaxProblem, python_verdict
from tinker_lint.prefilter import sketch as sketching
from tinker_lint.prefilter.sketch import sketch
from tinker_lint.syntax import cpython
from tinker_lint.syntax.buffers import parses_kept

# A long real file that needs no download: the inner loop's chain (the cookbook's are slow).
OWN_SOURCE = (
    Path(__file__).resolve().parent.parent / "tinker_lint" / "model" / "analyses" / "flow.py"
)
KEY = "edited.py"

BASE = '''"""A module."""

from __future__ import annotations

import os

LIMIT = 3


def first(x):
    total = 0
    for i in range(x):
        total += i
    return total


class Model:
    size = 2

    def step(self, batch):
        def inner():
            nonlocal batch
            batch = batch + 1
        inner()
        return batch


def last(y):
    return y * 2 if y != 0 else 0
'''

# (name, old, new): one edit of BASE each; all but the first few make it fail to compile.
EDITS = [
    ("valid change in a function", "    return total\n", "    return total + 1\n"),
    ("line added at the end of a block", "    return total\n", "    return total\n    x = 1\n"),
    ("function removed", "def last(y):\n    return y * 2 if y != 0 else 0\n", ""),
    ("function added", "def last(y):", "def extra():\n    pass\n\n\ndef last(y):"),
    ("invalid syntax", "        total += i\n", "        total += = i\n"),
    ("bracket never closed", "    return total\n", "    return (total\n"),
    ("bracket closed twice", "    return total\n", "    return total)\n"),
    ("unterminated string", "    return total\n", "    return 'total\n"),
    ("unterminated triple-quoted string", "    return total\n", '    return """total\n'),
    ("unexpected indent", "    return total\n", "        return total\n"),
    ("statement indented", "import os\n", "    import os\n"),
    ("statement indented after a block", "\nclass Model:", "\n class Model:"),
    ("unindent matches no level", "    return total\n", "  return total\n"),
    ("expected an indented block", "    return y * 2", "return y * 2"),
    ("tab mixed with spaces", "        total += i\n", "\ttotal += i\n"),
    ("nonlocal with no binding", "            nonlocal batch\n", "            nonlocal other\n"),
    ("nonlocal at the module's level", "LIMIT = 3\n", "nonlocal LIMIT\n"),
    ("nonlocal in a class", "    size = 2\n", "    nonlocal size\n"),
    ("assigned before global", "    total = 0\n", "    total = 0\n    global total\n"),
    ("parameter and global", "    total = 0\n", "    global x\n"),
    ("duplicate argument", "def first(x):", "def first(x, x):"),
    ("global at the module's level", "LIMIT = 3\n", "LIMIT = 3\nglobal LIMIT\n"),
    # Alone, ``global LIMIT`` compiles: the assignment before it is in a statement kept.
    ("global after the assignment", "\n\n\ndef first(x):", "\nglobal LIMIT\n\n\ndef first(x):"),
    ("walrus in an annotation", "def last(y):", "def last(y: (z := 1)):"),
    ("yield in a comprehension", "    return total\n", "    return [(yield i) for i in total]\n"),
    ("rebinding a comprehension variable", "    return total\n", "    [i := 0 for i in total]\n"),
    ("late __future__ import", "def last(y):", "from __future__ import division\n\n\ndef last(y):"),
    (
        "__future__ braces",
        "from __future__ import annotations\n",
        "from __future__ import braces\n",
    ),
    ("docstring changed", '"""A module."""', '"""A module"""\n    x = 1'),
    ("decorator left alone", "def last(y):", "@decorator\n\n"),
    ("null byte", "    return total\n", "    return\x00 total\n"),
    ("form feed", "    return total\n", "\f    return total\n"),
    ("keyword as a name", "    total = 0\n", "    class = 0\n"),
    ("block opened at the end", " else 0\n", " else 0\nif True:\n"),
    ("return outside a function", "LIMIT = 3\n", "return 3\n"),
]


@contextmanager
def kept() -> Iterator[None]:
    with parses_kept(4):
        cpython._recent.pop(KEY)
        yield
        cpython._recent.pop(KEY)


def lint_front(text: str) -> tuple[SyntaxProblem | None, str | None]:
    """What the engine asks, in its order: the verdict, then the tree if the text compiles."""
    problem = cpython.verdict(text, KEY, KEY)
    if problem is not None:
        return problem, None
    tree = cpython.tree(text, KEY)
    assert tree is not None
    return None, ast.dump(tree, include_attributes=True)


def whole(text: str) -> tuple[SyntaxProblem | None, str | None]:
    problem = python_verdict(text, KEY)
    if problem is not None:
        return problem, None
    return None, ast.dump(ast.parse(text), include_attributes=True)


@pytest.mark.parametrize(("name", "old", "new"), EDITS, ids=[edit[0] for edit in EDITS])
def test_edit_made_and_mended(name: str, old: str, new: str) -> None:
    assert BASE.count(old) == 1
    edited = BASE.replace(old, new)
    with kept():
        assert lint_front(BASE) == whole(BASE) == (None, lint_front(BASE)[1])
        assert lint_front(edited) == whole(edited)
        assert lint_front(BASE) == whole(BASE)  # mended
        assert lint_front(edited) == whole(edited)  # and made again from the mended text


def test_errors_are_reported_as_the_whole_text_has_them() -> None:
    """The exact verdicts of a few of the edits: the error's message and place."""
    expected = {
        "nonlocal with no binding": ("SyntaxError: no binding for nonlocal 'other' found", 22, 13),
        "bracket never closed": ("SyntaxError: '(' was never closed", 14, 12),
        "global at the module's level": (
            "SyntaxError: name 'LIMIT' is assigned to before global declaration",
            8,
            1,
        ),
        "walrus in an annotation": (
            # Only under ``from __future__ import annotations``: the chunk is compiled with it.
            "SyntaxError: 'named expression' can not be used within an annotation",
            28,
            14,
        ),
    }
    with kept():
        lint_front(BASE)
        for name, old, new in EDITS:
            if name in expected:
                problem = lint_front(BASE.replace(old, new))[0]
                assert problem == SyntaxProblem(*expected[name]), name


@pytest.mark.parametrize(
    ("base", "edited"),
    [
        ("x = 1", "x = 1def f(): pass"),  # the last line, with no newline, carried on
        ("x = 1\ny = 2", "x = 1\ny = 2class C: pass"),
        ("def f():\n    pass\n", "def f():\n    pass\n  def g(): pass\n"),
    ],
)
def test_kept_lines_must_stay_whole_lines(base: str, edited: str) -> None:
    with kept():
        assert lint_front(base) == whole(base)
        assert lint_front(edited) == whole(edited)
        assert whole(edited)[0] is not None


def test_future_import_added() -> None:
    """Alone, the new import compiles; with it, the annotation of a function kept does not."""
    base = "import os\n\n\ndef f(x: (y := 1)):\n    pass\n"
    edited = "from __future__ import annotations\n" + base
    message = "SyntaxError: 'named expression' can not be used within an annotation"
    with kept():
        assert lint_front(base) == whole(base)
        assert lint_front(edited) == whole(edited) == (SyntaxProblem(message, 5, 11), None)
        assert lint_front(base) == whole(base)


def test_only_the_changed_statement_is_compiled() -> None:
    """An edit inside a function reuses the other statements' nodes (the point of it)."""
    with kept():
        lint_front(BASE)
        before = cpython.tree(BASE, KEY)
        assert before is not None
        edited = BASE.replace("    return total\n", "    return total\n    extra = 1\n")
        assert cpython.verdict(edited, KEY, KEY) is None
        after = cpython.tree(edited, KEY)
        assert after is not None
        assert after.body[:4] == before.body[:4]  # the docstring and imports: the same objects
        assert after.body[4] is not before.body[4]  # ``first``: compiled again
        assert after.body[-1] is before.body[-1]  # ``last``: kept, one line further down
        assert (after.body[-1].lineno, after.body[-1].end_lineno) == (29, 30)
    with kept(), parses_kept(0):  # a batch run keeps nothing
        lint_front(BASE)
        assert cpython._recent.get(KEY) is None


APART = BASE + "".join(f"\n\ndef f{i}(a):\n    return a + {i}\n" for i in range(4))


def test_two_edits_far_apart_compile_each_alone() -> None:
    """A line added to ``first`` and one taken out of ``f2``: the statements between are kept,
    not compiled again with them, and each is moved once, by the lines both edits add (``f3``:
    none); and when only the first half compiles, the whole text is judged, and what was kept
    stays as it was (each step only notes the lines to move by)."""
    first_edit = APART.replace("    return total\n", "    extra = 1\n    return total\n")
    edited = first_edit.replace("def f2(a):\n    return a + 2\n", "def f2(a): return a + 12\n")
    with kept():
        lint_front(APART)
        before = cpython.tree(APART, KEY)
        assert before is not None
        assert lint_front(edited) == whole(edited)
        after = cpython.tree(edited, KEY)
        assert after is not None
        kept_nodes = [a is b for a, b in zip(before.body, after.body, strict=True)]
        assert kept_nodes == [True] * 4 + [False] + [True] * 4 + [False, True]
        assert [s.lineno for s in after.body[5:]] == [18, 29, 33, 37, 41, 44]
        assert lint_front(APART) == whole(APART)  # both undone: two changes again
        broken = first_edit.replace("a + 2\n", "a + (2\n")
        assert (
            lint_front(broken)
            == whole(broken)
            == (
                SyntaxProblem("SyntaxError: '(' was never closed", 42, 16),
                None,
            )
        )
        still = cpython._recent.get(KEY)
        assert still is not None and still.text == APART  # kept, its lines not moved
        assert lint_front(edited) == whole(edited)


def _random_edit(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    kind = rng.choice(["dup", "del", "swap", "indent", "dedent", "break", "copy"])
    if kind == "dup":
        lines.insert(i, lines[i])
    elif kind == "del":
        del lines[i]
    elif kind == "swap" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == "indent":
        lines[i] = "    " + lines[i]
    elif kind == "dedent":
        lines[i] = lines[i].removeprefix("    ")
    elif kind == "break":
        lines[i] = lines[i].replace("(", "((", 1)
    else:
        lines.insert(i, lines[rng.randrange(len(lines))])
    return "".join(lines)


def test_chains_of_random_edits_of_our_own_source() -> None:
    _chain_of_random_edits(OWN_SOURCE.read_text(encoding="utf-8"), "flow.py")


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize(
    "name", ["completers.py", "rl/train.py", "supervised/train.py", "renderers/base.py"]
)
def test_chains_of_random_edits_of_cookbook_files(cookbook: Path, name: str) -> None:
    _chain_of_random_edits((cookbook / name).read_text(encoding="utf-8"), name)


def _chain_of_random_edits(original: str, name: str) -> None:
    """Each text of a chain of edits (some break it, later ones may mend it), incrementally
    against whole, with the original text now and then (an undo)."""
    rng = random.Random(name)
    with kept():
        assert lint_front(original) == whole(original)
        text = original
        for step in range(40):
            text = original if step % 13 == 12 else _random_edit(text, rng)
            assert lint_front(text) == whole(text), step


def test_sketch_of_an_edit_reuses_the_statements_kept() -> None:
    """``sketch(tree, key=...)`` takes the facts of the statements an edit kept from its last
    sketch, moved with them: a class body is the module's own level, where places are compared
    across statements (a wait before a submit, TNK101's fact)."""
    base = "class A:\n    client.forward_backward(data)\n\n\nclass B:\n    fut.result()\n"
    # Six lines in A: B's wait, kept, is at line 12, after the submit (line 8), no longer at 6.
    edited = base.replace("class A:\n", "class A:\n" + "    x = 1\n" * 6)
    swapped = "class B:\n    fut.result()\n\n\nclass A:\n    client.forward_backward(data)\n"
    with kept():
        for text in (base, edited, base, swapped, edited):
            assert cpython.verdict(text, KEY, KEY) is None
            tree = cpython.tree(text, KEY)
            assert tree is not None
            found = sketch(tree, key=KEY)
            assert found == sketch(ast.parse(text))
            assert found.wait_then_submit is (text == swapped)
        assert sketch(tree, key=KEY) == sketch(tree)  # once more, all of it reused
        # B's facts, from the first lint of ``base``, were not walked again for ``edited``.
        cpython.verdict(base, KEY, KEY)
        sketch(cpython.tree(base, KEY) or ast.Module(), key=KEY)
        walked = {k.statement.lineno: k.part for k in sketching._kept_parts(KEY)[1].values()}
        cpython.verdict(edited, KEY, KEY)
        sketch(cpython.tree(edited, KEY) or ast.Module(), key=KEY)
        again = {k.statement.lineno: k.part for k in sketching._kept_parts(KEY)[1].values()}
        assert sorted(again) == [1, 11]
        assert again[11] is walked[5] and again[1] is not walked[1]
    assert sketching._PARTS.get(KEY) is not None
    sketching._PARTS.pop(KEY)
