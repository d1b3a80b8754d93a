"""Closing a document frees everything the server kept for it (issue 29: 8 different 170 KB files
opened and closed took the server from 55 to 561 MB): its lint, its buffer in the project index,
what each stage of the engine keeps for the buffer's next lint (``incremental/buffers.py``), and, once
the collection after the close ran, the objects themselves (frozen by ``server/memory.py``, their
cycles would have waited for the next full collection)."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import libcst as cst
import pytest

pytest.importorskip("pygls")

# A TNK101 (the wait before the independent ``optim_step``) in each function.
LOOP = """\
def train_{number}_{i}(training_client, batches, adam):
    for batch in batches:
        result = training_client.forward_backward(batch, loss_fn="cross_entropy").result()
        training_client.optim_step(adam)
        print(result.loss)
"""


@pytest.fixture(autouse=True)
def _restore_gc():
    yield
    gc.unfreeze()
    gc.enable()


def _kept() -> set[str]:
    """The buffers some stage keeps anything for."""
    from tinker_lint.incremental import buffers

    return {key for store in buffers._stores for key in store._items}


def _documents(tmp_path: Path, count: int) -> dict[str, str]:
    """Distinct files with findings (each goes through the analysis, and is kept)."""
    texts = {}
    for number in range(count):
        functions = [LOOP.format(number=number, i=i) for i in range(20)]
        texts[(tmp_path / f"m{number}.py").as_uri()] = "\n\n".join(functions)
    return texts


def test_closing_a_document_frees_what_was_kept_for_it(tmp_path: Path) -> None:
    from tinker_lint.incremental import buffers
    from tinker_lint.server.app import TinkerLintServer
    from tinker_lint.syntax import parse

    (tmp_path / "pyproject.toml").write_text('[tool.tinker-lint]\ntinker-version = "0.38.0"\n')
    texts = _documents(tmp_path, 8)
    paths = {uri: str(tmp_path / uri.rsplit("/", 1)[-1]) for uri in texts}

    class Served(TinkerLintServer):
        workspace = SimpleNamespace(root_path=str(tmp_path), position_encoding=None)

        def __init__(self) -> None:
            super().__init__()
            self.published: dict[str, int] = {}

        @property
        def pulls(self) -> bool:  # pushed diagnostics
            return False

        def open_document(self, uri: str) -> object:
            return SimpleNamespace(version=1, source=texts[uri]) if uri in texts else None

        def text_document_publish_diagnostics(self, params: Any) -> None:
            self.published[params.uri] = len(params.diagnostics)

        def collect_when_quiet(self) -> None:  # the pause's collection: run below, at once
            self.collector.resume()

    async def session() -> Served:
        server = Served()
        for uri in texts:  # each opened, linted, closed: as the 8 files
            server.schedule([uri])
            assert server.drainer is not None
            await server.drainer
            assert server.published[uri] > 0  # analysed, with findings
            assert paths[uri] in _kept()
            assert parse._recent.get(paths[uri]) is not None
            server.collector.idle()  # what survived the lint is frozen
            await server.closed(uri)
            assert server.published[uri] == 0  # its findings withdrawn
        server.collector.idle()  # the collection the closes are owed
        server.worker.shutdown()
        return server

    buffers.forget_all()
    server = asyncio.run(session())
    assert _kept() == set()
    assert server.linted == {} and not server.stale and not server.pending
    assert server.linter._buffers == {}
    assert not set(paths.values()) & set(server.linter.index._buffers)
    # The trees themselves are gone, not frozen garbage waiting for a full collection (seen
    # again once unfrozen, uncollected).
    gc.unfreeze()
    left = {
        node.name.value
        for node in gc.get_objects()
        if isinstance(node, cst.FunctionDef) and node.name.value.startswith("train_")
    }
    assert left == set()
