"""What a file must contain for a rule to find anything in it: a rule's pre-filter declaration.

A rule declares ``prefilter = Needs(...)``: text clauses, each a set of identifiers (or parts of
identifiers) one of which must occur, and tree clauses on CPython's tree (``prefilter/sketch.py``).
Its words come from the tables its ``check`` matches on (``prefilter/mentions.py`` builds them from
``model/facts/sdk.py`` and ``model/facts/names.py``), never from a hand-written pattern. Words are matched as
whole identifiers, so spacing cannot hide one: ``len (tokenizer)`` holds the identifiers ``len`` and
``tokenizer`` as ``len(tokenizer)`` does.

The facts of a file (``TextFacts``) are worked out once per file, each when first asked, and every
rule's declaration is tested against them. No libcst here: the flake8 plugin asks this of every file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from tinker_lint.incremental.buffers import common_prefix, common_suffix
from tinker_lint.prefilter.sketch import Sketch

_IDENTIFIER = re.compile(r"\w+")


@dataclass(frozen=True)
class AnyOf:
    """One of these must occur in the file: an identifier as written (``words``), a lower-case
    part of an identifier, in any case (``parts``: ``tokenizer`` in ``self._Tokenizer``), or an
    identifier after a ``.`` (``attributes``: ``step`` in ``opt . step()``, not in ``def step``)."""

    words: frozenset[str] = frozenset()
    parts: frozenset[str] = frozenset()
    attributes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # An identifier (or a part of one) cannot be split by spacing or a line break: what makes
        # the match sound whatever the layout.
        for word in self.words | self.attributes:
            if not word.isidentifier():
                raise ValueError(f"not an identifier: {word!r}")
        for part in self.parts:
            if _IDENTIFIER.fullmatch(part) is None or part != part.lower():
                raise ValueError(f"not a lower-case part of an identifier: {part!r}")

    def __or__(self, other: AnyOf) -> AnyOf:
        return AnyOf(
            self.words | other.words, self.parts | other.parts, self.attributes | other.attributes
        )

    def implies(self, other: AnyOf) -> bool:
        """Whether every file this clause admits, ``other`` admits too: each term of this one is a
        term of ``other`` or contains one of its parts (an attribute is also a word)."""

        def taken(word: str) -> bool:
            return word in other.words or any(part in word.lower() for part in other.parts)

        return (
            all(map(taken, self.words))
            and all(word in other.attributes or taken(word) for word in self.attributes)
            and all(any(theirs in part for theirs in other.parts) for part in self.parts)
        )


def words(names: Iterable[str]) -> AnyOf:
    return AnyOf(words=frozenset(names))


def parts(names: Iterable[str]) -> AnyOf:
    return AnyOf(parts=frozenset(names))


def attributes(names: Iterable[str]) -> AnyOf:
    return AnyOf(attributes=frozenset(names))


TreeTest = Callable[[Sketch], bool]


@dataclass(frozen=True)
class Needs:
    """All a file must contain for a rule to find anything: every ``text`` clause; every ``step``
    clause too, unless the project names its own step functions (``hot-loop-calls``), which make a
    loop hot without any Tinker call (then the names of those calls, if known, will do instead);
    and every ``tree`` test on the file's sketch."""

    text: tuple[AnyOf, ...] = ()
    step: tuple[AnyOf, ...] = ()
    tree: tuple[TreeTest, ...] = field(default=(), compare=False)

    def __and__(self, other: Needs) -> Needs:
        return Needs(
            _unique((*self.text, *other.text)),
            _unique((*self.step, *other.step)),
            (*self.tree, *other.tree),
        )

    def clauses(self, hot_loop_calls: bool = False) -> tuple[AnyOf, ...]:
        """The text clauses that must hold, those of parts first: they need no list of the file's
        identifiers."""
        return self._by_cost[1] if hot_loop_calls else self._by_cost[0]

    @cached_property
    def _by_cost(self) -> tuple[tuple[AnyOf, ...], tuple[AnyOf, ...], tuple[AnyOf, ...]]:
        def order(clauses: tuple[AnyOf, ...]) -> tuple[AnyOf, ...]:
            return tuple(sorted(clauses, key=lambda clause: bool(clause.words)))

        return order((*self.step, *self.text)), order(self.text), order(self.step)

    def admits_text(
        self, facts: TextFacts, hot_loop_calls: bool = False, hot_names: AnyOf | None = None
    ) -> bool:
        """``hot_names``: the words a call ``hot-loop-calls`` names has in the text (None: not
        known, as for a pattern)."""
        stepping = all(facts.holds(clause) for clause in self._by_cost[2]) or (
            hot_loop_calls and (hot_names is None or facts.holds(hot_names))
        )
        return stepping and all(facts.holds(clause) for clause in self.clauses(True))

    def admits_tree(self, sketch: Sketch) -> bool:
        return all(test(sketch) for test in self.tree)

    def implies(self, clause: AnyOf) -> bool:
        """Whether every file this admits (without ``hot-loop-calls``) satisfies ``clause``."""
        return any(mine.implies(clause) for mine in self.clauses())


