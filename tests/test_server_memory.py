"""The server's garbage-collection policy (``server/memory.py``): paused during lints, run between."""

from __future__ import annotations

import gc

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
