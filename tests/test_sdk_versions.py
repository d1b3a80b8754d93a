"""The per-version SDK facts (``model/facts/sdk.py``'s ``_ASKS_SERVER_PER_CALL``) against the SDK's
own source: the installed release, and older releases downloaded as wheels (never imported: read
as text, as the linter reads code).

A method asks the server on every call when its body, or a function or method of the same module
it calls by name, sends a request (``.result()`` on a submit, ``run_coroutine_threadsafe``); a
method decorated with ``functools.cache`` answers again from its cache.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

from tinker_lint.model.facts.sdk import _ASKS_SERVER_PER_CALL, Client, asks_server_per_call, lookup

_FILES = {
    Client.TRAINING: "tinker/lib/public_interfaces/training_client.py",
    Client.SAMPLING: "tinker/lib/public_interfaces/sampling_client.py",
}
_REQUEST = re.compile(r"\.result\(\)|\brun_coroutine_threadsafe\(|_submit\(\)\.result")
_CACHES = {"cache", "lru_cache"}


def asks_in_source(text: str, client: Client, name: str) -> bool | None:
    """Whether ``client.name`` sends a request on every call in this source; None: no such
    method."""
    tree = ast.parse(text)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    cls = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == client.value)
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    method = methods.get(name)
    if method is None:
        return None
    for decorator in method.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id in _CACHES) or (
            isinstance(target, ast.Attribute) and target.attr in _CACHES
        ):
            return False
    bodies: list[ast.AST] = [method]
    for node in ast.walk(method):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in functions:
            bodies.append(functions[node.func.id])
        elif isinstance(node.func, ast.Attribute) and node.func.attr in methods:
            bodies.append(methods[node.func.attr])
    return any(_REQUEST.search(ast.get_source_segment(text, body) or "") for body in bodies)


def _check(root: Path, version: Version) -> None:
    for (client, name), _span in sorted(_ASKS_SERVER_PER_CALL.items()):
        asks = asks_in_source((root / _FILES[client]).read_text(encoding="utf-8"), client, name)
        method = lookup(client, name)
        assert method is not None
        if asks is None:
            continue  # not in this release: nothing to call
        assert asks_server_per_call(method, version) is asks, (version, client.value, name)


def test_the_installed_release() -> None:
    spec = importlib.util.find_spec("tinker")
    if spec is None or spec.origin is None:
        pytest.skip("tinker is a test dependency: pip install -e '.[test]'")
    _check(Path(spec.origin).parent.parent, Version(importlib.metadata.version("tinker")))


def test_the_reader_tells_a_request_from_a_cache() -> None:
    source = """
from functools import cache
def _fetch(holder):
    return holder.run_coroutine_threadsafe(go()).result()
class TrainingClient:
    def get_info(self):
        return self._get_info_submit().result()
    def get_tokenizer(self):
        return _fetch(self.holder)
    @cache
    def get_cached(self):
        return _fetch(self.holder)
    def local(self):
        return self._info
"""
    assert asks_in_source(source, Client.TRAINING, "get_info") is True
    assert asks_in_source(source, Client.TRAINING, "get_tokenizer") is True
    assert asks_in_source(source, Client.TRAINING, "get_cached") is False
    assert asks_in_source(source, Client.TRAINING, "local") is False
    assert asks_in_source(source, Client.TRAINING, "missing") is None


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.7.0", "0.8.0", "0.36.0"])
def test_older_releases(version: str, tmp_path: Path) -> None:
    """The boundaries of each span: 0.7.0 (get_tokenizer cached), 0.8.0 (no longer), 0.36.0 (the
    last release before 0.38)."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--only-binary=:all:", "--disable-pip-version-check", "-d", str(tmp_path)),
            f"tinker=={version}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    wheels = list(tmp_path.glob("tinker-*.whl"))
    if done.returncode != 0 or not wheels:
        pytest.skip(f"tinker {version} could not be downloaded: {done.stderr.strip()[-200:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(tmp_path / "src", [n for n in wheel.namelist() if n in _FILES.values()])
    _check(tmp_path / "src", Version(version))
