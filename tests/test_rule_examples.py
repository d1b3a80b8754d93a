"""Each rule's own VALID and INVALID examples (the ones its docs page shows) give exactly their
``expect`` positions for that rule, at the example's tinker version."""

from __future__ import annotations

from dataclasses import replace

import pytest
from packaging.version import Version

from tinker_lint.io.settings import Settings
from tinker_lint.rules import PYTHON_RULES
from tinker_lint.rules.base import Example, Rule
from tinker_lint.run.engine import lint_text

DEFAULT_VERSION = Version("0.38.0")

CASES = [
    pytest.param(rule, kind, index, example, id=f"{rule.code}-{kind}-{index}")
    for rule in PYTHON_RULES
    for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for index, example in enumerate(examples)
]


def test_every_rule_has_both_kinds_of_example():
    for rule in PYTHON_RULES:
        assert rule.VALID, rule.code
        assert rule.INVALID, rule.code
        assert all(example.expect for example in rule.INVALID), rule.code
        assert not any(example.expect for example in rule.VALID), rule.code


@pytest.mark.parametrize(("rule", "kind", "index", "example"), CASES)
def test_example(rule: type[Rule], kind: str, index: int, example: Example):
    version = Version(example.tinker_version) if example.tinker_version else DEFAULT_VERSION
    # Engine errors (TNK000 internal error, TNK001 syntax error) stay selected: they must not occur.
    settings = replace(Settings(), select=(rule.code, "TNK000", "TNK001"), tinker_version=version)
    result = lint_text(example.code, f"{rule.code.lower()}_{kind}_{index}.py", settings)
    found = sorted((d.line, d.col) for d in result.diagnostics if d.code == rule.code)
    assert [d for d in result.diagnostics if d.code != rule.code] == []
    assert found == sorted(example.expect)
