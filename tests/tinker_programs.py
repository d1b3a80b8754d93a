"""A hypothesis strategy for Tinker-shaped programs: random nestings of the statements and calls the
rules reason about (submits, waits, awaits, gathers, tasks, factories, loops, branches, cadence
guards, comprehensions, nested functions and classes). hypothesmith's programs exercise the parser
and the model's handling of every syntax; these reach the rules' deepest paths, which a random
program almost never does (it has no ``forward_backward`` in it)."""

from __future__ import annotations

from hypothesis import strategies as st

NAMES = ("tc", "sc", "fut", "futs", "batch", "result", "out", "step", "client", "service", "x")
FUTURE_NAMES = ("fut", "futs[0]", "pending", "self.fut", "fwd")

CALLS = (
    'tc.forward_backward(batch, loss_fn="cross_entropy")',
    "tc.optim_step(adam)",
    "tc.forward_backward_async(batch, 'cross_entropy')",
    "tc.optim_step_async(adam)",
    "sc.sample(prompt, num_samples=1, sampling_params=params)",
    "sc.sample_async(prompt=prompt, num_samples=4, sampling_params=params)",
    "tc.compute_logprobs(prompt)",
    'service.create_lora_training_client(base_model="m")',
    'service.create_sampling_client(model_path="p")',
    'tc.save_weights_and_get_sampling_client(name="w")',
    'tc.save_state("s")',
    "tc.get_tokenizer()",
    "tc.get_info()",
    "tinker.ServiceClient()",
    "asyncio.gather(*futs)",
    "asyncio.create_task(fut)",
    "asyncio.wait_for(fut, 1)",
    "concurrent.futures.wait(futs)",
    "loop.run_in_executor(None, fut.result)",
    "process(result)",
    "len(futs)",
    "self.tc.forward_backward(self.batch, 'cross_entropy')",
    "step_fn(tc, batch)",  # a function of the module, which may submit
    "self.run(batch)",
)

LEAVES = st.sampled_from(
    (
        *NAMES,
        *CALLS,
        *(f"{f}.result()" for f in FUTURE_NAMES),
        *(f"{f}.result_async()" for f in FUTURE_NAMES),
        *(f"{f}.future()" for f in FUTURE_NAMES),
        "step % log_every == 0",
        "should_save",
        "i",
        "None",
        "[]",
        "(0)",
    )
)


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        # Operands in parentheses: any nesting stays valid Python (``await (await x)``).
        return st.one_of(
            inner.map(lambda e: f"await ({e})"),
            inner.map(lambda e: f"({e}).result()"),
            st.tuples(inner, inner).map(lambda p: f"[{p[0]}, {p[1]}]"),
            st.tuples(inner, inner).map(lambda p: f"[({p[0]}) for i in ({p[1]})]"),
            st.tuples(inner, inner).map(lambda p: f"(({p[0]}) if ({p[1]}) else None)"),
            st.tuples(inner, inner).map(lambda p: f"(({p[0]}) and ({p[1]}))"),
            st.tuples(inner, inner).map(lambda p: f"f({p[0]}, key={p[1]})"),
            inner.map(lambda e: f"asyncio.gather(*[({e}) for _ in range(4)])"),
            inner.map(lambda e: f"(fut := ({e}))"),
            inner.map(lambda e: f"(lambda: ({e}))"),
            inner.map(lambda e: f"({e})[0]"),
            inner.map(lambda e: f"({e}).result_async()"),
        )

    return st.recursive(LEAVES, extend, max_leaves=6)


EXPRESSIONS = _expressions()
TARGETS = st.sampled_from(
    (*NAMES, *FUTURE_NAMES[:3], "self.fut", "a, b", "futs[i]", "(fut, other)", "*rest, last")
)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines] or ["    pass"]


