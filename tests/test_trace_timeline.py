"""Timeline maths against a brute-force timeline (unit cells of integer time), and the B/E repair
under random event loss (the cookbook's flusher drops events in bursts, spec D1)."""

from __future__ import annotations

import itertools
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinker_lint.trace import readers
from tinker_lint.trace.timeline import (
    NO_SPAN,
    Span,
    blame,
    bubbles,
    depth_profile,
    innermost_at,
    merge,
    union_length,
    zero_intervals,
)

CELLS = 40
interval = st.tuples(st.integers(0, CELLS), st.integers(0, CELLS))
intervals = st.lists(interval, max_size=12)
FAST = settings(max_examples=60, deadline=None)  # each test under a second on a loaded box


def depth_at(pairs: list[tuple[int, int]], cell: int) -> int:
    """How many half-open intervals cover the unit cell [cell, cell + 1)."""
    return sum(1 for start, end in pairs if start <= cell < end)


@FAST
@given(intervals)
def test_union_is_the_covered_cells(pairs: list[tuple[int, int]]) -> None:
    covered = sum(1 for cell in range(CELLS) if depth_at(pairs, cell))
    assert union_length([(float(a), float(b)) for a, b in pairs]) == covered
    merged = merge([(float(a), float(b)) for a, b in pairs])
    assert all(left[1] < right[0] for left, right in itertools.pairwise(merged))


@FAST
@given(intervals, interval)
def test_depth_profile_counts_each_cell_at_its_depth(
    pairs: list[tuple[int, int]], window: tuple[int, int]
) -> None:
    low, high = sorted(window)
    expected: dict[int, float] = {}
    for cell in range(low, high):
        depth = depth_at(pairs, cell)
        expected[depth] = expected.get(depth, 0) + 1
    floats = [(float(a), float(b)) for a, b in pairs]
    assert depth_profile(floats, (float(low), float(high))) == expected


@FAST
@given(intervals, interval)
def test_zero_intervals_are_the_uncovered_cells(
    pairs: list[tuple[int, int]], window: tuple[int, int]
) -> None:
    low, high = sorted(window)
    gaps = zero_intervals([(float(a), float(b)) for a, b in pairs], (float(low), float(high)))
    cells = {cell for start, end in gaps for cell in range(int(start), int(end))}
    assert cells == {cell for cell in range(low, high) if depth_at(pairs, cell) == 0}
    assert gaps == merge(gaps)  # sorted, disjoint, not touching


def test_depth_profile_of_a_pipelined_and_a_serialized_pair() -> None:
    assert depth_profile([(0.0, 2.0), (1.0, 3.0)]) == {1: 2.0, 2: 1.0}
    assert depth_profile([(0.0, 1.0), (2.0, 3.0)]) == {0: 1.0, 1: 2.0}


ops_strategy = st.lists(
    st.tuples(st.integers(0, CELLS), st.integers(0, 8)).map(lambda p: (p[0], p[0] + p[1])),
    max_size=10,
)


@FAST
@given(ops_strategy)
def test_bubbles_against_brute_force(ops: list[tuple[int, int]]) -> None:
    floats = [(float(a), float(b)) for a, b in ops]
    order = sorted(range(len(ops)), key=lambda i: (ops[i][0], ops[i][1], i))
    expected = []
    for rank, index in enumerate(order):
        submit = ops[index][0]
        earlier = order[:rank]
        in_flight = [j for j in earlier if ops[j][1] > submit]
        done_before = [j for j in earlier if ops[j][1] <= submit]
        if not in_flight and done_before:
            previous = max(done_before, key=lambda j: (ops[j][1], j))
            expected.append((index, previous, float(submit), float(ops[previous][1])))
    found = [(b.op, b.previous, b.submit, b.completed) for b in bubbles(floats)]
    assert found == expected


def test_a_serialized_loop_has_a_bubble_at_every_submit_but_the_first() -> None:
    steps = 5
    ops = []
    for step in range(steps):
        t = step * 1.0
        ops += [(t + 0.1, t + 0.4), (t + 0.4, t + 0.5)]  # forward_backward, then optim_step
    found = bubbles(ops)
    assert len(found) == 2 * steps - 1
    assert [round(b.turnaround, 9) for b in found[:3]] == [0.0, 0.6, 0.0]


def test_innermost_span_and_blame() -> None:
    spans = [
        Span(0.0, 10.0, 0, "train_step"),
        Span(1.0, 4.0, 1, "get_batch"),
        Span(2.0, 3.0, 2, "tokenize"),
        Span(6.0, 7.0, 0, "other_task"),  # another track, opened later: the client is there
    ]
    assert innermost_at(spans, 2.5) == "tokenize"
    assert innermost_at(spans, 3.0) == "get_batch"  # tokenize has ended (half-open)
    assert innermost_at(spans, 6.5) == "other_task"
    assert innermost_at(spans, 11.0) == NO_SPAN
    assert blame(spans, [(1.5, 2.5), (5.0, 12.0)]) == {
        "train_step": 4.0,
        "(no span open)": 2.0,
        "other_task": 1.0,
        "get_batch": 0.5,
        "tokenize": 0.5,
    }


