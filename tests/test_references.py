"""References recorded by the one pass (``model/facts/references.py``) and the reaching-definition
questions built on them (``model/analyses/dataflow.py``: ``reaching_definitions``, ``uses_of``).

Each answer is exact, on a small snippet, with a near miss beside it: a binding is named by the
line of its target and its site (``(3, "assignment")``), a read by the line it is on and, where a
line reads the name twice, its place among the line's reads."""

from __future__ import annotations

import textwrap
from typing import Any

import libcst as cst
import pytest

from tinker_lint.incremental.carry import for_buffer
from tinker_lint.model.facts.collect import ModuleIndex, collect
from tinker_lint.model.query import Binding, BindingSite, Context, SemanticModel
from tinker_lint.syntax.parse import parse_module

pytestmark = pytest.mark.usefixtures("fresh_buffers")


def _model(source: str) -> SemanticModel:
    return SemanticModel(cst.parse_module(textwrap.dedent(source)))


def _reads(model: SemanticModel, name: str, line: int) -> list[cst.Name]:
    """The reads of ``name`` on ``line``, in source order."""
    found = []
    for node in model.walk(model.module):
        if isinstance(node, cst.Name) and node.value == name and model.line_of(node) == line:
            reference = model.reference(node)
            if reference is not None and reference.context is Context.READ:
                found.append(node)
    return found


def _named(model: SemanticModel, bindings: list[Binding]) -> list[tuple[int, str]]:
    return [(model.line_of(b.node), b.site.value) for b in bindings if b.node is not None]


def reaching(source: str, name: str, line: int, which: int = 0) -> list[tuple[int, str]]:
    """The bindings reaching the ``which``-th read of ``name`` on ``line``."""
    model = _model(source)
    reads = _reads(model, name, line)
    assert reads, f"no read of {name} on line {line}"
    return _named(model, model.dataflow.reaching_definitions(reads[which]))


# --- straight-line code: kill on rebinding ---------------------------------------------------------


def test_a_rebinding_kills_the_one_before() -> None:
    source = """\
        x = 1
        x = 2
        print(x)
        """
    assert reaching(source, "x", 3) == [(2, "assignment")]


def test_near_miss_a_read_before_the_rebinding_sees_the_first() -> None:
    source = """\
        x = 1
        print(x)
        x = 2
        """
    assert reaching(source, "x", 2) == [(1, "assignment")]


def test_the_value_is_read_before_its_own_statement_binds() -> None:
    source = """\
        x = 1
        x = x + 1
        print(x)
        """
    assert reaching(source, "x", 2) == [(1, "assignment")]
    assert reaching(source, "x", 3) == [(2, "assignment")]


def test_augmented_assignment_reads_then_binds() -> None:
    source = """\
        x = 1
        x += 2
        print(x)
        """
    assert reaching(source, "x", 2) == [(1, "assignment")]
    assert reaching(source, "x", 3) == [(2, "augmented assignment")]


def test_a_parameter_reaches_from_the_start_until_rebound() -> None:
    source = """\
        def f(x, y):
            print(x, y)
            y = 0
            return x, y
        """
    assert reaching(source, "x", 2) == [(1, "parameter")]
    assert reaching(source, "y", 2) == [(1, "parameter")]
    assert reaching(source, "x", 4) == [(1, "parameter")]
    assert reaching(source, "y", 4) == [(3, "assignment")]


# --- branches -----------------------------------------------------------------------------------


def test_a_branch_joins_both_ways() -> None:
    source = """\
        x = 1
        if c:
            x = 2
        print(x)
        """
    assert reaching(source, "x", 4) == [(1, "assignment"), (3, "assignment")]


def test_near_miss_both_branches_rebind() -> None:
    source = """\
        x = 1
        if c:
            x = 2
        else:
            x = 3
        print(x)
        """
    assert reaching(source, "x", 6) == [(3, "assignment"), (5, "assignment")]


def test_a_branch_that_returns_does_not_join() -> None:
    source = """\
        def f(c):
            x = 1
            if c:
                x = 2
                return x
            return x
        """
    assert reaching(source, "x", 5) == [(4, "assignment")]
    assert reaching(source, "x", 6) == [(2, "assignment")]


