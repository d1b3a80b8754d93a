"""``TextFacts.has_identifier``: whether a word is a whole identifier of the text (a maximal run
of ``\\w``), found without making the set of every identifier; the same answers as the set."""

from __future__ import annotations

import pytest

from tinker_lint.prefilter.needs import AnyOf, TextFacts

TEXT = "x = client.sample_async(p)\n# samples: _sample and sampleé, é_sample\nsample٣ = 1\nfoo.sample\n"


@pytest.mark.parametrize(
    ("word", "found"),
    [
        ("sample", True),  # only the last line's, after all the longer runs that hold it
        ("sample_async", True),
        ("client", True),
        ("samples", True),
        ("_sample", True),
        ("async", False),  # inside ``sample_async``: "_" is an identifier character
        ("ampl", False),
        ("sampleé", True),
        ("é_sample", True),
        ("sample٣", True),  # an Arabic-Indic digit continues an identifier, as ``\\w`` has it
        ("foo", True),
        ("missing", False),
    ],
)
def test_has_identifier(word: str, found: bool) -> None:
    assert TextFacts(TEXT).has_identifier(word) is found
    assert (word in TextFacts(TEXT).identifiers) is found
    facts = TextFacts(TEXT)
    facts.identifiers  # noqa: B018  (made first: then asked of the set)
    assert facts.has_identifier(word) is found


def test_holds_a_clause_of_words() -> None:
    assert TextFacts(TEXT).holds(AnyOf(words=frozenset({"async", "sample"})))
    assert not TextFacts(TEXT).holds(AnyOf(words=frozenset({"async", "ampl"})))
    assert TextFacts("sample").holds(AnyOf(words=frozenset({"sample"})))  # the text's edges
