"""Each rule's own VALID and INVALID examples (the ones its docs page shows) give exactly their
``expect`` positions for that rule, at the example's tinker version; a rule with a fix turns each
INVALID example into its declared ``fixed`` text; each finding's message and help are the rule's
declared ``message`` and ``help`` templates, filled in."""

from __future__ import annotations

import re
import string
from dataclasses import replace

import pytest
from packaging.version import Version

from tinker_lint.deps import QwenVlUse, lint_dependency_file
from tinker_lint.io.settings import Settings
from tinker_lint.rules import DEPENDENCY_RULES, PYTHON_RULES
from tinker_lint.rules.base import Example, Rule
from tinker_lint.run.engine import lint_text
from tinker_lint.run.fixer import fix_text

DEFAULT_VERSION = Version("0.38.0")

CASES = [
    pytest.param(rule, kind, index, example, id=f"{rule.code}-{kind}-{index}")
    for rule in PYTHON_RULES
    for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for index, example in enumerate(examples)
]
FIXABLE = [rule for rule in PYTHON_RULES if rule.autofix is not None]


def _settings(rule: type[Rule], example: Example) -> Settings:
    version = Version(example.tinker_version) if example.tinker_version else DEFAULT_VERSION
    # Engine errors (TNK000 internal error, TNK001 syntax error) stay selected: they must not occur.
    return replace(Settings(), select=(rule.code, "TNK000", "TNK001"), tinker_version=version)


def template_pattern(template: str) -> re.Pattern[str]:
    """A ``str.format`` template as a regular expression: each field matches any text (the
    dependency rules leave some empty), the literal text only itself."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append("(.*)")
    return re.compile("".join(parts), re.DOTALL)


def test_every_rule_has_both_kinds_of_example():
    for rule in PYTHON_RULES:
        assert rule.VALID, rule.code
        assert rule.INVALID, rule.code
        assert all(example.expect for example in rule.INVALID), rule.code
        assert not any(example.expect for example in rule.VALID), rule.code


@pytest.mark.parametrize(("rule", "kind", "index", "example"), CASES)
def test_example(rule: type[Rule], kind: str, index: int, example: Example):
    settings = _settings(rule, example)
    result = lint_text(example.code, f"{rule.code.lower()}_{kind}_{index}.py", settings)
    found = sorted((d.line, d.col) for d in result.diagnostics if d.code == rule.code)
    assert [d for d in result.diagnostics if d.code != rule.code] == []
    assert found == sorted(example.expect)
    for d in result.diagnostics:
        assert any(
            template_pattern(message).fullmatch(d.message)
            and template_pattern(help).fullmatch(d.help)
            for message, help in rule.templates()
        ), (d.message, d.help, rule.templates())


@pytest.mark.parametrize("rule", PYTHON_RULES, ids=lambda rule: rule.code)
def test_a_template_says_what_the_finding_says(rule: type[Rule]):
    """A template with the words of its message, not only fields the check fills with prose:
    at least 15 literal characters (`` `{call}` reads the same file {in_step}``). Every rule's
    prose is declared (issue 31: a rule's declaration is what it reports): a kind of finding
    that says something else is one of its ``variants``."""
    for message, help in rule.templates():
        for template in (message, help):
            literal = sum(len(text) for text, _, _, _ in string.Formatter().parse(template))
            assert literal >= 15, (rule.code, template)


def test_a_fixable_rule_declares_what_its_fix_makes_of_each_bad_example():
    assert FIXABLE, "no rule declares an autofix"
    for rule in PYTHON_RULES:
        declared = [example.fixed is not None for example in rule.INVALID]
        assert all(declared) if rule.autofix else not any(declared), rule.code
        assert not any(example.fixed for example in rule.VALID), rule.code


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda rule: rule.code)
def test_the_fix_turns_each_bad_example_into_its_fixed_text(rule: type[Rule]):
    for index, example in enumerate(rule.INVALID):
        path = f"{rule.code.lower()}_invalid_{index}.py"
        result = fix_text(example.code, path, _settings(rule, example))
        assert result.problems == []
        assert result.text == example.fixed, result.text
        assert [(d.line, d.col) for d in result.fixed] == list(example.expect)
        assert result.remaining == []


def test_the_message_pattern_rejects_another_message():
    """The template check above can fail: the literal text must match."""
    pattern = template_pattern("`{call}` runs {every_step}: move it")
    assert pattern.fullmatch("`f()` runs on every step: move it")
    assert not pattern.fullmatch("`f()` runs on every step: hoist it")
    assert not pattern.fullmatch("`f()` runs on every step: move it, please")


@pytest.mark.parametrize("rule", DEPENDENCY_RULES, ids=lambda rule: rule.code)
def test_dependency_rule_findings_carry_the_declared_message(rule: type[Rule]):
    """The TNK3xx message is written by ``tinker_lint.deps``; it must be the declared one."""
    pattern = template_pattern(rule.message)
    help_pattern = template_pattern(rule.help)
    qwen = QwenVlUse("train.py", 1, "Qwen3-VL")
    for example in rule.INVALID:
        assert example.filename is not None
        result = lint_dependency_file(
            example.filename, example.code, Settings(), qwen if example.qwen_vl else None
        )
        assert len(result.diagnostics) == len(example.expect)
        for d in result.diagnostics:
            assert pattern.fullmatch(d.message), (d.message, rule.message)
            assert help_pattern.fullmatch(d.help), (d.help, rule.help)