def test_short_circuit_and_conditional_expression() -> None:
    source = """\
        x = 1
        ok = c and (x := 2)
        print(x)
        y = (x := 3) if c else 0
        print(x)
        """
    assert reaching(source, "x", 3) == [(1, "assignment"), (2, "walrus")]
    assert reaching(source, "x", 5) == [(1, "assignment"), (2, "walrus"), (4, "walrus")]


# --- loops --------------------------------------------------------------------------------------


def test_a_list_rebound_each_iteration_reaches_itself_through_the_back_edge() -> None:
    source = """\
        def f(xs):
            acc = []
            for x in xs:
                acc = acc + [x]
            return acc
        """
    assert reaching(source, "acc", 4) == [(2, "assignment"), (4, "assignment")]
    assert reaching(source, "acc", 5) == [(2, "assignment"), (4, "assignment")]


def test_near_miss_a_list_made_fresh_each_iteration() -> None:
    source = """\
        def f(xs):
            acc = []
            for x in xs:
                acc = []
                acc.append(x)
                use(acc)
            return acc
        """
    assert reaching(source, "acc", 5) == [(4, "assignment")]
    assert reaching(source, "acc", 6) == [(4, "assignment")]
    assert reaching(source, "acc", 7) == [(2, "assignment"), (4, "assignment")]


def test_a_loop_target_is_bound_each_iteration_and_may_never_be() -> None:
    source = """\
        x = None
        for x in xs:
            print(x)
        print(x)
        """
    assert reaching(source, "x", 3) == [(2, "for target")]
    assert reaching(source, "x", 4) == [(1, "assignment"), (2, "for target")]


def test_while_with_break_and_continue() -> None:
    source = """\
        x = 0
        while more():
            if a():
                x = 1
                break
            if b():
                x = 2
                continue
            x = 3
        print(x)
        """
    assert reaching(source, "x", 10) == [
        (1, "assignment"),
        (4, "assignment"),
        (7, "assignment"),
        (9, "assignment"),
    ]


def test_near_miss_while_true_leaves_by_its_break_only() -> None:
    source = """\
        x = 0
        while True:
            x = 1
            if done():
                break
            x = 2
        print(x)
        """
    assert reaching(source, "x", 7) == [(3, "assignment")]


# --- del ----------------------------------------------------------------------------------------


def test_del_kills_every_binding() -> None:
    source = """\
        x = 1
        del x
        print(x)
        x = 2
        print(x)
        """
    assert reaching(source, "x", 3) == []
    assert reaching(source, "x", 5) == [(4, "assignment")]


def test_near_miss_del_on_one_branch_only() -> None:
    source = """\
        x = 1
        if c:
            del x
        print(x)
        """
    assert reaching(source, "x", 4) == [(1, "assignment")]


# --- comprehensions -----------------------------------------------------------------------------


def test_a_comprehension_target_is_its_own_and_does_not_leak() -> None:
    source = """\
        x = 1
        ys = [x for x in range(3)]
        print(x)
        """
    assert reaching(source, "x", 2) == [(2, "comprehension target")]
    assert reaching(source, "x", 3) == [(1, "assignment")]


def test_the_first_iterable_is_read_in_the_scope_around() -> None:
    source = """\
        x = [1]
        x = [x for x in x]
        """
    model = _model(source)
    reads = _reads(model, "x", 2)  # the element, then the iterable
    assert [model.reference(r).resolved.kind for r in reads] == ["comprehension", "module"]
    assert reaching(source, "x", 2, which=0) == [(2, "comprehension target")]
    assert reaching(source, "x", 2, which=1) == [(1, "assignment")]


def test_near_miss_a_name_of_the_function_read_in_a_comprehension_runs_there() -> None:
    source = """\
        def f(r):
            y = 1
            zs = [y + i for i in r]
            y = 2
            return zs, y
        """
    assert reaching(source, "y", 3) == [(2, "assignment")]
    assert reaching(source, "y", 5) == [(4, "assignment")]


