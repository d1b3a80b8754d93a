"""Re-parsing an edited file (``syntax/parse.py``, for the editor's lint on every keystroke): the
tree put together from the previous parse's statements and the re-parsed ones is the tree
``cst.parse_module`` makes of the new text, node for node, and the engine's findings are the same."""

from __future__ import annotations

import os
import random
import warnings
from itertools import zip_longest
from pathlib import Path

import libcst as cst
import pytest

from tinker_lint.incremental import buffers
from tinker_lint.run.engine import lint_text
from tinker_lint.syntax import parse

ROOT = Path(__file__).parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))


pytestmark = pytest.mark.usefixtures("fresh_buffers")


def _kept(path: str) -> parse._Parsed:
    kept = parse._recent.get(path)
    assert kept is not None
    return kept


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<edit>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _one_line_edit(text: str, rng: random.Random) -> str:
    """A blank line, a comment (at some indent), a deleted, repeated or changed line, a new
    statement: at a random line."""
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    line = lines[i]
    indent = line[: len(line) - len(line.lstrip())]
    kind = rng.randrange(7)
    if kind == 0:
        lines.insert(i, "\n")
    elif kind == 1:
        lines.insert(i, rng.choice(["", "  ", "    ", "        ", indent]) + "# note\n")
    elif kind == 2:
        del lines[i]
    elif kind == 3:
        lines.insert(i, line)
    elif kind == 4 and line.strip() and line.endswith("\n"):
        lines[i] = line[:-1] + "  # c\n"
    elif kind == 5:
        lines.insert(i, indent + "x_y = 1\n")
    else:
        j = rng.randrange(len(line) + 1)
        lines[i] = line[:j] + rng.choice("ab_ 1(") + line[j:]
    return "".join(lines)


def _check_edits(path: str, text: str, edits: int, seed: int) -> int:
    """Edit ``text`` ``edits`` times, one line at a time; each parse must be libcst's own. The
    number of parses that reused the previous one."""
    rng = random.Random(seed)
    parse.parse_module(text, key=path)
    reused = 0
    for _ in range(edits):
        new = _one_line_edit(text, rng)
        if new == text or not _compiles(new):
            continue
        before = _kept(path).module
        got = parse.parse_module(new, key=path)
        assert got.deep_equals(cst.parse_module(new)), (path, new)  # and so its code is ``new``
        starts = parse._starts(_kept(path))  # worked out, or kept from the reuse
        # With no newline at the end, the last statement prints one its text lacks (and such a
        # parse is not reused: ``_reparse`` parses the next text whole).
        body = got.body if new.endswith("\n") else got.body[:-1]
        for statement, start, end in zip(body, starts, starts[1:], strict=False):
            assert new[start:end] == got.code_for_node(statement)
        reused += any(a is b for a, b in zip(before.body, got.body, strict=False)) or any(
            a is b for a, b in zip(reversed(before.body), reversed(got.body), strict=False)
        )
        text = new
    return reused


@pytest.mark.parametrize("path", FIXTURES[::12], ids=lambda p: p.name)
def test_edits_of_fixtures_parse_as_libcst_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if len(text.splitlines()) < 3 or not _compiles(text):
        pytest.skip("too short to edit")
    _check_edits(str(path), text, 12, seed=len(text))


ONE = """\
import tinker

X = 1


def f():
    if X:
        return 1
    return 2


class C:
    def m(self):
        pass
    # kept by the method's block


Y = 2
"""


def _reparsed(old: str, new: str) -> cst.Module:
    parse.parse_module(old, key="m.py")
    got = parse.parse_module(new, key="m.py")
    assert got.deep_equals(cst.parse_module(new))
    assert got.code == new
    return got


def test_an_edit_inside_a_function_reparses_that_function_only() -> None:
    first = parse.parse_module(ONE, key="m.py")
    got = _reparsed(ONE, ONE.replace("return 2", "return 3"))
    assert [a is b for a, b in zip(first.body, got.body, strict=True)] == [
        True,
        True,
        False,
        True,
        True,
    ]


