"""Re-parsing an edited file (``syntax/parse.py``, for the editor's lint on every keystroke): the
tree put together from the previous parse's statements and the re-parsed ones is the tree
``cst.parse_module`` makes of the new text, node for node, and the engine's findings are the same."""

from __future__ import annotations

import os
import random
import warnings
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

from tinker_lint.run.engine import lint_text
from tinker_lint.syntax import parse

ROOT = Path(__file__).parent.parent
FIXTURES = sorted((ROOT / "fixtures").rglob("*.py"))


@pytest.fixture(autouse=True)
def _no_kept_parses() -> Iterator[None]:
    with parse.parses_kept(4):
        parse._recent.clear()
        yield
        parse._recent.clear()


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
        before = parse._recent[path].module
        got = parse.parse_module(new, key=path)
        assert got.deep_equals(cst.parse_module(new)), (path, new)  # and so its code is ``new``
        starts = parse._starts(parse._recent[path])  # worked out, or kept from the reuse
        for statement, start, end in zip(got.body, starts, starts[1:], strict=False):
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
    with parse.parses_kept(0):
        fresh = lint_text(edited, path, settings).diagnostics
    assert reused == fresh
    assert reused
    assert parse._recent[path].text == edited  # kept for the next edit ...
    other = str(ROOT / "fixtures" / "tnk1xx" / "tnk101_good.py")
    lint_text(Path(other).read_text(encoding="utf-8"), other, settings, reuse_parse=False)
    assert other not in parse._recent  # ... unless the caller lints each file once (flake8)


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
