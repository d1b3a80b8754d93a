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


SAMPLE = AnyOf(words=frozenset({"sample"}))
CLIENT_PART = AnyOf(parts=frozenset({"client"}))


@pytest.mark.parametrize(
    ("clause", "before", "after", "holds"),
    [
        (SAMPLE, "sample", "samples", False),  # the character after it changed
        (SAMPLE, "sample", "_sample", False),  # the one before it
        (SAMPLE, "sample = 1\n", "sample = 12\n", True),  # kept before the edit
        (SAMPLE, "x = 1\nsample\n", "x = 12\nsample\n", True),  # kept after it, moved
        (SAMPLE, "samp", "sample", True),  # made by the edit
        (SAMPLE, "xsample", "sample", True),  # made whole by it
        (SAMPLE, "a sample b", "a samplexb", False),
        (CLIENT_PART, "my_Client", "my_Clien", False),
        (CLIENT_PART, "my_Clien", "my_CLIENT", True),
        (CLIENT_PART, "İ Client", "İ Client x", True),  # lower case is longer than the text
        (CLIENT_PART, "İ x", "İ xclient", True),
    ],
)
def test_holds_after_an_edit(clause: AnyOf, before: str, after: str, holds: bool) -> None:
    previous = TextFacts(before)
    previous.holds(clause)
    assert TextFacts(after, previous).holds(clause) is holds
    assert TextFacts(after).holds(clause) is holds


def test_only_one_text_back() -> None:
    first = TextFacts("sample")
    second = TextFacts("sample = 1", first)
    third = TextFacts("sample = 2", second)
    assert third.holds(SAMPLE) and second._previous is None and third._previous is second


def test_where_a_word_was_seen_moves_with_the_edits() -> None:
    first = TextFacts("x\nsample\n")
    assert first.holds(SAMPLE)
    second = TextFacts("xxxx\nsample\n", first)  # seen after the edit: three further on
    assert second.holds(SAMPLE)
    assert not TextFacts("xxxx\nsamplez\n", second).holds(SAMPLE)


STEP_CALL = AnyOf(attributes=frozenset({"step"}))


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("opt.step()\n", True),
        ("opt . step ()\n", True),
        ("f(opt.\n    step)\n", True),  # a line break inside brackets
        ("x = opt.\\\n    step()\n", True),  # a backslash continuation
        ("f(opt.  # why\n    # more\n\n    step)\n", True),  # comments between
        ("f(opt.\r\n    step)\r\n", True),
        ("f(opt.\r    step)\r", True),
        ("f(a, '#'.\n  step)\n", True),  # a "#" that is no comment: more is sound
        ("def step(self):\n    pass\n", False),
        ("step = 0\nfor i in range(3):\n    step += 1\n", False),
        ("x = 1.\nstep = 2\n", True),  # a float's ".": more is sound
        ("x = 1\nstep = 2\n", False),
        ("# opt.step()\n", True),  # in a comment: more is sound
        ("opt.steps()\n", False),  # not the whole identifier
        ("f(opt, # opt.\n  step)\n", True),
        ("f(opt, # opt\n  step)\n", False),
    ],
)
def test_holds_an_attribute(text: str, holds: bool) -> None:
    assert TextFacts(text).holds(STEP_CALL) is holds
    previous = TextFacts(text + "x = 1\n")
    previous.holds(STEP_CALL)
    assert TextFacts(text, previous).holds(STEP_CALL) is holds  # an edit searches again


def test_an_attribute_implies_its_word() -> None:
    assert STEP_CALL.implies(AnyOf(words=frozenset({"step"})))
    assert STEP_CALL.implies(AnyOf(attributes=frozenset({"step"})))
    assert STEP_CALL.implies(AnyOf(parts=frozenset({"ste"})))
    assert not AnyOf(words=frozenset({"step"})).implies(STEP_CALL)
    with pytest.raises(ValueError):
        AnyOf(attributes=frozenset({"a.b"}))