def test_a_comment_after_a_block_goes_to_the_block() -> None:
    # Indented to the block's level, after ``return 2``: ``f``'s footer in libcst's parse.
    got = _reparsed(ONE, ONE.replace("\n\nclass C:", "\n    # more\n\nclass C:"))
    function = got.body[2]
    assert isinstance(function, cst.FunctionDef)
    assert isinstance(function.body, cst.IndentedBlock)
    assert [line.comment.value for line in function.body.footer if line.comment] == ["# more"]


def test_comments_before_a_statement_stay_its_leading_lines() -> None:
    _reparsed(ONE, ONE.replace("\n\nY = 2", "\n# about Y\nY = 2"))
    _reparsed(ONE, ONE.replace("X = 1\n", "X = 1\n  # odd indent\n"))


def test_the_header_the_footer_and_the_first_block_can_change() -> None:
    _reparsed(ONE, "# header\n" + ONE)
    _reparsed(ONE, ONE + "# the end\n")
    _reparsed(ONE, ONE.replace("    if X:\n        return 1\n", "  if X:\n    return 1\n"))
    # The only indented block goes: the module's default indent is another block's.
    two = "X = 1\ndef f():\n  pass\nY = 2\ndef g():\n    pass\n"
    _reparsed(two, two.replace("def f():\n  pass\n", "f = 1\n"))


def test_windows_newlines_and_no_newline_at_the_end() -> None:
    crlf = ONE.replace("\n", "\r\n")
    _reparsed(crlf, crlf.replace("return 2", "return 3"))
    _reparsed(ONE.rstrip("\n"), ONE.rstrip("\n").replace("return 2", "return 3"))


def test_the_engine_finds_the_same_with_a_reused_parse(make_settings) -> None:  # type: ignore[no-untyped-def]
    path = str(ROOT / "fixtures" / "tnk1xx" / "tnk101_bad.py")
    text = Path(path).read_text(encoding="utf-8")
    settings = make_settings()
    edited = text.replace("\n", "\n\n", 3)
    lint_text(text, path, settings)
    reused = lint_text(edited, path, settings).diagnostics
    with buffers.parses_kept(0):
        fresh = lint_text(edited, path, settings).diagnostics
    assert reused == fresh
    assert reused
    assert _kept(path).text == edited  # kept for the next edit ...
    other = str(ROOT / "fixtures" / "tnk1xx" / "tnk101_good.py")
    lint_text(Path(other).read_text(encoding="utf-8"), other, settings, reuse_parse=False)
    assert parse._recent.get(other) is None  # ... unless the caller lints each file once (flake8)


@pytest.mark.slow
def test_edits_of_cookbook_files_parse_as_libcst_does(cookbook: Path) -> None:
    # A twelfth of the files, two edits each: about 4 s (TINKER_LINT_PARSE_REUSE_STRIDE=1 for all
    # of them, nightly). Every file with eight edits each (1,907 edits) and the torch corpus's
    # files with three (650) were compared the same way once.
    stride = int(os.environ.get("TINKER_LINT_PARSE_REUSE_STRIDE", "12"))
    reused = total = 0
    for path in sorted(cookbook.rglob("*.py"))[::stride]:
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) < 3 or not _compiles(text):
            continue
        reused += _check_edits(str(path), text, 2, seed=len(text))
        total += 2
    assert reused > total // 2


def test_lines_above_the_first_statement_are_the_header() -> None:
    text = "# license\n\nx_y = 1\n\nfrom os import path\n"
    got = _reparsed(text, text.replace("x_y = 1\n", ""))
    assert len(got.header) == 3


LONG = """\
import tinker


def main(config):
    client = tinker.ServiceClient()

    def helper(batch):
        if batch:
            return 1
        # the helper's footer
    # before the loop
    for step in range(10):
        x = step
    total = 0
    return total


class Trainer:
    def one(self):
        return 1

    def two(self):
        return 2
"""


