"""TNK105/TNK106 apply from tinker 0.38 on: ``--tinker-version 0.36`` turns them off and leaves
every other finding of the same files in place."""

from __future__ import annotations

import json

import pytest

from tests.fixture_expectations import FIXTURES, ROOT, expectations
from tinker_lint.cli import main
from tinker_lint.rules import DOCUMENTED_RULES

# The rules that declare a first tinker version.
GATED = {code for code, rule in DOCUMENTED_RULES.items() if rule.min_tinker_version is not None}


def _cli(capsys, monkeypatch, *args: str) -> set[tuple[str, int, int]]:
    monkeypatch.chdir(ROOT)
    main(["--isolated", "--output-format", "json", *args])
    return {
        (d["code"], d["location"]["row"], d["location"]["column"])
        for d in json.loads(capsys.readouterr().out)
    }


@pytest.mark.parametrize("name", ["tnk105_bad.py", "tnk106_bad.py", "tnk108_good.py"])
def test_gated_rules_off_before_0_38(name, capsys, monkeypatch):
    path = FIXTURES / name
    expected = expectations(path.read_text(encoding="utf-8"))
    assert {code for code, _, _ in expected} & GATED, "the fixture must exercise a gated rule"
    rel = str(path.relative_to(ROOT))
    assert _cli(capsys, monkeypatch, "--tinker-version", "0.38", rel) == expected
    old = _cli(capsys, monkeypatch, "--tinker-version", "0.36", rel)
    assert old == {f for f in expected if f[0] not in GATED}
