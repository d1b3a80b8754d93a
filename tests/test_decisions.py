"""``flow.decision_of``: what a test on a result decides, the one answer TNK101-TNK103 share
(issue 32, item 1). A wait is needed by the next request through control only when the test's
blocks submit, leave the function (``return``, a ``raise`` caught in it), skip a request
(``break``/``continue``) or end the loop being judged; a log, a ``continue`` past an append, a
``break`` of a loop over one result's sequences, a validation ``raise`` decide none."""

from __future__ import annotations

import libcst as cst

from tinker_lint.model.analyses.flow import decision_of
from tinker_lint.model.query import SemanticModel

PROGRAM = """\
import tinker

tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()
adam = tinker.AdamParams(learning_rate=1e-4)


def f(batches, rows):
    for batch in batches:
        if a:
            print(a)
        if b:
            continue
        if c:
            break
        if d:
            raise ValueError("bad")
        if e:
            return
        if g:
            for s in batch:
                if s:
                    break
        try:
            if k:
                raise ValueError("retry")
        except ValueError:
            pass
        rows.append(batch)
    for batch in batches:
        if p:
            continue
        tc.optim_step(adam)
        if q:
            tc.optim_step(adam)
        if r:
            continue
    for batch in batches:
        for s in batch:
            if t:
                continue
            rows.append(s)
        for s in batch:
            if u:
                break
            tc.optim_step(adam)
"""


def test_what_each_test_decides() -> None:
    model = SemanticModel(cst.parse_module(PROGRAM))
    function = next(f for f in model.functions if f.name == "f")
    loops = [loop.node for loop in model.loops if loop.function is function]
    first, second, third = (n for n in loops if model.parent(model.parent(n)) is function.node)
    found = {}
    for node in model.walk(function.node):
        if type(node) is cst.If and type(node.test) is cst.Name:
            decision = decision_of(model, node, function.scope)
            outer = next(n for n in (first, second, third) if model.contains(n, node))
            found[node.test.value] = (
                decision.decides_submit(outer),
                decision.ends(outer),
                decision.decides_submit(None),
            )
    assert found == {
        "a": (False, False, False),  # a log
        "b": (False, False, False),  # a ``continue`` past an append: no request skipped
        "c": (True, True, False),  # ends the loop judged (and no other)
        "d": (False, False, False),  # a validation ``raise``: an error path
        "e": (True, True, True),  # leaves the function
        "g": (False, False, False),  # its ``break`` ends the loop inside it
        "s": (False, False, False),  # ... a loop of one batch's items, with no request
        "k": (True, True, True),  # a ``raise`` the function catches: a jump
        "p": (True, False, True),  # a ``continue`` past ``optim_step``
        "q": (True, False, True),  # its block submits
        "r": (False, False, False),  # a ``continue`` with nothing after it
        "t": (False, False, False),  # an inner loop's ``continue`` past an append
        "u": (True, False, True),  # an inner loop's ``break`` skips its requests
    }


HANDLERS = """\
import tinker

def f(tc, sc, batches, adam, evaluate, eval_every, fallback):
    for step, batch in enumerate(batches):
        try:
            tc.forward_backward(batch, "cross_entropy").result()
        except ValueError:
            continue  # skips the optimizer step below
        except KeyError:
            print("logged")  # decides nothing
        except TypeError:
            sc.sample(fallback, num_samples=1, sampling_params=None).result()  # a fallback: the step is made either way
        except OSError:
            return None  # leaves the function
        tc.optim_step(adam)
    for step, batch in enumerate(batches):
        try:
            tc.forward_backward(batch, "cross_entropy").result()
        except ValueError:
            continue  # skips only the evaluation every N steps
        if step % eval_every == 0:
            evaluate(sc.sample(batch, num_samples=1, sampling_params=None))
"""


def test_which_except_handlers_decide_the_next_request() -> None:
    from tinker_lint.model.analyses.flow import handler_decides

    model = SemanticModel(cst.parse_module(HANDLERS))
    function = model.functions[0]
    attempts = [node for node in model.walk(function.node) if isinstance(node, cst.Try)]
    answers = [
        [handler_decides(model, attempt, h, function.scope) for h in attempt.handlers]
        for attempt in attempts
    ]
    assert answers == [[True, False, False, True], [False]]
