"""Editor diagnostics: python-lsp-server, with its flake8 plugin configured as the docs say, shows
TNK findings. A real `pylsp` is driven over stdio with a minimal JSON-RPC client."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.checkout import checkout_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"

SERIALIZED_LOOP = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
for batch in batches:
    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()
    tc.optim_step(tinker.AdamParams(learning_rate=1e-4)).result()
"""


class LspClient:
    """Content-Length framed JSON-RPC over a child's stdin/stdout."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, timeout: float = 30) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == self.next_id, timeout)["result"]

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def wait_for(self, predicate, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no matching message from the language server")
            message = self.messages.get(timeout=remaining)
            if predicate(message):
                return message

    def close(self) -> None:
        try:
            self.request("shutdown", {}, timeout=10)
            self.notify("exit", {})
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def test_pylsp_flake8_publishes_tnk101(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # The editor setup from the docs: flake8's config and pylsp's settings.
    (workspace / ".flake8").write_text((EXAMPLES / "flake8.cfg").read_text())
    settings = json.loads((EXAMPLES / "pylsp-settings.json").read_text())
    document = workspace / "train.py"
    document.write_text(SERIALIZED_LOOP)

    env = checkout_env()
    # pylsp runs the `flake8` executable from PATH: the one installed beside this Python.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    client = LspClient([sys.executable, "-m", "pylsp"], workspace, env)
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "capabilities": {},
            },
        )
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": settings})
        uri = document.as_uri()
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": 1,
                    "text": SERIALIZED_LOOP,
                }
            },
        )
        published = client.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and any(d.get("code", "").startswith("TNK") for d in m["params"]["diagnostics"])
            ),
            timeout=60,
        )
    finally:
        client.close()

    # flake8 reports its own codes too (E501 here); ours are the TNK ones.
    diagnostics = [d for d in published["params"]["diagnostics"] if d["code"].startswith("TNK")]
    assert {d["source"] for d in diagnostics} == {"flake8"}
    got = [
        (d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
        for d in diagnostics
    ]
    # 0-based LSP positions of TNK101 at 5:66 and TNK102 at 6:58 (the waits' `result`).
    assert got == [("TNK101", 4, 65), ("TNK102", 5, 57)]
    # pylsp takes the severity from the code alone: Warning (2) for every code outside its list of
    # pyflakes codes, so for every TNK code, error-level ones too (docs/configuration.md, "Levels
    # under flake8").
    assert [d["severity"] for d in diagnostics] == [2, 2]
    tnk101 = diagnostics[0]
    # pylsp's flake8 plugin ends every range at the end of the line.
    line = SERIALIZED_LOOP.splitlines(True)[4]
    assert tnk101["range"]["end"] == {"line": 4, "character": len(line)}
    assert tnk101["message"].startswith("TNK101 Waiting for `forward_backward` before submitting")
