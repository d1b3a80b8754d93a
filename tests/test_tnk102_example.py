"""TNK102's examples, run against a fake training client: the good one keeps step i+1 in flight while
it waits for step i, and waits for every step, the last one included (it once never waited for
the last step, nor for any `optim_step`). The rule's pages show these examples as code to copy."""

from __future__ import annotations

import contextlib
import io

from tinker_lint.rules.tnk102_step_not_overlapped import StepNotOverlapped


class FakeFuture:
    def __init__(self, events: list[tuple[str, str, int]], method: str, step: int) -> None:
        self.events, self.method, self.step = events, method, step
        self.loss = float(step)

    def result(self) -> FakeFuture:
        self.events.append(("wait", self.method, self.step))
        return self


class FakeTrainingClient:
    """Records each submit and each wait, in order, with the step they belong to."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int]] = []
        self.step = -1

    def forward_backward(self, batch: int, loss_fn: str) -> FakeFuture:
        self.step = batch
        self.events.append(("submit", "forward_backward", batch))
        return FakeFuture(self.events, "forward_backward", batch)

    def optim_step(self, adam: object) -> FakeFuture:
        self.events.append(("submit", "optim_step", self.step))
        return FakeFuture(self.events, "optim_step", self.step)


def run(code: str, steps: int) -> tuple[list[tuple[str, str, int]], str]:
    client = FakeTrainingClient()
    printed = io.StringIO()
    namespace = {"training_client": client, "batches": range(steps), "adam": object()}
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "example.py", "exec"), namespace)
    return client.events, printed.getvalue()


def test_good_example_waits_for_every_step_with_the_next_one_in_flight():
    (good,) = StepNotOverlapped.VALID
    events, printed = run(good.code, steps=3)
    # Every future is waited for, the last step's too: each loss is logged once, in order.
    waited = {(method, step) for kind, method, step in events if kind == "wait"}
    assert waited == {(m, s) for m in ("forward_backward", "optim_step") for s in range(3)}
    assert printed == "0.0\n1.0\n2.0\n"
    # Step i is waited for only once step i+1 is submitted (but the last, after the loop).
    for kind, method, step in events:
        if kind == "wait" and step < 2:
            assert events.index(("submit", "optim_step", step + 1)) < events.index(
                (kind, method, step)
            )


def test_bad_example_waits_for_each_step_before_the_next():
    """The contrast the page draws: same waits, but nothing in flight while waiting."""
    (bad,) = StepNotOverlapped.INVALID
    events, printed = run(bad.code, steps=2)
    assert printed == "0.0\n1.0\n"
    assert events.index(("wait", "optim_step", 0)) < events.index(("submit", "forward_backward", 1))