def _unique(clauses: tuple[AnyOf, ...]) -> tuple[AnyOf, ...]:
    return tuple(dict.fromkeys(clauses))


class TextFacts:
    """What the text of one file contains, each fact worked out once, when first asked: its text
    in lower case, the set of its identifiers, whether a clause holds. The set of identifiers is
    worked out only for those who ask for it.

    ``previous``: the facts of the text this one was edited from (an editor's buffer). A clause
    that held there holds here where what showed it is outside the edit; one that did not can
    hold only by what the edit changed, and only there is it looked for."""

    def __init__(self, text: str, previous: TextFacts | None = None) -> None:
        self.text = text
        self._lowered: str | None = None
        self._identifiers: frozenset[str] | None = None
        self._holds: dict[AnyOf, bool] = {}
        # Where each clause that holds was seen: (a part, in ``lowered``?, its offset, its length).
        self._seen_at: dict[AnyOf, tuple[bool, int, int]] = {}
        self._previous = previous
        # The common prefix and suffix with the previous text, and of the two in lower case.
        self._common_text: tuple[int, int] | None = None
        self._common_lowered: tuple[int, int] | None = None
        if previous is not None:
            previous._previous = None  # only one text back: no chain of every edit

    @property
    def lowered(self) -> str:
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    @property
    def identifiers(self) -> frozenset[str]:
        """Every run of identifier characters (also in strings and comments: more is sound)."""
        if self._identifiers is None:
            self._identifiers = frozenset(_IDENTIFIER.findall(self.text))
        return self._identifiers

    def holds(self, clause: AnyOf) -> bool:
        found = self._holds.get(clause)
        if found is None:
            found = self._holds_after_edit(clause) if self._previous is not None else None
            if found is None:
                found = self._search(clause, 0, _END, 0, _END)
            self._holds[clause] = found
        return found

    def _search(
        self, clause: AnyOf, part_start: int, part_end: int, word_start: int, word_end: int
    ) -> bool:
        """Whether a part occurs in ``lowered[part_start:part_end]`` or a word as a whole
        identifier in ``text[word_start:word_end]`` (noted where)."""
        for part in clause.parts:
            at = self.lowered.find(part, max(0, part_start), part_end)
            if at >= 0:
                self._seen_at[clause] = (True, at, len(part))
                return True
        for word in clause.words:
            at = self._identifier_at(word, max(0, word_start), word_end)
            if at >= 0:
                self._seen_at[clause] = (False, at, len(word))
                return True
        # (Where an attribute was seen is not noted: an edit's facts search for it again.)
        return any(self._attribute_at(word) >= 0 for word in clause.attributes)

    def _attribute_at(self, word: str) -> int:
        """Where ``word`` first occurs as a whole identifier after a ``.`` (-1: nowhere)."""
        text = self.text
        at = self._identifier_at(word, 0, len(text))
        while at >= 0 and not _after_dot(text, at):
            at = self._identifier_at(word, at + 1, len(text))
        return at

    def _holds_after_edit(self, clause: AnyOf) -> bool | None:
        """The clause's truth from the previous text's, where the edit shows it (None: not
        asked there; search the whole text)."""
        previous = self._previous
        assert previous is not None
        before = previous._holds.get(clause)
        if before is None or clause.attributes:
            # An attribute's ``.`` may be far from its name, outside what the edit changed.
            return None
        if self._common_text is None:
            self._common_text = _common_ends(previous.text, self.text)
        text_prefix, text_suffix = self._common_text
        lowered_prefix = lowered_suffix = 0  # (asked only of clauses with parts)
        if clause.parts:
            if self._common_lowered is None:
                self._common_lowered = _common_ends(previous.lowered, self.lowered)
            lowered_prefix, lowered_suffix = self._common_lowered
        if before:
            in_lowered, at, size = previous._seen_at[clause]
            if in_lowered:
                old_size, new_size, prefix, suffix = (
                    len(previous.lowered),
                    len(self.lowered),
                    lowered_prefix,
                    lowered_suffix,
                )
                kept_before = at + size <= prefix
                kept_after = at >= old_size - suffix
            else:  # a whole identifier: the characters either side of it are kept too
                old_size, new_size, prefix, suffix = (
                    len(previous.text),
                    len(self.text),
                    text_prefix,
                    text_suffix,
                )
                kept_before = at + size < prefix
                kept_after = at - 1 >= old_size - suffix
            if kept_before or kept_after:
                moved = at if kept_before else at + new_size - old_size
                self._seen_at[clause] = (in_lowered, moved, size)
                return True
            return None
        # Not anywhere in the previous text: here only if it overlaps what the edit changed.
        longest = max(map(len, (*clause.parts, *clause.words)), default=0)
        lowered_end = len(self.lowered) - lowered_suffix + longest - 1 if clause.parts else 0
        return self._search(
            clause,
            lowered_prefix - longest + 1,
            lowered_end,
            text_prefix - longest,
            len(self.text) - text_suffix + longest + 1,
        )

    def has_identifier(self, word: str) -> bool:
        """``word in self.identifiers``, without making the set (about 14 ms on a 2,700-line file,
        ten times the search of the few words a file's rules ask about)."""
        if self._identifiers is not None:
            return word in self._identifiers
        return self._identifier_at(word, 0, len(self.text)) >= 0

    def _identifier_at(self, word: str, start: int, end: int) -> int:
        """Where ``word`` first occurs in ``text[start:end]`` as a whole identifier; -1: not."""
        text, size = self.text, len(word)
        at = text.find(word, start, end)
        while at >= 0:
            # A whole run of identifier characters (``\w``: alphanumeric or "_", as for every
            # code point ``re`` has), not a part of a longer one.
            after = at + size
            if (at == 0 or not _word_character(text[at - 1])) and (
                after == len(text) or not _word_character(text[after])
            ):
                return at
            at = text.find(word, at + 1, end)
        return -1


