"""What a submit reads through the functions handed to it (``flow.callable_reads``): the paths its
rules compare with what a wait wrote. The fixtures tnk10[13]_dependencies_*.py show the findings;
these pin the keys, which the rules only see through an intersection."""

from __future__ import annotations

import textwrap

import libcst as cst

from tinker_lint.model.analyses.flow import callable_reads, exact_paths, read_keys, write_keys
from tinker_lint.model.query import SemanticModel


def _reads_of_last_call(source: str, function: str) -> set[str]:
    """The paths read, through the functions it is handed, by the last ``submit(...)`` call in
    ``function``."""
    model = SemanticModel(cst.parse_module(textwrap.dedent(source)))
    (info,) = [f for f in model.functions if f.name == function]
    calls = [
        n
        for n in model.walk(info.node)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "submit"
    ]
    return {key[1:] for key in exact_paths(callable_reads(model, calls[-1], info.scope))}


def test_a_closure_reads_its_free_names_not_its_parameters_or_locals():
    reads = _reads_of_last_call(
        """
        def step(batch, beta):
            ref = wait()
            def loss(data, logprobs):
                scale = 2.0
                return beta * scale * sum(lp - r for lp, r in zip(logprobs, ref))
            submit(batch, loss)
        """,
        "step",
    )
    assert {"beta", "ref"} <= reads
    assert not {"data", "logprobs", "scale"} & reads


def test_a_bound_method_reads_the_callers_receiver_through_helper_methods():
    reads = _reads_of_last_call(
        """
        class Trainer:
            def _margins(me, logprobs):
                return [lp - r for lp, r in zip(logprobs, me.ref_logprobs)]

            def _loss(this, data, logprobs):
                return this.beta * sum(this._margins(logprobs))

            def step(self, batch):
                submit(batch, self._loss)
        """,
        "step",
    )
    # Each method names its first parameter its own way: all are the caller's ``self``.
    assert {"self.beta", "self.ref_logprobs"} <= reads
    assert not {"me.ref_logprobs", "this.beta", "logprobs"} & reads
    assert callable_keys_meet(reads, "self.ref_logprobs")
    assert not callable_keys_meet(reads, "self.policy")


def test_a_method_without_self_reached_through_self_reads_nothing_of_the_caller():
    reads = _reads_of_last_call(
        """
        class Trainer:
            def _paramless():
                return ref_logprobs

            def _loss(self, data, logprobs):
                return self.beta

            def step(self, batch):
                submit(batch, self._loss, self._paramless)
        """,
        "step",
    )
    assert reads == {"self.beta"}  # not ``ref_logprobs``: no ``self`` to take it from


def test_an_attribute_named_like_a_closure_does_not_hide_the_closure():
    # ``name.x`` and the closure ``x``: each is asked once, neither in place of the other.
    reads = _reads_of_last_call(
        """
        def step(batch, name):
            ref = wait()
            def x(data, logprobs):
                return ref
            submit(batch, name.x)
        """,
        "step",
    )
    assert reads == {"ref"}


def test_a_lambda_reads_its_free_names_when_it_runs_even_bound_before_the_wait():
    reads = _reads_of_last_call(
        """
        def step(batch, dpo):
            loss = lambda data, lp: dpo(lp, ref)
            ref = wait()
            submit(batch, loss)
            submit(batch, lambda data, ref: dpo(data, ref))
        """,
        "step",
    )
    # The last submit's lambda has its own ``ref``: only ``dpo`` is the caller's.
    assert reads == {"dpo"}


def callable_keys_meet(reads: set[str], written: str) -> bool:
    """Whether a write of ``written`` reaches one of the read paths (flow's key scheme)."""
    keys: set[str] = set()
    for path in reads:
        keys |= read_keys(path)
    return bool(keys & write_keys(written))


def test_module_functions_are_followed_from_module_code_only():
    source = """
        def loss(data, logprobs):
            return sum(lp - r for lp, r in zip(logprobs, ref))

        def step(batch):
            submit(batch, loss)

        ref = wait()
        submit(batch, loss)
        """
    # From a script, ``ref`` is the global the wait bound; from ``step``, not one of its names.
    model = SemanticModel(cst.parse_module(textwrap.dedent(source)))
    module_call = [
        n
        for n in model.module.body
        if isinstance(n, cst.SimpleStatementLine) and isinstance(n.body[0], cst.Expr)
    ][-1]
    assert "ref" in {
        k[1:] for k in exact_paths(callable_reads(model, module_call, model.module_scope))
    }
    assert "ref" not in _reads_of_last_call(source, "step")