def test_an_edit_inside_a_function_reparses_the_changed_statements_only() -> None:
    first = parse.parse_module(LONG, key="m.py")
    got = _reparsed(LONG, LONG.replace("        x = step\n", "        x = step + 1\n"))
    old_main, new_main = first.body[1], got.body[1]
    assert isinstance(old_main, cst.FunctionDef) and isinstance(new_main, cst.FunctionDef)
    assert isinstance(old_main.body, cst.IndentedBlock)
    assert isinstance(new_main.body, cst.IndentedBlock)
    # Only the ``for`` statement is parsed again: the function's other statements stay.
    assert [a is b for a, b in zip(old_main.body.body, new_main.body.body, strict=True)] == [
        True,
        True,
        False,
        True,
        True,
    ]
    assert first.body[2] is got.body[2]


LOOPS = """\
async def train(config):
    for step in range(10):
        with timer():
            a = 1
            b = 2
            c = 3
        while a:
            a -= 1
            b += 1
        if b:
            c = 4
            a = 5
    for step in range(3):
        a = 1
        b = 2
    else:
        c = 3
    return a
"""


def _blocks(node: cst.CSTNode, *path: int) -> list[cst.BaseStatement]:
    """The statements of the block reached by the indexes of ``path``, from ``node``'s block."""
    for index in path:
        assert isinstance(node, cst.FunctionDef | cst.For | cst.While | cst.With | cst.If)
        assert isinstance(node.body, cst.IndentedBlock)
        node = node.body.body[index]
    assert isinstance(node, cst.FunctionDef | cst.For | cst.While | cst.With | cst.If)
    assert isinstance(node.body, cst.IndentedBlock)
    return list(node.body.body)


@pytest.mark.parametrize(
    ("old", "new", "path", "kept"),
    [
        # In a ``with`` in a step loop: the ``with``'s other statements stay.
        ("            b = 2\n", "            b = 20\n", (0, 0), [True, False, True]),
        ("            a -= 1\n", "            a -= 10\n", (0, 1), [False, True]),  # ``while``
        ("            c = 4\n", "            c = 40\n", (0, 2), [False, True]),  # ``if``
        # A block's last statement, its end kept: that statement alone.
        ("            a = 5\n", "            a = 50\n", (0, 2), [True, False]),
        (
            "            b += 1\n",
            "            b += (\n                1\n            )\n",
            (0, 1),
            [True, False],
        ),
        # Inside a loop with an ``else``: the loop is parsed again, whole.
        ("        a = 1\n        b = 2\n", "        a = 1\n        b = 20\n", (1,), [False, False]),
    ],
)
def test_an_edit_in_a_loop_or_a_with_reparses_there(
    old: str, new: str, path: tuple[int, ...], kept: list[bool]
) -> None:
    assert LOOPS.count(old) == 1
    first = parse.parse_module(LOOPS, key="m.py")
    got = _reparsed(LOOPS, LOOPS.replace(old, new))
    before, after = _blocks(first.body[0], *path), _blocks(got.body[0], *path)
    assert [a is b for a, b in zip_longest(before, after)] == kept
    assert _blocks(first.body[0])[-1] is _blocks(got.body[0])[-1]  # ``return a``


def test_the_last_statement_of_a_function_reparses_alone() -> None:
    first = parse.parse_module(LOOPS, key="m.py")
    got = _reparsed(LOOPS, LOOPS.replace("    return a\n", "    return a + 1\n"))
    assert [a is b for a, b in zip(_blocks(first.body[0]), _blocks(got.body[0]), strict=True)] == [
        True,
        True,
        False,
    ]
    # A comment after it goes to the function's footer (or to what follows): parsed around it.
    for tail in ["    # the end\n", "# at column 0\n", "        # deeper\n"]:
        _reparsed(LOOPS, LOOPS + tail)
        _reparsed(LOOPS, LOOPS.replace("    return a\n", "    return a\n" + tail))


