"""Generated programs: no exception escapes the engine and no rule fails (TNK000) on any of them.

The model and every rule run on each program (``prefilter=False``), whatever its text. Sizes:
``TINKER_LINT_FUZZ_EXAMPLES`` (default 80) hypothesmith programs from the grammar, half as many
Tinker-shaped programs (``tinker_programs.py``), and a twentieth as many from hypothesmith's libcst
strategy (slow: one to two seconds each, the longest test of the suite at a tenth). A nightly run: ``TINKER_LINT_FUZZ_EXAMPLES=5000``.

The default run is derandomized, so CI on a clean machine tests the same programs every time and a
failure there reproduces here; a run with ``TINKER_LINT_FUZZ_EXAMPLES`` set explores at random.
"""

from __future__ import annotations

import os

import hypothesmith
import libcst
import pytest
from hypothesis import HealthCheck, example, given, settings

from tests.robustness_support import compiles
from tests.tinker_programs import PROGRAMS
from tinker_lint.io.config import default_settings
from tinker_lint.run.engine import lint_text

EXPLORE = "TINKER_LINT_FUZZ_EXAMPLES" in os.environ
# 80 by default: the three tests were 40 s of the suite's 5-minute budget at 200, 20 s at 120.
EXAMPLES = int(os.environ.get("TINKER_LINT_FUZZ_EXAMPLES", "80"))
# hypothesmith compiles its programs: CPython's warnings about them are not ours.
pytestmark = [pytest.mark.filterwarnings("ignore::SyntaxWarning"), pytest.mark.slow]
SETTINGS = default_settings()


def fuzz(examples: int):
    return settings(
        max_examples=max(examples, 1),
        deadline=None,
        # hypothesmith filters many draws (its generated source must compile): not a test problem.
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        database=None,
        derandomize=not EXPLORE,
    )


def check(source: str) -> None:
    result = lint_text(source, "fuzz.py", SETTINGS, prefilter=False)
    lines = source.count("\n") + 1
    for d in result.diagnostics:
        assert d.code != "TNK000", (source, d.message)
        assert 1 <= d.line <= lines and d.col >= 1, (source, d)
        if d.code == "TNK001":
            # Only what CPython itself rejects is a syntax error.
            assert not compiles(source), (source, d.message)
    skipped = [d.message for d in result.diagnostics if d.code == "TNK003"]
    if skipped:
        # Only text libcst's own parser rejects may be left unanalysed (CPython accepted it: a
        # libcst gap, e.g. a line continuation before the end of a CRLF file); it is a finding
        # (TNK003), never a crash.
        assert libcst_rejects(source), (source, skipped)
        assert len(skipped) == 1 and "libcst cannot parse it" in skipped[0], skipped


def libcst_rejects(source: str) -> bool:
    try:
        libcst.parse_module(source)
    except libcst.ParserSyntaxError:
        return True
    return False


@fuzz(EXAMPLES)
@given(hypothesmith.from_grammar())
# Found by CI: Python compiles a trailing continuation in a CRLF file, libcst does not.
@example("\n\\\r\n")
def test_programs_from_the_grammar(source):
    check(source)


@fuzz(EXAMPLES // 2)
@given(PROGRAMS)
def test_tinker_shaped_programs(source):
    check(source)


@fuzz(EXAMPLES // 20)
@given(hypothesmith.from_node())
def test_programs_from_libcst_nodes(source):
    check(source)