span_trees = st.recursive(
    st.just([]), lambda children: st.lists(children, max_size=3), max_leaves=12
)


def _events(tree: list[object], counter: list[int], depth: int) -> list[tuple[str, str, int]]:
    """B/E events of a nested span tree; every span's name is unique (so repair is exact)."""
    events = []
    for child in tree:
        counter[0] += 1
        name = f"span{counter[0]}"
        events.append(("B", name, depth))
        assert isinstance(child, list)
        events += _events(child, counter, depth + 1)
        events.append(("E", name, depth))
    return events


@FAST
@given(span_trees, st.data())
def test_repair_under_random_deletion(tree: list[object], data: st.DataObject) -> None:
    events = _events(tree, [0], 0)
    dropped = data.draw(st.sets(st.integers(0, max(len(events) - 1, 0)), max_size=len(events)))
    records, kept = [], set()
    for position, (phase, name, _) in enumerate(events):
        if position in dropped:
            continue
        kept.add((phase, name))
        record = {"name": name, "ph": phase, "pid": 0, "tid": 7, "ts": position * 1e6}
        records.append(dict(record, args={"track": "main", "thread": "MainThread"}))
    result = readers.trace_from_records(records, readers.TraceEvents(readers.FileHealth("t")))
    begins = {name: position for position, (phase, name, _) in enumerate(events) if phase == "B"}
    ends = {name: position for position, (phase, name, _) in enumerate(events) if phase == "E"}
    depth = {name: d for _, name, d in events}
    both = {name for name in begins if ("B", name) in kept and ("E", name) in kept}
    closed = {
        (result.spans.name(i), result.spans.start[i], result.spans.end[i])
        for i in range(len(result.spans))
    }
    # Every span whose B and E survived comes back exactly, and nothing else is invented.
    assert closed == {(name, float(begins[name]), float(ends[name])) for name in both}
    if not dropped:  # lost events shift depths (a lost E nests its siblings); none lost: exact
        assert all(result.spans.depth[i] == depth[result.spans.name(i)] for i in range(len(closed)))
    only_e = sum(1 for name in begins if ("E", name) in kept and ("B", name) not in kept)
    only_b = sum(1 for name in begins if ("B", name) in kept and ("E", name) not in kept)
    assert (result.repair.lost_begin, result.repair.lost_end) == (only_e, only_b)


@pytest.mark.parametrize("names", [("a", "b"), ("b", "a")])
def test_results_do_not_depend_on_input_order(names: tuple[str, str]) -> None:
    spans = [Span(0.0, 2.0, 0, names[0]), Span(0.0, 2.0, 0, names[1])]
    # Two spans opened at one instant at one depth: the tie goes to the name, not the order.
    assert blame(spans, [(0.0, 1.0)]) == {"b": 1.0}
    assert blame(list(reversed(spans)), [(0.0, 1.0)]) == {"b": 1.0}


@settings(max_examples=30, deadline=None)
@given(st.lists(span_trees, min_size=1, max_size=5), st.integers(1, 3), st.randoms())
def test_tracks_keyed_by_name_under_forced_tid_collisions(
    trees: list[list[object]], tids: int, random: Random
) -> None:
    """Tasks' events interleaved at random, ``tids`` track ids for all of them: each task's spans
    come back exactly, as if every task had its own tid (spec D2)."""
    per_task = [_events(tree, [0], 0) for tree in trees]
    # Interleave: each step takes the next event of a random unfinished task.
    cursors = [0] * len(per_task)
    records, expected = [], set()
    opened: dict[tuple[int, str], int] = {}
    while any(cursor < len(events) for cursor, events in zip(cursors, per_task, strict=True)):
        task = random.choice([t for t, events in enumerate(per_task) if cursors[t] < len(events)])
        phase, name, _ = per_task[task][cursors[task]]
        cursors[task] += 1
        position = len(records)
        args = {"track": f"task{task}", "thread": "MainThread"}
        records.append(
            {
                "name": name,
                "ph": phase,
                "pid": 0,
                "tid": task % tids,
                "ts": position * 1e6,
                "args": args,
            }
        )
        if phase == "B":
            opened[(task, name)] = position
        else:
            expected.add((f"task{task}", name, float(opened[(task, name)]), float(position)))
    result = readers.trace_from_records(records, readers.TraceEvents(readers.FileHealth("t")))
    closed = {
        (
            result.tracks[result.spans.track_id[i]].name,
            result.spans.name(i),
            result.spans.start[i],
            result.spans.end[i],
        )
        for i in range(len(result.spans))
    }
    assert closed == expected
    assert (result.repair.lost_begin, result.repair.lost_end) == (0, 0)
    used = {task for task, events in enumerate(per_task) if events}
    assert result.repair.tid_collisions == len(used) - len({task % tids for task in used})