def _statements() -> st.SearchStrategy[list[str]]:
    simple = st.one_of(
        st.tuples(TARGETS, EXPRESSIONS).map(lambda p: [f"{p[0]} = {p[1]}"]),
        EXPRESSIONS.map(lambda e: [e]),
        st.tuples(st.sampled_from(NAMES), EXPRESSIONS).map(lambda p: [f"{p[0]}.append({p[1]})"]),
        EXPRESSIONS.map(lambda e: [f"return {e}"]),
        st.sampled_from((["break"], ["continue"], ["pass"], ["raise"], ["del x"])),
    )

    def extend(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
        body = st.lists(inner, min_size=1, max_size=3).map(lambda ls: [x for b in ls for x in b])
        return st.one_of(
            st.tuples(TARGETS, EXPRESSIONS, body).map(
                lambda p: [f"for {p[0]} in {p[1]}:", *_indent(p[2])]
            ),
            st.tuples(TARGETS, EXPRESSIONS, body).map(
                lambda p: [f"async for {p[0]} in {p[1]}:", *_indent(p[2])]
            ),
            st.tuples(EXPRESSIONS, body).map(lambda p: [f"while {p[0]}:", *_indent(p[1])]),
            st.tuples(EXPRESSIONS, body, body).map(
                lambda p: [f"if {p[0]}:", *_indent(p[1]), "else:", *_indent(p[2])]
            ),
            st.tuples(EXPRESSIONS, body, body).map(
                lambda p: [f"if {p[0]}:", *_indent(p[1]), "elif x:", *_indent(p[2])]
            ),
            st.tuples(EXPRESSIONS, TARGETS, body).map(
                lambda p: [f"with {p[0]} as {p[1]}:", *_indent(p[2])]
            ),
            st.tuples(body, body, body).map(
                lambda p: [
                    "try:",
                    *_indent(p[0]),
                    "except Exception:",
                    *_indent(p[1]),
                    "finally:",
                    *_indent(p[2]),
                ]
            ),
            st.tuples(st.sampled_from(("def", "async def")), body).map(
                lambda p: [f"{p[0]} step_fn(tc, batch, *args, fut=None, **kw):", *_indent(p[1])]
            ),
            body.map(
                lambda b: [
                    "class Trainer:",
                    "    def __init__(self, tc):",
                    "        self.tc = tc",
                    "    async def run(self, batch):",
                    *_indent(_indent(b)),
                ]
            ),
            st.tuples(EXPRESSIONS, body).map(
                lambda p: [f"match {p[0]}:", "    case [a, *rest]:", *_indent(_indent(p[1]))]
            ),
        )

    return st.recursive(simple, extend, max_leaves=12)


HEADER = """\
import asyncio
import concurrent.futures
import tinker
from tinker import types

service = tinker.ServiceClient()
tc = service.create_lora_training_client(base_model="m")
sc = tc.save_weights_and_get_sampling_client(name="s")
"""


def _in_coroutine(body: str) -> str:
    """The body inside ``async def`` (where ``await`` is valid), with its clients as parameters."""
    lines = body.splitlines()
    return (
        "import asyncio\nimport tinker\n\n\nasync def main(\n"
        "    tc: tinker.TrainingClient, sc: tinker.SamplingClient, service, batch, futs\n):\n"
        + "\n".join(_indent(lines))
        + "\n"
    )


# Ways a program gets its clients: factories at the top (their futures used as clients), the same
# waited on where they are made, or parameters of a coroutine.
SHAPES = (
    lambda body: HEADER + body,
    lambda body: HEADER.replace('"m")', '"m").result()').replace('"s")', '"s").result()') + body,
    _in_coroutine,
)

BODIES = st.lists(_statements(), min_size=1, max_size=4).map(
    lambda blocks: "\n".join(line for block in blocks for line in block) + "\n"
)
PROGRAMS = BODIES.map(lambda body: HEADER + body)


# A loop in one module whose helper in another (``steps.py``) submits, or submits and waits: the
# project index's cross-module case (tests/test_server.py, tests/test_project_buffers.py).
HELPER_LOOP = """\
from .steps import step


def run(client, batches, adam):
    for batch in batches:
        out = step(client, batch)
        client.optim_step(adam)
        print(out)
"""
HELPER_SUBMITS = "def step(client, batch):\n    return client.forward_backward(batch)\n"
HELPER_WAITS = "def step(client, batch):\n    return client.forward_backward(batch).result()\n"