_END = sys.maxsize  # a slice's end past any text's


def _common_ends(old: str, new: str) -> tuple[int, int]:
    """The lengths of the longest common prefix of two texts and of their longest common suffix
    after it."""
    prefix = common_prefix(old, new)
    return prefix, common_suffix(old, new, min(len(old), len(new)) - prefix)


_BLANK = " \t\f\\"  # what may stand between an attribute's ``.`` and its name on one line
_LINE_BREAKS = "\n\r"


def _after_dot(text: str, at: int) -> bool:
    """Whether the name at ``at`` may be an attribute's: a ``.`` before it, past blanks, line
    breaks (inside brackets) and comments. A line before it may hide the ``.`` before a comment
    (``opt.  # comment``): a ``#`` in a line is taken for a comment's start (more is sound)."""
    end = at
    while True:
        line_start = max(text.rfind("\n", 0, end), text.rfind("\r", 0, end)) + 1
        line = text[line_start:end]
        if line.rstrip(_BLANK).endswith("."):
            return True
        if line_start == end or line.strip(_BLANK) == "":
            pass  # nothing on this line before it: look at the line before
        elif end != at and any(
            line[:hash].rstrip(_BLANK).endswith(".") for hash in _positions(line, "#")
        ):
            return True
        elif end != at and line.lstrip(_BLANK).startswith("#"):
            pass  # a whole-line comment between the ``.`` and the name
        else:
            return False
        if line_start == 0:
            return False
        end = line_start - 1
        if end > 0 and text[end] == "\n" and text[end - 1] == "\r":
            end -= 1


def _positions(line: str, character: str) -> Iterator[int]:
    at = line.find(character)
    while at >= 0:
        yield at
        at = line.find(character, at + 1)


def _word_character(character: str) -> bool:
    return character.isalnum() or character == "_"