def test_a_generator_reads_when_consumed() -> None:
    source = """\
        y = 1
        g = (y for _ in r)
        l = [y for _ in r]
        y = 2
        """
    assert reaching(source, "y", 2) == [(1, "assignment"), (4, "assignment")]
    assert reaching(source, "y", 3) == [(1, "assignment")]


def test_a_walrus_in_a_comprehension_binds_around_it() -> None:
    source = """\
        def f(vs):
            y = 0
            ys = [(y := g(v)) for v in vs]
            return y
        """
    model = _model(source)
    walrus = next(b for b in model.bindings if b.site is BindingSite.WALRUS)
    assert walrus.namespace is model.functions[0].scope
    assert reaching(source, "y", 4) == [(2, "assignment"), (3, "walrus")]


# --- global, nonlocal, closures -----------------------------------------------------------------


GLOBALS = """\
    x = 0
    def f():
        global x
        x = 1
        return x
    def g():
        return x
    def h():
        x = 5
        return x
    print(x)
    """


def test_global_reads_resolve_to_the_module_and_every_binding_of_it() -> None:
    everything = [(1, "assignment"), (4, "assignment")]
    assert reaching(GLOBALS, "x", 5) == everything  # another call may have run between
    assert reaching(GLOBALS, "x", 7) == everything
    assert reaching(GLOBALS, "x", 11) == everything  # ``f()`` may have run


def test_near_miss_a_function_without_global_binds_its_own() -> None:
    assert reaching(GLOBALS, "x", 10) == [(9, "assignment")]
    model = _model(GLOBALS)
    write = next(b for b in model.bindings if b.site is BindingSite.ASSIGNMENT and b.order == 3)
    assert model.line_of(write.node) == 4
    assert model.reference(write.node).resolved is model.module_scope  # ``global x``: the module's


def test_nonlocal_binds_the_enclosing_functions_name() -> None:
    source = """\
        def outer():
            n = 0
            def inc():
                nonlocal n
                n += 1
            inc()
            return n
        """
    assert reaching(source, "n", 5) == [(2, "assignment"), (5, "augmented assignment")]
    assert reaching(source, "n", 7) == [(2, "assignment"), (5, "augmented assignment")]


def test_near_miss_without_nonlocal_the_inner_name_is_its_own() -> None:
    source = """\
        def outer():
            n = 0
            def inc():
                n = 1
                return n
            inc()
            return n
        """
    assert reaching(source, "n", 5) == [(4, "assignment")]
    assert reaching(source, "n", 7) == [(2, "assignment")]


def test_a_closure_sees_every_binding_of_the_enclosing_function() -> None:
    source = """\
        def outer():
            n = 0
            def show():
                return n
            n = 1
            return show
        """
    assert reaching(source, "n", 4) == [(2, "assignment"), (5, "assignment")]


# --- class scope --------------------------------------------------------------------------------


CLASS = """\
    x = 1
    class C:
        x = 2
        y = x
        z = [x for _ in range(1)]
        w = [_ for _ in x]
        def m(self):
            return x
    """


def test_a_class_body_reads_its_own_names() -> None:
    assert reaching(CLASS, "x", 4) == [(3, "assignment")]
    assert reaching(CLASS, "x", 6) == [(3, "assignment")]  # the first iterable: in the class


def test_near_miss_a_method_and_a_comprehension_do_not_see_the_class_names() -> None:
    assert reaching(CLASS, "x", 8) == [(1, "assignment")]
    assert reaching(CLASS, "x", 5) == [(1, "assignment")]


# --- targets: tuples, starred, with, except, match, imports -------------------------------------


def test_tuple_and_starred_targets() -> None:
    source = """\
        a, *b = f()
        for i, (j, *k) in items:
            print(a, b, k)
        """
    assert reaching(source, "a", 3) == [(1, "assignment")]
    assert reaching(source, "b", 3) == [(1, "assignment")]
    assert reaching(source, "k", 3) == [(2, "for target")]


