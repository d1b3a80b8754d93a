"""The semantic model of one module, and the one API rules ask: what is a Tinker client, a future,
a submit, a wait, a hot loop.

``SemanticModel`` is the composition root: it holds what the one pass recorded, makes each
analysis and wires them together, and answers the rules' questions through them. A rule imports
from this module only (its ``__all__``); import-linter checks both that and the layers below
(``pyproject.toml``). By layer, bottom up:

- ``facts/``, recorded once, no analysis, importing nothing above: ``collect.py`` (the one pass),
  ``tree.py`` (children, parents, walks), ``scopes.py`` (scopes, bindings, functions, loops, call
  sites), ``references.py`` (each use of a name and the bindings it resolves to), ``imports.py`` (import aliases), ``cadence.py`` (cadence guards), ``arguments.py`` (what
  a call passes); the tables ``sdk.py`` (what each SDK method does), ``names.py`` (names the
  model and the tree pre-filter share), ``types.py`` (the types tracked).
- ``analyses/``, each the owner of one question, asking the others through ``view.py``'s
  ``ModelView`` protocol (never this module):
  - resolution, one cluster that asks itself (types, SDK calls, call targets, summaries):
    ``infer.py`` and ``annotations.py`` (types), ``sdk_calls.py`` (which calls are the SDK's),
    ``submits.py`` (what a call, a function or a loop submits), ``helpers.py`` (which project
    function a call runs), ``summaries.py`` (what calling a function does), ``bindings.py``
    (what a region binds);
  - ``dataflow.py`` (def-use: statements, targets, later
    reads and how they use the value), ``flow.py`` (submits, waits and
    data dependencies along statements), ``pipeline.py`` (after a wait, what is submitted next),
    ``concurrency.py`` (can other coroutines run here), ``steps.py`` and ``batches.py`` (what runs
    on every step, loops over a batch), ``cost.py`` (how many times per step, over what),
    ``training_kind.py`` (supervised, RL or DPO), ``model_input.py`` (a ``ModelInput`` built
    token by token), and for PyTorch loops ``torch_steps.py``, ``tensors.py``,
    ``tensor_loops.py``, ``datasets.py``.
- ``reuse.py``: an editor's summaries, kept across lints of one file.

No libcst metadata provider besides positions is used: see ``shared/performance-notes.md``.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

import libcst as cst

# What rules ask besides the facade's own questions: the records of the one pass, the SDK tables,
# and each analysis's answers. Rules import these from here and from nowhere else in ``model/``
# (the import-linter contract "Rules ask the model through model.query").
from tinker_lint.model.analyses.batches import is_payload, loop_iterables, small
from tinker_lint.model.analyses.bindings import argument, bound_in, parameters
from tinker_lint.model.analyses.concurrency import Concurrency
from tinker_lint.model.analyses.cost import CostShape, Scale, bases
from tinker_lint.model.analyses.dataflow import (
    GUARD,
    NEEDS_VALUE,
    RETURNED,
    assigned_names,
    chain_root,
    indexes,
    loop_targets,
    target_names,
)
from tinker_lint.model.analyses.datasets import DATASET_ORIGINS, HF, Loader
from tinker_lint.model.analyses.flow import (
    NESTED_CODE,
    Decision,
    Submit,
    Wait,
    events_in,
    events_in_order,
    exact_paths,
    helper_wait_text,
    linear_steps,
    may_block,
    names_read,
    names_written,
    reads_when_run,
    target_keys,
    waited_text,
    write_keys,
)
from tinker_lint.model.analyses.helpers import Helpers
from tinker_lint.model.analyses.infer import TypeInference
from tinker_lint.model.analyses.model_input import (
    TOKEN_BUILD_WORDS,
    TokenBuild,
    token_by_token_builds,
)
from tinker_lint.model.analyses.pipeline import (
    LoopWait,
    WaitThenSubmit,
    accumulation_waits,
    coroutines_awaited_one_by_one,
    is_save,
    loop_waits,
    may_make_requests,
    occasional_sampler_refresh,
    occasional_save,
    refreshes_sampler,
    refreshes_sampling_client,
    separate_clients,
    waits_and_next_submits,
)
from tinker_lint.model.analyses.sdk_calls import SdkCalls
from tinker_lint.model.analyses.steps import StepContext
from tinker_lint.model.analyses.submits import Submits
from tinker_lint.model.analyses.summaries import ProjectView
from tinker_lint.model.analyses.tensor_loops import (
    ElementAccess,
    carries_a_value,
    element_subscripts,
    reads_another_element,
    stored_subscript_values,
)
from tinker_lint.model.analyses.tensors import Tensors, iterated_part, to_cpu
from tinker_lint.model.analyses.torch_steps import TorchStep, place
from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.arguments import has_keyword, passed
from tinker_lint.model.facts.carry import Carry
from tinker_lint.model.facts.collect import collect
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.names import (
    BLOCKING_WAIT_FUNCTIONS,
    CPU_TENSOR_MAKERS,
    HOST_READS,
    array_function,
)
from tinker_lint.model.facts.references import Context, Reference
from tinker_lint.model.facts.scopes import (
    Binding,
    BindingKind,
    BindingSite,
    CallSite,
    CompNode,
    FunctionInfo,
    FunctionNode,
    LoopInfo,
    LoopNode,
    Scope,
    SdkCall,
    is_tinker_name,
    resolve_function,
)
from tinker_lint.model.facts.sdk import (
    ASYNC_DEPRECATION_VERSION,
    FUTURE_METHODS,
    Client,
    Returns,
    Role,
    asks_server_per_call,
    lookup,
)
from tinker_lint.model.facts.tree import TRIVIA as _TRIVIA  # noqa: F401 - tests/test_model_index.py
from tinker_lint.model.facts.tree import child_fields
from tinker_lint.model.facts.types import Kind, TType
from tinker_lint.model.reuse import RecordingView
from tinker_lint.syntax.positions import NodePositions

if TYPE_CHECKING:
    from tinker_lint.model.analyses.cost import CostShapes
    from tinker_lint.model.analyses.dataflow import Dataflow
    from tinker_lint.model.analyses.datasets import Datasets
    from tinker_lint.model.analyses.flow import Event
    from tinker_lint.model.analyses.pipeline import LoopWait
    from tinker_lint.model.analyses.steps import Steps
    from tinker_lint.model.analyses.tensors import Tensors
    from tinker_lint.model.analyses.torch_steps import TorchSteps
    from tinker_lint.model.analyses.training_kind import TrainingKinds
    from tinker_lint.model.facts.sdk import Role

__all__ = [
    "ASYNC_DEPRECATION_VERSION",
    "BLOCKING_WAIT_FUNCTIONS",
    "CPU_TENSOR_MAKERS",
    "DATASET_ORIGINS",
    "FUTURE_METHODS",
    "GUARD",
    "HF",
    "HOST_READS",
    "NEEDS_VALUE",
    "NESTED_CODE",
    "RETURNED",
    "TOKEN_BUILD_WORDS",
    "Binding",
    "BindingKind",
    "BindingSite",
    "CallSite",
    "Client",
    "CompNode",
    "Concurrency",
    "Context",
    "CostShape",
    "ElementAccess",
    "FunctionInfo",
    "FunctionNode",
    "Kind",
    "Loader",
    "LoopInfo",
    "LoopNode",
    "LoopWait",
    "Reference",
    "Returns",
    "Role",
    "Scale",
    "Scope",
    "SdkCall",
    "SemanticModel",
    "StepContext",
    "Submit",
    "TType",
    "Tensors",
    "TokenBuild",
    "TorchStep",
    "Wait",
    "WaitThenSubmit",
    "accumulation_waits",
    "argument",
    "asks_server_per_call",
    "assigned_names",
    "bases",
    "bound_in",
    "carries_a_value",
    "chain_root",
    "child_fields",
    "coroutines_awaited_one_by_one",
    "dotted_name",
    "element_subscripts",
    "events_in",
    "events_in_order",
    "exact_paths",
    "has_keyword",
    "helper_wait_text",
    "indexes",
    "is_payload",
    "is_save",
    "iterated_part",
    "linear_steps",
    "lookup",
    "loop_iterables",
    "loop_targets",
    "loop_waits",
    "may_block",
    "may_make_requests",
    "names_read",
    "names_written",
    "occasional_sampler_refresh",
    "occasional_save",
    "parameters",
    "passed",
    "place",
    "reads_another_element",
    "reads_when_run",
    "refreshes_sampler",
    "refreshes_sampling_client",
    "sdk",
    "separate_clients",
    "small",
    "stored_subscript_values",
    "target_keys",
    "target_names",
    "to_cpu",
    "token_by_token_builds",
    "waited_text",
    "waits_and_next_submits",
    "write_keys",
]


class SemanticModel:
    """What one module says about Tinker; rules ask it questions."""

    def __init__(
        self,
        module: cst.Module,
        *,
        cadence_names: re.Pattern[str] | None = None,
        hot_loop_calls: re.Pattern[str] | None = None,
        project: ProjectView | None = None,
        module_name: str = "",
        carry: Carry | None = None,
    ) -> None:
        """``project``: the rest of the project, for calls of its functions (``helpers.py``);
        ``module_name``: this module's dotted name in it (``pkg.train``). ``carry``: an editor
        buffer's carry-over (``facts/carry.py``; None in a batch run): the function summaries of
        the buffer's last model are taken over where nothing they read changed (``reuse.py``)."""
        self.module = module
        # The pass keeps each top-level statement's records for the next lint (``collect.py``):
        # they read nothing of the project.
        index_carry = carry
        if carry is not None and project is not None:
            if not (
                isinstance(getattr(project, "consulted", None), list)
                and hasattr(project, "index")
                and hasattr(project, "given")
            ):
                carry = None  # a view that cannot say what it read: no summary is kept
            else:
                project = RecordingView(project)
        self._recording = project if isinstance(project, RecordingView) else None
        # The project files the pre-filters read before the model: what the summaries may read.
        self.consulted_before = frozenset(getattr(project, "consulted", ()))
        self.cadence_names = cadence_names
        # Calls (by name) that the project says submit a step, e.g. a wrapper from another module.
        self.hot_loop_calls = hot_loop_calls
        index = collect(module, cadence_names, carry=index_carry)
        self.index = index
        # What the pass recorded (node-keyed tables use ``id(node)``: see ``tree.py``).
        self.imports = index.imports
        self.bindings = index.bindings
        self.module_scope = index.module_scope
        self.functions = index.functions
        self.function_of_node = index.function_of_node
        self.methods = index.methods
        self.class_attrs = index.class_attrs
        self.loops = index.loops
        self.loop_of_node = index.loop_of_node
        self.calls = index.calls
        self.call_site_of = index.call_site_of
        self.guarded_blocks = index.guarded_blocks
        self.scopes = index.scopes  # every scope (comprehensions' too), for ``references``
        tree = index.tree
        self.children_of = tree.children_of
        self.parent_of = tree.parent_of
        # Memos for the flow questions (tinker_lint.model.analyses.flow), keyed by node id.
        self.events_cache: dict[tuple[int, int], list[Event]] = {}
        self.reads_cache: dict[int, set[str]] = {}
        self.run_reads_cache: dict[tuple[int, int], set[str]] = {}  # flow.reads_when_run
        self.writes_cache: dict[int, tuple[set[str], set[str], set[str]]] = {}
        self.storing_cache: dict[int, tuple[tuple[str, str, cst.BaseExpression], ...]] = {}
        self.decisions_cache: dict[int, Decision] = {}  # flow.decision_of
        self.jumps_cache: dict[int, frozenset[type]] = {}  # flow.has_jump, flow.leaves_loop
        self.breaks_cache: dict[int, bool] = {}  # flow.leaves_loop
        self.loop_waits_cache: dict[LoopInfo, list[LoopWait]] = {}  # pipeline.loop_waits

        # The questions, answered by their owners (bound methods: no call in between).
        self.children = tree.children
        self.parent = tree.parent
        self.contains = tree.contains
        self.walk = tree.walk
        inference = TypeInference(index)
        calls = SdkCalls(index, inference)
        inference.sdk_call = calls.sdk_call
        self.qualify = inference.qualify
        self.types = inference.types
        self.binding_types = inference.binding_types
        self.annotation_types = inference.annotation_types
        self.is_gather = inference.is_gather
        self.is_tokenizer = inference.is_tokenizer
        self.calls_tokenizer = inference.calls_tokenizer
        self.sdk_call = calls.sdk_call
        self.submit_of = calls.submit_of
        self.is_constructor = calls.is_constructor
        submits = Submits(index, calls)
        self.roles_submitted_by_call = submits.roles_of
        self.loop_submit_roles = submits.of_loop
        self._submits = submits
        self.project = project
        self.helpers = Helpers(self, project, module_name)
        self.helper_of = self.helpers.summary_of
        submits.helper_of = self.helper_of
        self.summary_of = self.helpers.summaries.of_function
        inference.helpers = self.helpers
        self._positions: NodePositions | None = None
        self.helpers.summaries.carry = carry
        self._inference = inference
        self._calls = calls

    # --- for summaries kept across lints (``reuse.py``) -------------------------------------
    def settle_types(self) -> None:
        if not self._inference.settled:
            self._inference.settle()

    def return_types(self, function: FunctionInfo) -> frozenset[TType] | None:
        """The types a call of ``function`` gives (``infer.py``), worked out as a side question:
        every memo it fills is emptied again after, and the project is asked through a view of its
        own (this lint is not said to read a file only this question read), so that no later
        answer, nor what is read, depends on its having been asked. None where a recursion was
        cut on the way (the answer would depend on where it was entered)."""
        inference, calls, helpers = self._inference, self._calls, self.helpers
        memos: list[dict[Any, Any]] = [
            inference._types,
            inference._qualified,
            calls._sdk_calls,
            helpers._targets,
            helpers._of_call,
        ]
        sizes = [len(memo) for memo in memos]
        cuts = (inference.cuts, calls.cuts, helpers.cuts)
        asked = helpers.project
        if self._recording is not None:
            helpers.project = self.project_again()
        try:
            found = frozenset(inference.function_call_types(function))
            if self.cut_count() != sum(cuts):
                return None
            return found
        except RecursionError:
            return None
        finally:
            helpers.project = asked
            inference.cuts, calls.cuts, helpers.cuts = cuts
            # Memos only grow, and what was in them before is never rewritten: dropping the
            # entries made since leaves them as they were.
            for memo, size in zip(memos, sizes, strict=True):
                for key in list(memo)[size:]:
                    del memo[key]

    def cut_count(self) -> int:
        """How many times a recursion was cut so far (types, SDK calls, call targets)."""
        return self._inference.cuts + self._calls.cuts + self.helpers.cuts

    def project_unchanged(self) -> bool:
        """Whether the model has read no project file beyond what the pre-filters had, and stops
        noting the project's answers (what the summaries read is read)."""
        if self._recording is None:
            return self.project is None
        self._recording.recording = False
        return frozenset(self._recording.consulted) == self.consulted_before

    def project_asked(self) -> dict[tuple[str, tuple[str, ...]], object]:
        return dict(self._recording.asked) if self._recording is not None else {}

    def project_again(self) -> ProjectView:
        """A fresh view of the project for this file, to ask the kept questions again without
        counting them as read by this lint."""
        assert self._recording is not None
        view = self._recording.view
        return view.index.view(view.given)  # type: ignore[attr-defined, no-any-return]

    array_function = staticmethod(array_function)
    is_tinker_name = staticmethod(is_tinker_name)

    def resolve_function(self, func: cst.BaseExpression, scope: Scope) -> FunctionInfo | None:
        """The function of this module that ``func(...)`` calls, when it is plain to see."""
        return resolve_function(self.methods, func, scope)

    @property
    def function_submit_roles(self) -> dict[FunctionInfo, frozenset[Role]]:
        """Roles of the requests each function of this module submits (``submits.py``)."""
        return self._submits.function_roles

    # --- references (``facts/references.py``): made on first ask ----------------------------
    def references(self, scope: Scope) -> list[Reference]:
        """Each use of a name in ``scope``'s own code (reads, writes, ``del``), in source order,
        each read with the bindings it may resolve to."""
        return self.index.references.of_scope(scope)

    def reference(self, name: cst.Name) -> Reference | None:
        """The reference a ``Name`` node is (None: an attribute's name, a keyword, in a lambda)."""
        return self.index.references.of_node(name)

    def references_to(self, binding: Binding) -> list[Reference]:
        """The reads that may resolve to ``binding`` by scope alone (which of them it reaches:
        ``dataflow.uses_of``)."""
        return self.index.references.to(binding)

    def use_positions(self, positions: NodePositions) -> NodePositions:
        """The module's positions: these, unless some were worked out already."""
        if self._positions is None:
            self._positions = positions
        return self._positions

    def line_of(self, node: cst.CSTNode) -> int:
        """The line ``node`` starts on (positions worked out for the nodes asked about only)."""
        if self._positions is None:
            self._positions = NodePositions(self.module, None, self.parent)
        return self._positions[node].start.line

    @cached_property
    def dataflow(self) -> Dataflow:
        """Def-use: the statement of a node, the names a target binds, later reads of names
        (``dataflow.py``)."""
        from tinker_lint.model.analyses.dataflow import Dataflow

        return Dataflow(self)

    @cached_property
    def steps(self) -> Steps:
        """Which loop is the step loop, and what runs on every step (``steps.py``)."""
        from tinker_lint.model.analyses.steps import Steps

        return Steps(self)

    @cached_property
    def torch_steps(self) -> TorchSteps:
        """What runs on every step of a PyTorch training loop (``torch_steps.py``, TNK4xx)."""
        from tinker_lint.model.analyses.torch_steps import TorchSteps

        return TorchSteps(self)

    @cached_property
    def tensors(self) -> Tensors:
        """Which values of a torch step are tensors, and which are on the CPU (``tensors.py``,
        TNK401/TNK404)."""
        return Tensors(self)

    @cached_property
    def datasets(self) -> Datasets:
        """What a dataset is: a ``datasets.Dataset``, a torch dataset doing per-sample I/O, the
        module's ``DataLoader`` calls (``datasets.py``, TNK402/TNK405)."""
        from tinker_lint.model.analyses.datasets import Datasets

        return Datasets(self)

    @cached_property
    def training_kinds(self) -> TrainingKinds:
        """Supervised, RL or DPO: what each function's Tinker calls train, and the cookbook
        trainer that pipelines it (``training_kind.py``)."""
        from tinker_lint.model.analyses.training_kind import TrainingKinds

        return TrainingKinds(self)

    @cached_property
    def costs(self) -> CostShapes:
        """How many times a place runs per step, over what (``cost.py``)."""
        from tinker_lint.model.analyses.cost import CostShapes

        return CostShapes(self)

    @cached_property
    def concurrency(self) -> Concurrency:
        """Whether other coroutines can run on the event loop at a place (``concurrency.py``,
        TNK104's message); worked out when a finding first asks."""
        return Concurrency(self)
