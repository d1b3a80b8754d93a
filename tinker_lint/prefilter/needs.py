"""What a file must contain for a rule to find anything in it: a rule's pre-filter declaration.

A rule declares ``prefilter = Needs(...)``: text clauses, each a set of identifiers (or parts of
identifiers) one of which must occur, and tree clauses on CPython's tree (``prefilter/sketch.py``).
Its words come from the tables its ``check`` matches on (``prefilter/mentions.py`` builds them from
``model/sdk.py`` and ``model/names.py``), never from a hand-written pattern. Words are matched as
whole identifiers, so spacing cannot hide one: ``len (tokenizer)`` holds the identifiers ``len`` and
``tokenizer`` as ``len(tokenizer)`` does.

The facts of a file (``TextFacts``) are worked out once per file, each when first asked, and every
rule's declaration is tested against them. No libcst here: the flake8 plugin asks this of every file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from tinker_lint.prefilter.sketch import Sketch

_IDENTIFIER = re.compile(r"\w+")


@dataclass(frozen=True)
class AnyOf:
    """One of these must occur in the file: an identifier as written (``words``), or a lower-case
    part of an identifier, in any case (``parts``: ``tokenizer`` in ``self._Tokenizer``)."""

    words: frozenset[str] = frozenset()
    parts: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # An identifier (or a part of one) cannot be split by spacing or a line break: what makes
        # the match sound whatever the layout.
        for word in self.words:
            if not word.isidentifier():
                raise ValueError(f"not an identifier: {word!r}")
        for part in self.parts:
            if _IDENTIFIER.fullmatch(part) is None or part != part.lower():
                raise ValueError(f"not a lower-case part of an identifier: {part!r}")

    def __or__(self, other: AnyOf) -> AnyOf:
        return AnyOf(self.words | other.words, self.parts | other.parts)

    def implies(self, other: AnyOf) -> bool:
        """Whether every file this clause admits, ``other`` admits too: each term of this one is a
        term of ``other`` or contains one of its parts."""
        return all(
            word in other.words or any(part in word.lower() for part in other.parts)
            for word in self.words
        ) and all(any(theirs in part for theirs in other.parts) for part in self.parts)


def words(names: Iterable[str]) -> AnyOf:
    return AnyOf(words=frozenset(names))


def parts(names: Iterable[str]) -> AnyOf:
    return AnyOf(parts=frozenset(names))


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
    worked out only for files that pass the clauses of parts (few: the Tinker evidence)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lowered: str | None = None
        self._identifiers: frozenset[str] | None = None
        self._holds: dict[AnyOf, bool] = {}

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
            # A word not even inside the text needs no list of identifiers (most, in most files).
            found = any(part in self.lowered for part in clause.parts) or any(
                self.has_identifier(word) for word in clause.words if word in self.text
            )
            self._holds[clause] = found
        return found

    def has_identifier(self, word: str) -> bool:
        """``word in self.identifiers``, without making the set (about 14 ms on a 2,700-line file,
        ten times the search of the few words a file's rules ask about)."""
        if self._identifiers is not None:
            return word in self._identifiers
        text, size = self.text, len(word)
        at = text.find(word)
        while at >= 0:
            # A whole run of identifier characters (``\w``: alphanumeric or "_", as for every
            # code point ``re`` has), not a part of a longer one.
            end = at + size
            if (at == 0 or not _word_character(text[at - 1])) and (
                end == len(text) or not _word_character(text[end])
            ):
                return True
            at = text.find(word, at + 1)
        return False


def _word_character(character: str) -> bool:
    return character.isalnum() or character == "_"