def test_near_miss_a_swap_reads_before_it_binds() -> None:
    source = """\
        a, b = 1, 2
        a, b = b, a
        print(a)
        """
    assert reaching(source, "b", 2) == [(1, "assignment")]
    assert reaching(source, "a", 3) == [(2, "assignment")]


def test_with_and_except_names() -> None:
    source = """\
        e = 0
        with open(p) as f:
            print(f)
        try:
            work()
        except ValueError as e:
            print(e)
        print(e)
        """
    assert reaching(source, "f", 3) == [(2, "with target")]
    assert reaching(source, "e", 7) == [(6, "except name")]
    assert reaching(source, "e", 8) == [(1, "assignment")]  # the handler's ``e`` is deleted


def test_an_except_handler_sees_any_point_of_its_try() -> None:
    source = """\
        x = 1
        try:
            x = 2
            work()
            x = 3
        except OSError:
            print(x)
        print(x)
        """
    assert reaching(source, "x", 7) == [(1, "assignment"), (3, "assignment"), (5, "assignment")]
    assert reaching(source, "x", 8) == [(1, "assignment"), (3, "assignment"), (5, "assignment")]


def test_near_miss_try_without_handler_path_reaching() -> None:
    source = """\
        x = 1
        try:
            x = 2
        finally:
            print(x)
        print(x)
        """
    assert reaching(source, "x", 5) == [(1, "assignment"), (3, "assignment")]
    assert reaching(source, "x", 6) == [(3, "assignment")]


def test_match_captures() -> None:
    source = """\
        match p:
            case Point(x=px, y=0):
                print(px)
            case [first, *rest]:
                print(rest)
            case {"k": v, **others}:
                print(others)
        """
    assert reaching(source, "px", 3) == [(2, "match capture")]
    assert reaching(source, "rest", 5) == [(4, "match capture")]
    assert reaching(source, "others", 7) == [(6, "match capture")]
    model = _model(source)
    assert model.reference(_reads(model, "p", 1)[0]) is not None
    keyword = next(
        n for n in model.walk(model.module) if isinstance(n, cst.Name) and n.value == "x"
    )
    assert model.reference(keyword) is None  # ``x=``: a keyword, no reference


def test_imports_bind_and_module_names_are_no_references() -> None:
    source = """\
        import os.path
        import numpy as np
        from a.b import c as d
        print(os, np, d)
        """
    assert reaching(source, "os", 4) == [(1, "import")]
    assert reaching(source, "np", 4) == [(2, "import")]
    assert reaching(source, "d", 4) == [(3, "import")]
    model = _model(source)
    for value in ("path", "numpy", "a", "b", "c"):
        nodes = [
            n for n in model.walk(model.module) if isinstance(n, cst.Name) and n.value == value
        ]
        assert nodes and all(model.reference(n) is None for n in nodes), value


def test_a_builtin_and_an_attribute_name() -> None:
    source = """\
        print(len)
        obj.len = 1
        f(len=2)
        """
    model = _model(source)
    assert reaching(source, "len", 1) == []
    assert model.reference(_reads(model, "len", 1)[0]).resolved is None
    assert _reads(model, "len", 2) == [] and _reads(model, "len", 3) == []
    assert _reads(model, "obj", 2)  # the receiver is a read


# --- the facts themselves -----------------------------------------------------------------------


def test_reference_contexts_and_binding_order() -> None:
    source = """\
        def f(a):
            b = a
            b += 1
            del b
            return a
        """
    model = _model(source)
    scope = model.functions[0].scope
    seen = [(r.name, r.context.value, model.line_of(r.node)) for r in model.references(scope)]
    assert seen == [
        ("a", "write", 1),
        ("b", "write", 2),
        ("a", "read", 2),
        ("b", "read", 3),
        ("b", "write", 3),
        ("b", "del", 4),
        ("a", "read", 5),
    ]
    orders = [b.order for found in scope.names.values() for b in found]
    assert orders == sorted(orders)  # ``a``, then ``b``'s three, in the order made
    assert [b.site.value for b in scope.names["b"]] == ["assignment", "augmented assignment", "del"]