def test_edits_inside_blocks_keep_comments_where_libcst_puts_them() -> None:
    methods = LONG.replace("        return 2\n", "        y = 2\n        return y\n")
    for new in [
        # After a nested block, indented to its level: that block's footer.
        LONG.replace("    # before the loop\n", "        # more\n    # before the loop\n"),
        LONG.replace("    # before the loop\n", "      # odd\n    # before the loop\n"),
        LONG.replace("    # before the loop\n", "# at column 0\n    # before the loop\n"),
        LONG.replace("    total = 0\n", "    total = 0\n            # deep\n"),
        LONG.replace("    total = 0\n", "\n\n    total = 0\n"),
        LONG.replace("    total = 0\n", ""),  # a statement deleted
        LONG.replace("    total = 0\n", "    if total:\n        pass\n    total = 0\n"),
        methods,  # in a method: the class's block
        LONG.replace("\n", "\r\n").replace("x = step", "x = step + 1"),
    ]:
        parse._recent.clear()
        old = LONG.replace("\n", "\r\n") if "\r\n" in new else LONG
        _reparsed(old, new)
        # And the next edit from the reused parse, whose block starts were kept.
        _reparsed(new, new.replace("client = ", "client_ = "))


def test_a_function_block_not_at_the_default_indent_is_parsed_whole() -> None:
    text = "def f():\n    a = 1\n    b = 2\n\n\ndef g():\n  a = 1\n  b = 2\n  c = 3\n"
    first = parse.parse_module(text, key="m.py")
    got = _reparsed(text, text.replace("  b = 2\n  c", "  b = 3\n  c"))
    old_g, new_g = first.body[1], got.body[1]
    assert isinstance(old_g, cst.FunctionDef) and isinstance(new_g, cst.FunctionDef)
    assert isinstance(old_g.body, cst.IndentedBlock)
    assert isinstance(new_g.body, cst.IndentedBlock)
    assert not any(a is b for a, b in zip(old_g.body.body, new_g.body.body, strict=True))


def _block_of(node: cst.CSTNode) -> list[cst.BaseStatement]:
    assert isinstance(node, cst.FunctionDef | cst.ClassDef)
    assert isinstance(node.body, cst.IndentedBlock)
    return list(node.body.body)


def test_an_edit_in_a_method_or_a_nested_function_reparses_there() -> None:
    first = parse.parse_module(LONG, key="m.py")
    # In ``Trainer.two``: the class's other method stays, and so does the edit's neighbour.
    got = _reparsed(LONG, LONG.replace("        return 2\n", "        y = 2\n        return 2\n"))
    assert [
        a is b for a, b in zip(_block_of(first.body[2]), _block_of(got.body[2]), strict=True)
    ] == [
        True,
        False,
    ]
    # In ``helper``, nested in ``main``: its ``if`` stays; ``main``'s other statements too.
    edited = LONG.replace("        if batch:\n", "        x_y = 1\n        if batch:\n")
    again = parse.parse_module(LONG, key="m.py")
    got = _reparsed(LONG, edited)
    old_main, new_main = _block_of(again.body[1]), _block_of(got.body[1])
    assert [a is b for a, b in zip(old_main, new_main, strict=True)] == [
        True,
        False,
        True,
        True,
        True,
    ]
    assert _block_of(old_main[1])[0] is _block_of(new_main[1])[1]


def test_an_edit_of_a_block_s_first_statement_keeps_the_rest() -> None:
    first = parse.parse_module(LONG, key="m.py")
    got = _reparsed(
        LONG, LONG.replace("    client = tinker", "    # made once\n    client = tinker")
    )
    assert [
        a is b for a, b in zip(_block_of(first.body[1]), _block_of(got.body[1]), strict=True)
    ] == [
        False,
        True,
        True,
        True,
        True,
    ]
    # The signature is the block's header: the function is parsed whole.
    _reparsed(LONG, LONG.replace("def main(config):", "def main(config, other):"))
    _reparsed(LONG, LONG.replace("def main(config):\n", "def main(config):  # c\n"))


