"""A finding's message is read in one glance (issue 28, item 6): what is wrong and where, the
concise line ``path:line:col: CODE [*] message`` within ``LINE_LIMIT`` columns. The reason, the
evidence and the fix are the help's (the ``text`` report's ``= help:`` line, the rule's page).

Each rule's own bad examples are linted by the real engine (``tinker_lint.docs.example_findings``,
what the rule pages show) and reported by the real concise reporter: the messages are those a
user sees, their fields filled with real values."""

from __future__ import annotations

import io

import pytest

from tinker_lint.diagnostics import Diagnostic
from tinker_lint.docs import example_findings, rule_page
from tinker_lint.report.text import write_text
from tinker_lint.rules import DEPENDENCY_RULES, PYTHON_RULES
from tinker_lint.rules.base import Rule

LINE_LIMIT = 120  # the concise line, with the example's short path
MESSAGE_LIMIT = 100  # the message alone

RULES = [*PYTHON_RULES, *DEPENDENCY_RULES]


def _findings(rule: type[Rule]) -> list[Diagnostic]:
    found = [d for example in rule.INVALID for d in example_findings(rule, example)]
    assert len(found) == sum(len(example.expect) for example in rule.INVALID), rule.code
    return found


def _concise(found: list[Diagnostic]) -> list[str]:
    out = io.StringIO()
    write_text(found, out, files=1)
    return [line for line in out.getvalue().splitlines() if ": TNK" in line]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_each_bad_examples_concise_line_is_read_in_one_glance(rule: type[Rule]) -> None:
    found = _findings(rule)
    lines = _concise(found)
    assert len(lines) == len(found)
    assert [line for line in lines if len(line) > LINE_LIMIT] == []
    assert [d.message for d in found if len(d.message) > MESSAGE_LIMIT] == []


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_each_finding_has_a_help_and_its_page_shows_it(rule: type[Rule]) -> None:
    """The help carries what the message left out: it is longer, and the rule's page quotes each
    bad example's message and help."""
    page = rule_page(rule.code)
    for d in _findings(rule):
        assert len(d.help) > len(d.message) / 2, (d.message, d.help)
        assert f"> {d.message}\n>\n> help: {d.help}\n" in page


def test_the_limit_can_fail() -> None:
    """The check above measures the whole line: a long message fails it."""
    long = Diagnostic("example.py", 1, 1, "TNK101", "x" * 110, help="h")
    [line] = _concise([long])
    assert len(line) > LINE_LIMIT
