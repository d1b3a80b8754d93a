"""The server's garbage-collection policy (``server/memory.py``): paused during lints, run between."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from tinker_lint.server import memory
from tinker_lint.server.memory import Collector


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _restore_gc():
    yield
    gc.unfreeze()
    gc.enable()


def test_paused_while_any_lint_runs_and_until_its_findings_are_sent() -> None:
    collector = Collector()
    assert not collector.owed()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():  # a lint of a dependent, inside
            assert not gc.isenabled()
        assert not gc.isenabled()
    # Off until its findings are sent: on now, it would collect the lint's objects first.
    assert not gc.isenabled() and collector.owed()
    with collector.paused():
        collector.resume()  # another lint under way: still off
        assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled() and collector.owed()  # the collection in the pause is still owed
    collector.idle()
    assert gc.isenabled() and not collector.owed()


def test_idle_frees_the_lints_cycles_and_freezes_the_rest() -> None:
    collector = Collector()
    gc.collect()
    with collector.paused():
        garbage = _Cycle()
        kept = _Cycle()
    del garbage
    collector.idle()
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects())  # frozen: no collection walks it
    gc.unfreeze()
    # The cycle left by the lint was freed; the one still referenced was kept.
    assert [o for o in gc.get_objects() if type(o) is _Cycle] == [kept]


def test_idle_does_nothing_while_a_lint_runs() -> None:
    collector = Collector()
    with collector.paused():
        collector.idle()
        assert gc.get_freeze_count() == 0


def test_a_full_collection_unfreezes_cycles_left_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "FULL_EVERY", 2)
    collector = Collector()
    frozen = _Cycle()
    collector.idle()  # frozen with the rest
    del frozen
    collector.idle()  # the second: everything is unfrozen, collected, frozen again
    gc.unfreeze()
    assert not any(type(o) is _Cycle for o in gc.get_objects())


def test_overdue_once_max_deferred_lints_went_by_without_a_collection() -> None:
    collector = Collector()
    for _ in range(memory.MAX_DEFERRED - 1):
        with collector.paused():
            pass
        assert not collector.overdue()  # the collection may still wait for a pause
    with collector.paused(), collector.paused():  # a dependent's lint inside: one more
        pass
    assert collector.overdue()
    collector.idle()
    assert not collector.overdue()


def test_a_lint_under_way_keeps_the_count() -> None:
    collector = Collector()
    for _ in range(memory.MAX_DEFERRED):
        with collector.paused():
            pass
    with collector.paused():
        collector.idle()  # refused while a lint runs: nothing was collected
    assert collector.overdue()
    assert not gc.isenabled()  # and the collector is still off


def test_a_drain_turns_the_collector_on_between_its_lints(tmp_path) -> None:
    """The server's loop over files to lint (``_drain``, opening a whole project): each file's
    findings sent, the collector is on again before the next lint, or every lint's garbage
    would wait for the drain's end (336 MB with the cookbook open, against 161)."""
    import asyncio
    from types import SimpleNamespace

    from tinker_lint.server.app import TinkerLintServer

    texts = {f"file://{tmp_path}/m{i}.py": f"x = {i}\n" for i in range(3)}

    class Recording(TinkerLintServer):
        workspace = SimpleNamespace(root_path=str(tmp_path))

        def __init__(self) -> None:
            super().__init__()
            self.on_at_lint: list[bool] = []
            self.published: list[str] = []

        def open_document(self, uri: str) -> object:
            return SimpleNamespace(version=1, source=texts[uri])

        def _lint_now(self, path: str, text: str):
            self.on_at_lint.append(gc.isenabled())
            return super()._lint_now(path, text)

        def text_document_publish_diagnostics(self, params: Any) -> None:
            self.published.append(params.uri)

        def collect_when_quiet(self) -> None:  # the pause's collection: not this test's
            self.collector.resume()

    async def drain() -> Recording:
        server = Recording()
        server.schedule(list(texts))
        assert server.drainer is not None
        await server.drainer
        server.worker.shutdown()
        return server

    gc.enable()
    server = asyncio.run(drain())
    assert server.published == list(texts)
    assert server.on_at_lint == [True, True, True]
    assert gc.isenabled()
