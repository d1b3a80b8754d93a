"""Every request gets an answer, as LSP says: an error with the code LSP gives, never silence (a
client would wait for ever) nor an internal error with a traceback. The real server, over stdio
(``tests/lsp_client.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp_client import LspClient, uri

pytest.importorskip("pygls")

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tinker-lint]\ntinker-version = "0.38.0"\n', encoding="utf-8"
    )
    (tmp_path / "a.py").write_text("import tinker\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def client(project: Path) -> Iterator[LspClient]:
    started = LspClient(cwd=project)
    try:
        yield started
    finally:
        started.kill()


def _hover(path: Path, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": character}}


def test_a_request_before_initialize_gets_server_not_initialized(
    client: LspClient, project: Path
) -> None:
    # A notification before ``initialize`` is dropped (LSP): nothing is linted, nothing fails.
    client.open(project / "a.py")
    error = client.error("textDocument/hover", _hover(project / "a.py"))
    assert error["code"] == SERVER_NOT_INITIALIZED
    assert "initialize" in error["message"] and "Traceback" not in str(error)
    assert "data" not in error  # no traceback
    # Then initialized, it serves as usual.
    client.initialize(project)
    assert client.request("textDocument/hover", _hover(project / "a.py")) is None
    assert client.stop() == 0


def test_a_request_whose_params_do_not_fit_gets_invalid_params(
    client: LspClient, project: Path
) -> None:
    client.initialize(project)
    path = project / "a.py"
    mark = client.open(path)
    client.diagnostics(path, after=mark)
    assert client.error("textDocument/hover", _hover(path, line=-1))["code"] == INVALID_PARAMS
    bad_document = {"textDocument": 5, "position": {"line": 0, "character": 0}}
    assert client.error("textDocument/hover", bad_document)["code"] == INVALID_PARAMS
    action = {
        "textDocument": {"uri": uri(path)},
        "range": {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    }
    assert client.error("textDocument/codeAction", action)["code"] == INVALID_PARAMS
    assert client.error("textDocument/diagnostic", {"textDocument": 5})["code"] == INVALID_PARAMS
    # A notification that does not fit is dropped; the server serves on.
    client.notify("textDocument/didOpen", {"textDocument": 5})
    assert client.request("textDocument/hover", _hover(path)) is None
    assert client.stop() == 0


def test_a_request_after_shutdown_gets_invalid_request(client: LspClient, project: Path) -> None:
    client.initialize(project)
    assert client.request("shutdown") is None
    assert client.error("textDocument/hover", _hover(project / "a.py"))["code"] == INVALID_REQUEST
    assert client.error("shutdown")["code"] == INVALID_REQUEST
    client.notify("exit")
    assert client.process.wait(30) == 0  # exit after shutdown: 0
