"""``noqa.py`` reads only the lines with "noqa" in them: their numbers must be the lines Python
counts (``\\r\\n``, ``\\r`` and ``\\n`` each end one), whatever the line ends around them."""

from __future__ import annotations

from tinker_lint.noqa import file_exemptions, noqa_lines, unknown_codes
from tinker_lint.rules import ALL_CODES


def test_line_numbers_with_every_line_end() -> None:
    text = "a = 1\r\nb = 2  # noqa: TNK101\rc = 3\n\nd = 4  # NOQA\r\n# noqa: TNK999 noqa\n"
    assert noqa_lines(text) == {2: frozenset({"TNK101"}), 5: None, 6: frozenset({"TNK999"})}
    assert list(noqa_lines(text)) == [2, 5, 6]
    assert unknown_codes(text, ALL_CODES) == [(6, "TNK999")]
    assert file_exemptions(text) == frozenset()


def test_file_exemptions_start_their_line() -> None:
    text = "x = 1\r# ruff: noqa: TNK105, TNK2\ny = 2  # flake8: noqa\r\n\t# flake8: noqa\n"
    assert file_exemptions(text) == frozenset({"TNK105", "TNK2", ""})
    assert file_exemptions("x = 1  # ruff: noqa\n") == frozenset()


def test_kept_answer_is_for_its_own_text() -> None:
    assert noqa_lines("x = 1  # noqa\n") == {1: None}
    assert noqa_lines("\nx = 1  # noqa\n") == {2: None}
    # The caller's copy may change; the next answer is still right.
    lines = noqa_lines("\nx = 1  # noqa\n")
    lines.clear()
    assert noqa_lines("\nx = 1  # noqa\n") == {2: None}
    assert noqa_lines("x = 1\n") == {}


def test_a_directive_is_read_once_into_its_codes_and_its_typos() -> None:
    from tinker_lint.noqa import Directive, parse_directive

    assert parse_directive("x = 1") is None
    assert parse_directive("x = 1  # noqa") == Directive(None, (), "# noqa", 7, 13)
    # Words after the codes are an explanation; a second comment ends the list.
    assert parse_directive("x  # noqa: TNK101 E501 as planned # TNK102") == Directive(
        frozenset({"TNK101", "E501"}), (), "# noqa: TNK101 E501", 3, 22
    )
    # Where a code is expected (first, after a comma), or where it reads as one: a typo.
    assert parse_directive("x  # noqa:tnk101,TNKX TNK1O1 ok") == Directive(
        frozenset({"TNK101"}), ("TNKX", "TNK1O1"), "# noqa:tnk101,TNKX TNK1O1", 3, 28
    )
    assert parse_directive("x  # noqa: , # why") == Directive(frozenset(), (), "# noqa: ,", 3, 10)
    assert noqa_lines("a  # noqa: TNKX\nb  # noqa: TNK1O1\nc  # noqa: TNK1\n") == {
        1: frozenset(),
        2: frozenset(),
        3: frozenset({"TNK1"}),
    }
