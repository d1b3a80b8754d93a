"""A small Language Server Protocol client for the tests: it starts ``tinker-lint server`` as a
subprocess and speaks JSON-RPC to it over stdio, with LSP's ``Content-Length`` framing, as an
editor does. Everything the server sends is kept: responses by id, notifications and the
server's own requests in order (each request answered as ``answers`` says, else with null).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.checkout import checkout_env

TIMEOUT = 15.0

Message = dict[str, Any]


def uri(path: Path | str) -> str:
    return Path(path).absolute().as_uri()


class LspClient:
    def __init__(
        self,
        *,
        cwd: Path | None = None,
        args: tuple[str, ...] = (),
        command: list[str] | None = None,
    ) -> None:
        """``command``: another server to start instead of this checkout's (the bench times
        ``ruff server`` with the same client)."""
        if command is None:
            command = [sys.executable, "-m", "tinker_lint", "server", *args]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=checkout_env(),
        )
        self._next_id = 0
        self.initialized: Any = None  # the server's answer to ``initialize``
        self._condition = threading.Condition()
        self.responses: dict[int, Message] = {}
        self.received: list[Message] = []  # notifications and the server's requests, in order
        # The server's requests, by method: what to answer (the request's params given).
        self.answers: dict[str, Callable[[Any], Any]] = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # --- the wire ----------------------------------------------------------------------------
    def _send(self, message: Message) -> None:
        body = json.dumps(message).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    with self._condition:
                        self._condition.notify_all()
                    return  # the server closed its stdout
                header = header.strip()
                if not header:
                    break
                name, _, value = header.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length is not None
            message = json.loads(stream.read(length))
            if "id" in message and "method" not in message:
                with self._condition:
                    self.responses[message["id"]] = message
                    self._condition.notify_all()
                continue
            if "id" in message:  # the server asks something: answer it, as an editor would
                answer = self.answers.get(message["method"], lambda _params: None)
                with contextlib.suppress(OSError, ValueError):  # unless the test closed stdin
                    self._send(
                        {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": answer(message.get("params")),
                        }
                    )
            with self._condition:
                self.received.append(message)
                self._condition.notify_all()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # --- requests and notifications ----------------------------------------------------------
    def request(self, method: str, params: Any = None, *, timeout: float = TIMEOUT) -> Any:
        """The result of a request (an error response fails the test)."""
        response = self.response(method, params, timeout=timeout)
        assert "error" not in response, response
        return response.get("result")

    def response(self, method: str, params: Any = None, *, timeout: float = TIMEOUT) -> Message:
        self._next_id += 1
        number = self._next_id
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        with self._condition:
            if not self._condition.wait_for(
                lambda: number in self.responses or self.process.poll() is not None, timeout
            ):
                raise AssertionError(f"no answer to {method} in {timeout} s; stderr: {self.stderr}")
            if number not in self.responses:
                raise AssertionError(f"the server died on {method}: {self.stderr}")
            return self.responses.pop(number)

    def error(self, method: str, params: Any = None, *, timeout: float = 5.0) -> Message:
        """The error a request is answered with (an answer that is not an error, or none within
        ``timeout`` seconds, fails the test): ``{"code": ..., "message": ...}``."""
        response = self.response(method, params, timeout=timeout)
        assert "error" in response and "result" not in response, response
        return dict(response["error"])

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(
        self,
        method: str,
        where: Callable[[Any], bool] = lambda _params: True,
        *,
        after: int = 0,
        timeout: float = TIMEOUT,
    ) -> Any:
        """The params of the first message ``method`` received (from index ``after`` on) that
        ``where`` accepts."""

        def found() -> Any:
            for message in self.received[after:]:
                if message["method"] == method and where(message.get("params")):
                    return message
            return None

        with self._condition:
            if not self._condition.wait_for(
                lambda: found() is not None or self.process.poll() is not None, timeout
            ):
                raise AssertionError(f"no {method} in {timeout} s; stderr: {self.stderr}")
            message = found()
            if message is None:
                raise AssertionError(f"the server died waiting for {method}: {self.stderr}")
            return message.get("params")

    def mark(self) -> int:
        """Where the messages received so far end (``wait_for(after=...)``)."""
        with self._condition:
            return len(self.received)

    def diagnostics(
        self,
        path: Path,
        *,
        after: int = 0,
        version: int | None = None,
        timeout: float = TIMEOUT,
    ) -> list[Any]:
        """The next diagnostics published for ``path`` (for its ``version``, if given)."""
        wanted = uri(path)
        params = self.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == wanted and (version is None or p.get("version") == version),
            after=after,
            timeout=timeout,
        )
        return list(params["diagnostics"])

    # --- the session -------------------------------------------------------------------------
    def initialize(
        self,
        root: Path,
        capabilities: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        """``options``: the ``initializationOptions`` (none unless given)."""
        params: dict[str, Any] = {
            "processId": None,
            "rootUri": uri(root),
            "capabilities": capabilities if capabilities is not None else CAPABILITIES,
            "workspaceFolders": [{"uri": uri(root), "name": root.name}],
        }
        if options is not None:
            params["initializationOptions"] = options
        result = self.request("initialize", params)
        self.notify("initialized", {})
        self.initialized = result
        return result

    def open(self, path: Path, text: str | None = None, version: int = 1) -> int:
        mark = self.mark()
        if text is None:
            text = path.read_text(encoding="utf-8")
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri(path),
                    "languageId": "python",
                    "version": version,
                    "text": text,
                }
            },
        )
        return mark

    def change(self, path: Path, text: str, version: int) -> int:
        mark = self.mark()
        self.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri(path), "version": version},
                "contentChanges": [{"text": text}],
            },
        )
        return mark

    def close(self, path: Path) -> int:
        mark = self.mark()
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri(path)}})
        return mark

    def stop(self, timeout: float = 30.0) -> int:
        """shutdown, exit: the server's exit code."""
        if self.process.poll() is None:
            self.request("shutdown")
            self.notify("exit")
        try:
            return self.process.wait(timeout)
        finally:
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


# What an editor that takes versioned edits and pushes diagnostics declares (no pull).
CAPABILITIES: dict[str, Any] = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["quickfix", "source", "source.fixAll"]}
            }
        },
    },
}


def wait_until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def apply_edits(text: str, edits: list[Any]) -> str:
    """``text`` with LSP ``TextEdit``s applied (UTF-16 columns), as an editor applies them: all
    positions are in the text before any edit."""
    import re

    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]

    def offset(position: dict[str, int]) -> int:
        if position["line"] >= len(starts):
            return len(text)
        start = starts[position["line"]]
        units = 0
        index = start
        while units < position["character"] and index < len(text) and text[index] not in "\r\n":
            units += 2 if ord(text[index]) > 0xFFFF else 1
            index += 1
        return index

    spans = sorted(
        ((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
