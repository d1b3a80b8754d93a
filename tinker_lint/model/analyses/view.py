"""What an analysis may ask of the model: the records of the one pass and the other analyses'
answers, as a protocol.

The analyses are made and wired together by ``model/query.py`` (``SemanticModel``, the
composition root), which satisfies this protocol (mypy checks it where ``query.py`` hands itself
to an analysis); an analysis imports this module, never ``query.py``, so ``facts < analyses <
query`` holds as an import-linter layer contract, type-only imports included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from tinker_lint.model.facts.collect import ModuleIndex
from tinker_lint.model.facts.imports import ImportMap
from tinker_lint.model.facts.references import Reference
from tinker_lint.model.facts.scopes import Binding, CallSite, FunctionInfo, LoopInfo, Scope, SdkCall
from tinker_lint.model.facts.sdk import Role
from tinker_lint.model.facts.types import TType

if TYPE_CHECKING:
    from tinker_lint.model.analyses.flow import Decision, Event
    from tinker_lint.model.analyses.helpers import Helpers
    from tinker_lint.model.analyses.pipeline import LoopWait
    from tinker_lint.model.analyses.steps import Steps
    from tinker_lint.model.analyses.summaries import ProjectView, Summary
    from tinker_lint.model.analyses.torch_steps import TorchSteps


class ModelView(Protocol):
    """The model as an analysis sees it."""

    # --- the records of the one pass (``facts/collect.py``) ---------------------------------
    module: cst.Module
    index: ModuleIndex
    imports: ImportMap
    bindings: list[Binding]
    module_scope: Scope
    functions: list[FunctionInfo]
    function_of_node: dict[int, FunctionInfo]
    methods: dict[str, dict[str, FunctionInfo]]
    class_attrs: dict[str, dict[str, list[Binding]]]
    loops: list[LoopInfo]
    loop_of_node: dict[int, LoopInfo]
    calls: list[CallSite]
    call_site_of: dict[int, CallSite]
    guarded_blocks: set[int]
    children_of: dict[int, list[cst.CSTNode]]
    parent_of: dict[int, cst.CSTNode]
    cadence_names: re.Pattern[str] | None
    hot_loop_calls: re.Pattern[str] | None
    consulted_before: frozenset[str]

    # --- the tree (``facts/tree.py``) ---------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None: ...
    def children(self, node: cst.CSTNode) -> list[cst.CSTNode]: ...
    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool: ...
    def walk(self, node: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]: ...
    def line_of(self, node: cst.CSTNode) -> int: ...

    # --- references (``facts/references.py``), made on first ask ------------------------------
    def reference(self, name: cst.Name) -> Reference | None: ...
    def references_to(self, binding: Binding) -> list[Reference]: ...

    # --- resolution: types, SDK calls, helpers, summaries -------------------------------------
    def qualify(self, node: cst.BaseExpression, scope: Scope) -> str | None: ...
    def types(self, expr: cst.BaseExpression, scope: Scope) -> frozenset[TType]: ...
    def binding_types(self, binding: Binding) -> frozenset[TType]: ...
    def is_gather(self, call: cst.Call, scope: Scope) -> bool: ...
    def sdk_call(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None: ...
    def submit_of(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None: ...
    def roles_submitted_by_call(self, call: cst.Call, scope: Scope) -> frozenset[Role]: ...
    def loop_submit_roles(self, loop: LoopInfo) -> frozenset[Role]: ...
    @property
    def function_submit_roles(self) -> dict[FunctionInfo, frozenset[Role]]: ...
    def resolve_function(self, func: cst.BaseExpression, scope: Scope) -> FunctionInfo | None: ...

    helpers: Helpers

    def helper_of(self, call: cst.Call, scope: Scope) -> Summary | None: ...
    def settle_types(self) -> None: ...
    def return_types(self, function: FunctionInfo) -> frozenset[TType] | None: ...
    def cut_count(self) -> int: ...
    def project_unchanged(self) -> bool: ...
    def project_asked(self) -> dict[tuple[str, tuple[str, ...]], object]: ...
    def project_again(self) -> ProjectView: ...

    # --- the other analyses a question leads to -----------------------------------------------
    @property
    def steps(self) -> Steps: ...
    @property
    def torch_steps(self) -> TorchSteps: ...

    # --- the flow questions' memos, keyed by node id (``flow.py``, ``pipeline.py``) -----------
    events_cache: dict[tuple[int, int], list[Event]]
    reads_cache: dict[int, set[str]]
    run_reads_cache: dict[tuple[int, int], set[str]]
    writes_cache: dict[int, tuple[set[str], set[str], set[str]]]
    storing_cache: dict[int, tuple[tuple[str, str, cst.BaseExpression], ...]]
    decisions_cache: dict[int, Decision]
    jumps_cache: dict[int, frozenset[type]]
    breaks_cache: dict[int, bool]
    loop_waits_cache: dict[LoopInfo, list[LoopWait]]
