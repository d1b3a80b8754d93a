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