def test_a_line_moved_between_functions_reparses_two_statements() -> None:
    # Out of ``main``'s loop, into ``Trainer.one``: two changes, each re-parsed on its own.
    moved = LONG.replace("        x = step\n", "        pass\n").replace(
        "(self):\n        return 1\n", "(self):\n        x = 1\n        return 1\n"
    )
    first = parse.parse_module(LONG, key="m.py")
    got = _reparsed(LONG, moved)
    assert [
        a is b for a, b in zip(_block_of(first.body[1]), _block_of(got.body[1]), strict=True)
    ] == [
        True,
        True,
        False,
        True,
        True,
    ]
    old_one, new_one = _block_of(first.body[2])[0], _block_of(got.body[2])[0]
    assert _block_of(old_one)[0] is _block_of(new_one)[1]  # ``return 1`` kept
    assert _block_of(first.body[2])[1] is _block_of(got.body[2])[1]  # ``two`` kept


# Functions far apart, with others between: an edit undone in the first, one made in the last
# (the language server's bench, and an undo after a jump).
APART = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(8))


def test_two_edits_far_apart_reparse_two_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the line diff turned off (it is capped at _MAX_DIFFED_LINES: 1,700 lines between
    # two edits of rl/train.py are more), the statements between are found by their text.
    monkeypatch.setattr(parse, "_MAX_DIFFED_LINES", 0)
    edited = APART.replace("a + 0\n", "a + 10\n").replace("a + 7\n", "a + 17\n")
    first = parse.parse_module(APART, key="m.py")
    got = _reparsed(APART, edited)
    assert [a is b for a, b in zip(first.body, got.body, strict=True)] == [
        False,
        *[True] * 6,
        False,
    ]
    # Three changes: the statements between the outer two are not all there: parsed whole.
    rewritten = (
        edited.replace("a + 10\n", "a + 20\n")
        .replace("a + 3\n", "a + 13\n")
        .replace("a + 17\n", "a + 27\n")
    )
    again = _reparsed(edited, rewritten)
    assert [a is b for a, b in zip(got.body, again.body, strict=True)] == [False] * 8


def _two_line_edits(path: str, text: str, edits: int, seed: int) -> None:
    rng = random.Random(seed)
    parse.parse_module(text, key=path)
    for _ in range(edits):
        new = _one_line_edit(_one_line_edit(text, rng), rng)
        if new == text or not _compiles(new):
            continue
        got = parse.parse_module(new, key=path)
        assert got.deep_equals(cst.parse_module(new)), (path, new)
        text = new


@pytest.mark.parametrize("path", FIXTURES[5::24], ids=lambda p: p.name)
def test_two_edits_at_once_parse_as_libcst_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if len(text.splitlines()) < 3 or not _compiles(text):
        pytest.skip("too short to edit")
    _two_line_edits(str(path), text, 8, seed=len(text) + 1)


def test_an_edit_of_the_footer_only_keeps_every_statement() -> None:
    first = parse.parse_module(LONG, key="m.py")
    got = _reparsed(LONG, LONG + "# the end\n")
    assert all(a is b for a, b in zip(first.body, got.body, strict=True))


# --- block starts from CPython's tree (``_describe_blocks``) ---------------------------------


def _described_and_printed(text: str) -> list[tuple[str, list[int] | None, list[int] | None]]:
    """Per ``def``/``class``/loop (any depth, as the re-parse descends): its name, the block starts
    described from CPython's tree of the text, and those ``_inner_starts`` prints."""
    from tinker_lint.syntax import cpython

    cpython._recent.clear()
    assert cpython.tree(text, "m.py") is not None  # the engine makes it before the parse
    module = parse.parse_module(text, key="m.py")
    kept = _kept("m.py")
    printed = parse._Parsed(text, module)
    found = []

    def visit(outer: cst.CSTNode, depth: int) -> None:
        assert parse._descends(outer)
        entry = kept.inner.get(id(outer))
        name = outer.name.value if isinstance(outer, cst.FunctionDef | cst.ClassDef) else ""
        found.append(
            (
                name or type(outer).__name__,
                entry[2] if entry is not None else None,
                parse._inner_starts(printed, outer, depth),  # type: ignore[arg-type]
            )
        )
        for statement in parse._block_statements(outer):
            if parse._descends(statement):
                visit(statement, depth + 1)

    for statement in module.body:
        if parse._descends(statement):
            visit(statement, 0)
    cpython._recent.clear()
    return found


BLOCKS = '''\
import tinker


@decorated
class Trainer:
    """Doc."""

    # a comment before a method

    def step(self, x):
        if x:
            return 1
            # a comment the if's block keeps
        # one the next statement keeps

        y = 2; z = 3
        @staticmethod
        def inner():
            pass
        return y
    # the class's block's footer

def main():
    for i in range(3):
        pass
        # the for's footer
x = 1
'''


def test_block_starts_are_read_from_cpython_s_tree_as_printing_finds_them() -> None:
    found = _described_and_printed(BLOCKS)
    assert found == [
        ("Trainer", [28, 43, 318], [28, 43, 318]),  # the docstring, ``def step``, the end
        ("step", [57, 137, 198, 258, 275], [57, 137, 198, 258, 275]),
        ("If", [14, 35], [14, 35]),  # ``return 1``, before the comment its block keeps
        ("inner", [43, 60], [43, 60]),
        ("main", [13, 76], [13, 76]),
        ("For", [23, 36], [23, 36]),  # ``pass``, before the for's footer
    ]


def test_a_decorator_joined_by_a_backslash_is_printed_not_read() -> None:
    text = "def f():\n    @\\\n    deco\n    def g():\n        pass\n    return g\n"
    # Neither read (the ``@`` is a line above the line CPython gives): printed when asked.
    assert _described_and_printed(text) == [("f", None, [9, 51, 64]), ("g", None, [29, 42])]


@pytest.mark.parametrize("path", FIXTURES[::4], ids=lambda p: p.name)
def test_block_starts_of_fixtures_read_from_cpython_s_tree(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if not _compiles(text) or "\\\n" in text or "\r" in text:
        pytest.skip("not read from the tree")
    found = _described_and_printed(text)
    assert [(name, described) for name, described, _ in found] == [
        (name, printed) for name, _, printed in found
    ]


def test_an_edit_in_one_method_keeps_the_other_methods_block_starts() -> None:
    found = _described_and_printed(BLOCKS)  # described from the tree, kept under "m.py"
    before = _kept("m.py")
    [trainer] = [s for s in before.module.body if isinstance(s, cst.ClassDef)]
    step = _block_of(trainer)[1]
    # An edit in the ``if`` of ``step`` (no tree of this text: what is kept comes from the
    # re-parse).
    edited = BLOCKS.replace("return 1", "return 11")
    module = parse.parse_module(edited, key="m.py")
    assert module.deep_equals(cst.parse_module(edited))
    after = _kept("m.py")
    [new_trainer] = [s for s in module.body if isinstance(s, cst.ClassDef)]
    new_step = _block_of(new_trainer)[1]
    assert new_trainer is not trainer and new_step is not step
    inner = _block_of(new_step)[2]
    assert isinstance(inner, cst.FunctionDef) and inner.name.value == "inner"
    assert inner is _block_of(step)[2]  # kept as it was, under new nodes
    assert after.inner[id(inner)] == (new_trainer, inner, [43, 60])
    assert found[3] == ("inner", [43, 60], [43, 60])
    assert after.inner[id(new_step)][2] == [57, 138, 199, 259, 276]  # one character longer
    assert after.inner[id(new_step)][2] == parse._inner_starts(
        parse._Parsed(edited, module), new_step, 1
    )
