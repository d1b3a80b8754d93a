"""A file too long to analyse on every edit gets TNK003 at once (issue 29: a 1 MB file took the
server 15 s and 1 GB): the server's own limit (``server/lint.py``, ``SERVER_MAX_FILE_CHARS``), below
the command's 1,000,000 characters, unless the configuration's is lower."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.lsp_client import LspClient
from tests.snippets import TRAIN_FUNCTION

pytest.importorskip("pygls")

LOOP = TRAIN_FUNCTION


def _program(chars: int) -> str:
    parts, total, i = ["import tinker\n\n\n"], 0, 0
    while total < chars:
        parts.append(LOOP.format(i=i))
        total += len(parts[-1])
        i += 1
    return "".join(parts)


SERVER_MAX_FILE_CHARS = 250_000  # docs/server.md says it


def test_a_file_over_the_servers_limit_gets_tnk003_at_once(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.tinker-lint]\ntinker-version = "0.38.0"\n')
    client = LspClient(cwd=tmp_path)
    try:
        client.initialize(tmp_path)
        small, big = tmp_path / "small.py", tmp_path / "big.py"
        mark = client.open(small, _program(2_000))
        assert {d["code"] for d in client.diagnostics(small, after=mark)} == {"TNK101"}
        text = _program(SERVER_MAX_FILE_CHARS + 1)
        assert len(text) < 1_000_000  # the command would analyse it
        started = time.monotonic()
        mark = client.open(big, text)
        found = client.diagnostics(big, after=mark, timeout=120)
        assert [d["code"] for d in found] == ["TNK003"]
        assert f"more than the {SERVER_MAX_FILE_CHARS:,} tinker-lint" in found[0]["message"]
        assert time.monotonic() - started < 10  # its analysis takes tens of seconds
        assert client.stop() == 0
    finally:
        client.kill()
    from tinker_lint.server import lint

    assert lint.SERVER_MAX_FILE_CHARS == SERVER_MAX_FILE_CHARS


def test_the_lower_limit_wins(tmp_path: Path) -> None:
    """``--max-file-chars`` of the server, or the configuration's if lower; 0: the
    configuration's only."""
    from tinker_lint.server.lint import Linter

    text = _program(2_000)
    path = str(tmp_path / "m.py")
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.tinker-lint]\ntinker-version = "0.38.0"\n')

    def codes(linter: Linter) -> set[str]:
        return {d.code for d in linter.lint(path, text).diagnostics}

    assert codes(Linter(len(text))) == {"TNK101"}
    assert codes(Linter(len(text) - 1)) == {"TNK003"}
    assert codes(Linter(0)) == {"TNK101"}
    config.write_text('[tool.tinker-lint]\ntinker-version = "0.38.0"\nmax-file-chars = 100\n')
    for linter in (Linter(len(text) - 1), Linter(0), Linter(50)):
        (found,) = linter.lint(path, text).diagnostics
        limit = linter.max_file_chars or 100
        assert found.code == "TNK003" and f"than the {min(limit, 100):,} " in found.message