def test_uses_of_a_binding() -> None:
    source = """\
        def f(xs):
            x = 1
            print(x)
            x = 2
            print(x)
            acc = []
            for v in xs:
                acc = acc + [v]
            return acc
        """
    model = _model(source)
    names = model.functions[0].scope.names

    def lines(binding: Binding) -> list[int]:
        return [model.line_of(r.node) for r in model.dataflow.uses_of(binding)]

    first, second = names["x"]
    assert lines(first) == [3]
    assert lines(second) == [5]
    before, inside = names["acc"]
    assert lines(before) == [8, 9]
    assert lines(inside) == [8, 9]
    assert model.references_to(first) == model.references_to(second)  # by scope: both reads


def test_the_editor_pass_resolves_to_this_passs_bindings() -> None:
    """A function kept from the last lint (its records replayed) reads a module name whose
    statement was edited: its reference resolves to the binding this pass made, and the orders
    are those a fresh pass gives."""
    key = "refs.py"
    before = "tc = make(1)\n\n\ndef train():\n    return tc\n"
    after = "tc = make(2)\n\n\ndef train():\n    return tc\n"
    collect(parse_module(before, key=key), None, carry=for_buffer(key))
    module = parse_module(after, key=key)
    kept = collect(module, None, carry=for_buffer(key))
    fresh = collect(module, None)
    for index in (kept, fresh):
        function = index.functions[0].scope
        read = next(r for r in index.references.of_scope(function) if r.name == "tc")
        assert read.bindings == tuple(index.module_scope.names["tc"])
        assert read.resolved is index.module_scope
    assert [b.order for b in kept.bindings] == [b.order for b in fresh.bindings]


def test_the_editor_pass_gives_the_fresh_passs_references_edit_after_edit() -> None:
    """Through ``tests/test_collect_reuse.py``'s edits (each a lint of the edited buffer that
    keeps the records of the statements it did not touch), every scope's references are those of
    a fresh pass: the same names, contexts, scopes found and bindings (by their order)."""
    from tests.test_collect_reuse import KEY, _edited_texts

    def described(index: ModuleIndex) -> list[Any]:
        place = {id(scope): i for i, scope in enumerate(index.scopes)}
        return [
            [
                (
                    id(r.node),
                    r.context,
                    None if r.resolved is None else place[id(r.resolved)],
                    [b.order for b in r.bindings],
                )
                for r in index.references.of_scope(scope)
            ]
            for scope in index.scopes
        ]

    for number, text in enumerate(_edited_texts()):
        module = parse_module(text, key=KEY)
        kept = collect(module, None, carry=for_buffer(KEY))
        same = described(kept) == described(collect(module, None))
        assert same, f"edit {number}"  # (not the lists: pytest's diff of them takes minutes)


def test_a_def_header_and_a_first_iterable_are_the_scope_around() -> None:
    source = """\
        y = 1
        @deco([y for _ in r])
        def f(a=[y for _ in r], *args, k: K = y, **kw) -> R:
            y = 2
            return [v for v in [y for _ in r]]
        """
    model = _model(source)
    function = model.functions[0].scope
    comprehensions = [s for s in model.scopes if s.kind == "comprehension"]
    # The decorator's and the default's comprehensions are the module's; the last two the
    # function's (the inner one is in the first iterable of the outer one).
    assert [s.parent.kind for s in comprehensions] == ["module", "module", "function", "function"]
    assert reaching(source, "y", 2) == [(1, "assignment")]
    assert reaching(source, "y", 3, which=0) == [(1, "assignment")]  # in the default's
    assert reaching(source, "y", 3, which=1) == [(1, "assignment")]  # ``k``'s default
    assert reaching(source, "y", 5) == [(4, "assignment")]
    uses = [n.value for n in model.index.references.uses(function)]
    # Parameters in source order; of ``return [...]``, the innermost first iterable only.
    assert uses == ["a", "args", "k", "kw", "y", "r"]
    assert [(r.name, r.context.value) for r in model.references(function)][-2:] == [
        ("y", "write"),
        ("r", "read"),
    ]
