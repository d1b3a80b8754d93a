"""The semantic model of one module: what is a Tinker client, a future, a submit, a wait, a hot loop.

A facade: it holds what the one pass recorded and hands each question to the module that owns it.
Every module of ``model/``, by what it is:

- Facts, recorded once, no analysis: ``collect.py`` (the one pass), ``tree.py`` (children,
  parents, walks), ``scopes.py`` (scopes, bindings, functions, loops, call sites),
  ``references.py`` (each use of a name and the bindings it resolves to), ``imports.py``
  (import aliases), ``cadence.py`` (cadence guards); the tables ``sdk.py`` (what each SDK method
  does), ``names.py`` (names the model and the tree pre-filter share), ``types.py`` (the types
  tracked).
- Resolution, one cluster that asks itself (types, SDK calls, call targets, summaries):
  ``infer.py`` and ``annotations.py`` (types), ``sdk_calls.py`` (which calls are the SDK's),
  ``submits.py`` (what a call, a function or a loop submits), ``helpers.py`` (which project
  function a call runs), ``summaries.py`` (what calling a function does), ``arguments.py`` and
  ``bindings.py`` (what a call passes, what a region binds).
- Analyses, each the owner of one question: ``dataflow.py`` (def-use: statements, targets, later
  reads, reaching definitions), ``flow.py`` (submits, waits and data dependencies along statements), ``pipeline.py``
  (after a wait, what is submitted next), ``concurrency.py`` (can other coroutines run here),
  ``steps.py`` and ``batches.py`` (what runs on every step, loops over a batch), ``cost.py`` (how
  many times per step, over what), ``training_kind.py`` (supervised, RL or DPO),
  ``model_input.py`` (a ``ModelInput`` built token by token), and for PyTorch loops
  ``torch_steps.py``, ``tensors.py``, ``tensor_loops.py``, ``datasets.py``.
- Kept across an editor's lints of one file: ``reuse.py``.

No libcst metadata provider besides positions is used: see ``shared/performance-notes.md``.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

import libcst as cst

from tinker_lint.model.analyses.helpers import Helpers
from tinker_lint.model.analyses.infer import TypeInference
from tinker_lint.model.analyses.sdk_calls import SdkCalls
from tinker_lint.model.analyses.submits import Submits
from tinker_lint.model.analyses.summaries import ProjectView
from tinker_lint.model.facts.collect import collect
from tinker_lint.model.facts.names import array_function
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
from tinker_lint.model.facts.tree import TRIVIA as _TRIVIA  # noqa: F401 - tests/test_model_index.py
from tinker_lint.model.facts.tree import child_fields
from tinker_lint.model.facts.types import TType
from tinker_lint.model.reuse import RecordingView
from tinker_lint.syntax import buffers
from tinker_lint.syntax.positions import NodePositions

if TYPE_CHECKING:
    from tinker_lint.model.analyses.cost import CostShapes
    from tinker_lint.model.analyses.dataflow import Dataflow
    from tinker_lint.model.analyses.datasets import Datasets
    from tinker_lint.model.analyses.flow import Event
    from tinker_lint.model.analyses.pipeline import LoopWait
    from tinker_lint.model.analyses.steps import Steps
    from tinker_lint.model.analyses.torch_steps import TorchSteps
    from tinker_lint.model.analyses.training_kind import TrainingKinds
    from tinker_lint.model.facts.sdk import Role

__all__ = [
    "Binding",
    "BindingKind",
    "BindingSite",
    "CallSite",
    "CompNode",
    "Context",
    "FunctionInfo",
    "FunctionNode",
    "LoopInfo",
    "LoopNode",
    "Reference",
    "Scope",
    "SdkCall",
    "SemanticModel",
    "TType",
    "child_fields",
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
        reuse_key: str | None = None,
    ) -> None:
        """``project``: the rest of the project, for calls of its functions (``helpers.py``);
        ``module_name``: this module's dotted name in it (``pkg.train``). ``reuse_key``: the
        file's key (the engine's ``parse_key``): the function summaries of the last model made
        under it are taken over where nothing they read changed (``reuse.py``)."""
        self.module = module
        reuse_key = reuse_key if buffers.keeps(reuse_key) else None
        # The pass keeps each top-level statement's records for the next lint (``collect.py``):
        # they read nothing of the project.
        index_key = reuse_key
        if reuse_key is not None and project is not None:
            if not (
                isinstance(getattr(project, "consulted", None), list)
                and hasattr(project, "index")
                and hasattr(project, "given")
            ):
                reuse_key = None  # a view that cannot say what it read: nothing is kept
            else:
                project = RecordingView(project)
        self._recording = project if isinstance(project, RecordingView) else None
        # The project files the pre-filters read before the model: what the summaries may read.
        self.consulted_before = frozenset(getattr(project, "consulted", ()))
        self.cadence_names = cadence_names
        # Calls (by name) that the project says submit a step, e.g. a wrapper from another module.
        self.hot_loop_calls = hot_loop_calls
        index = collect(module, cadence_names, key=index_key)
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
        self.helpers.summaries.reuse_key = reuse_key
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
