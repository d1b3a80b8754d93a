"""Which function of the project a call runs: the one owner of call resolution.

Plain to see, or unknown (never guessed from a name):
- a name bound by a ``def`` of the module, or imported from a module of the project;
- ``self.m(...)`` / ``cls.m(...)`` in a class: its method, or its bases' (the module's classes and
  the project's);
- ``obj.m(...)`` and ``obj(...)`` on an instance of a project class (``obj = Policy(...)``,
  ``obj: Policy``, ``self.policy = policy`` with ``policy: Policy``);
- ``mod.f(...)`` on an imported module of the project;
- the same of tinker-cookbook's API (``TinkerMessageCompleter``, ``do_group_rollout``) when the
  cookbook is not a module of the project: its entry of ``facts/cookbook_api.py``
  (``cookbook.py``). Where the project holds the cookbook, its own summaries answer.

The answer is the callee's summary (``summaries.py``); the project's other modules are asked
through the model's ``ProjectView``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.analyses import cookbook
from tinker_lint.model.analyses.summaries import ProjectView, Summaries, Summary, is_abstract
from tinker_lint.model.facts import cookbook_api
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.scopes import BindingKind
from tinker_lint.model.facts.types import Kind

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView
    from tinker_lint.model.facts.scopes import FunctionInfo, Scope


class Helpers:
    def __init__(self, model: ModelView, project: ProjectView | None, module_name: str):
        self.model = model
        self.project = project
        self.module_name = module_name
        self.summaries = Summaries(model, project.path if project is not None else "")
        self._of_call: dict[int, Summary | None] = {}
        self._targets: dict[int, FunctionInfo | Summary | tuple[FunctionInfo, ...] | None] = {}
        self._resolving: set[int] = set()
        self.cuts = 0  # calls met again inside their own resolution

    # --- the questions ---------------------------------------------------------------------
    def summary_of(self, call: cst.Call, scope: Scope) -> Summary | None:
        """The summary of the project function ``call`` runs, if it is plain to see which."""
        key = id(call)
        if key in self._of_call:
            return self._of_call[key]
        if not self.summaries.settled:
            # Every function of the module is summarised first, in source order, so that no
            # answer depends on which question came first.
            self.summaries.settle()
            if key in self._of_call:
                return self._of_call[key]
        target = self.target(call, scope)
        found: Summary | None
        if target is None or isinstance(target, Summary):
            found = target
        elif isinstance(target, tuple):
            # An interface: what its overrides do, when they all wait (``PreferenceModel``).
            summaries = [self.summaries.of_function(f) for f in target]
            found = summaries[0] if summaries and all(s.waits for s in summaries) else None
        else:
            found = self.summaries.of_function(target)
        self._of_call[key] = found
        return found

    def target(
        self, call: cst.Call, scope: Scope
    ) -> FunctionInfo | Summary | tuple[FunctionInfo, ...] | None:
        """What ``call`` runs, without summarising this module's functions (type inference asks
        this while the summaries may not be made yet)."""
        key = id(call)
        if key in self._targets:
            if key in self._resolving:
                self.cuts += 1
            return self._targets[key]
        self._targets[key] = None  # a call inside its own resolution counts as nothing
        self._resolving.add(key)
        try:
            found = self._resolve(call.func, scope)
        finally:
            self._resolving.discard(key)
        self._targets[key] = found
        return found

    def qualified_class(self, name: str) -> str:
        """A class of this module, named as the project names it."""
        return f"{self.module_name}.{name}" if self.module_name else name

    def is_class(self, func: cst.BaseExpression, scope: Scope) -> str | None:
        """The qualified class ``func`` names (``Policy``, ``types.Policy``), if a project one."""
        if isinstance(func, cst.Name):
            for binding in scope.lookup(func.value):
                if binding.kind is BindingKind.CLASS:
                    return self.qualified_class(func.value)
                return None
        qualified = self._imported(func, scope)
        if qualified is None:
            return None
        if self.project is not None and self.project.is_class(qualified):
            return qualified
        if cookbook_api.is_class(qualified) and self._library(qualified):
            return qualified
        return None

    # --- resolution ------------------------------------------------------------------------
    def _resolve(
        self, func: cst.BaseExpression, scope: Scope
    ) -> FunctionInfo | Summary | tuple[FunctionInfo, ...] | None:
        model = self.model
        if isinstance(func, cst.Name):
            bindings = scope.lookup(func.value)
            for binding in bindings:
                if binding.kind is BindingKind.DEF and binding.function is not None:
                    return binding.function
            if bindings:
                return self._instance_call(func, scope)
            return self._external(func, scope)
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        name = func.attr.value
        function = scope.function
        if (
            isinstance(receiver, cst.Name)
            and function is not None
            and function.class_name is not None
            and receiver.value in (function.self_name, "cls")
        ):
            own = self.method(self.qualified_class(function.class_name), name)
            if own is not None:
                return own
            return self._instance_call(func, scope)  # ``self.model(x)``: an attribute called
        types = model.types(receiver, scope)
        for t in sorted(types, key=lambda t: t.name):
            if t.kind is Kind.INSTANCE:
                found = self.method(t.name, name)
                if found is not None:
                    return found
        if types:
            return self._instance_call(func, scope)
        return self._external(func, scope)

    def _instance_call(
        self, func: cst.BaseExpression, scope: Scope
    ) -> FunctionInfo | Summary | tuple[FunctionInfo, ...] | None:
        """``policy(prompt)``: the ``__call__`` of the project class ``policy`` is an instance of."""
        for t in sorted(self.model.types(func, scope), key=lambda t: t.name):
            if t.kind is Kind.INSTANCE:
                found = self.method(t.name, "__call__")
                if found is not None:
                    return found
        return None

    def _imported(self, func: cst.BaseExpression, scope: Scope) -> str | None:
        dotted = dotted_name(func)
        if dotted is None or scope.lookup(dotted.split(".")[0]) or self.project is None:
            return None
        qualified = self.model.imports.qualify(func)
        if qualified is None:
            return None
        return self.project.absolute_name(qualified)

    def _library(self, qualified: str) -> bool:
        """Whether ``qualified`` is tinker-cookbook's and the project does not hold it (then the
        cookbook's table answers for it; else the project's own code does). A file linted with
        no project sees no helpers, the cookbook's neither: the pre-filters, which ask the
        project for them, see none either."""
        return (
            self.project is not None
            and cookbook_api.in_cookbook(qualified)
            and not self.project.holds(qualified)
        )

    def _external(self, func: cst.BaseExpression, scope: Scope) -> Summary | None:
        qualified = self._imported(func, scope)
        if qualified is None:
            return None
        if self.project is not None:
            if self.project.is_class(qualified):
                return None  # a constructor: its ``__init__`` is setup, not a step
            found = self.project.function(qualified)
            if found is not None:
                return found
        return cookbook.function(qualified) if self._library(qualified) else None

    def _elsewhere(self, qualified_class: str, name: str) -> Summary | None:
        """``name`` on an instance of a class of another module: the project's, or the
        cookbook's."""
        found = self.project.method(qualified_class, name) if self.project is not None else None
        if found is None and self._library(qualified_class):
            found = cookbook.method(qualified_class, name)
        return found

    def method(
        self, qualified_class: str, name: str
    ) -> FunctionInfo | Summary | tuple[FunctionInfo, ...] | None:
        """``name`` on an instance of ``qualified_class``: this module's classes (through their
        bases), or the project's."""
        module, _, class_name = qualified_class.rpartition(".")
        if module != self.module_name or class_name not in self.model.index.classes:
            return self._elsewhere(qualified_class, name)
        return self._local_method(class_name, name, set())

    def _local_method(
        self, class_name: str, name: str, seen: set[str]
    ) -> FunctionInfo | Summary | tuple[FunctionInfo, ...] | None:
        if class_name in seen:
            return None
        seen.add(class_name)
        methods = self.model.index.methods.get(class_name, {})
        own = methods.get(name)
        if own is not None:
            return own if not is_abstract(own.node) else self._overrides(class_name, name)
        node = self.model.index.classes[class_name]
        for base in node.bases:
            value = base.value
            found: FunctionInfo | Summary | tuple[FunctionInfo, ...] | None
            if isinstance(value, cst.Name) and value.value in self.model.index.classes:
                found = self._local_method(value.value, name, seen)
            else:
                qualified = self._imported(value, self.model.module_scope)
                found = self._elsewhere(qualified, name) if qualified is not None else None
            if found is not None:
                return found
        return None

    def _overrides(self, class_name: str, name: str) -> tuple[FunctionInfo, ...] | None:
        """A method without a body (an interface): its overrides in this module's subclasses."""
        found: list[FunctionInfo] = []
        for other, node in self.model.index.classes.items():
            if other == class_name:
                continue
            if any(
                isinstance(b.value, cst.Name) and b.value.value == class_name for b in node.bases
            ):
                override = self.model.index.methods.get(other, {}).get(name)
                if override is not None and not is_abstract(override.node):
                    found.append(override)
        return tuple(found) or None
