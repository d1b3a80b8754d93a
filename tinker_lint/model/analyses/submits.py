"""What a call, a function of the module or a loop submits: the roles (training, sampling, save)
of the requests it sends, directly or through the module's own functions.

Which loop is the step loop, and what runs on every step, is ``steps.py``'s question.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import libcst as cst

from tinker_lint.model.analyses.sdk_calls import SdkCalls
from tinker_lint.model.analyses.summaries import Summary
from tinker_lint.model.facts.collect import ModuleIndex
from tinker_lint.model.facts.scopes import FunctionInfo, LoopInfo, Scope, resolve_function
from tinker_lint.model.facts.sdk import Role


class Submits:
    def __init__(self, index: ModuleIndex, calls: SdkCalls) -> None:
        self.index = index
        self.calls = calls
        # Call resolution beyond this module's plain names (``helpers.py``), given by the model.
        self.helper_of: Callable[[cst.Call, Scope], Summary | None] = lambda call, scope: None
        self._of_call: dict[tuple[int, int], frozenset[Role]] = {}
        self._of_loop: dict[LoopInfo, frozenset[Role]] = {}

    @cached_property
    def function_roles(self) -> dict[FunctionInfo, frozenset[Role]]:
        """Roles of the requests each function of this module submits, directly or through other
        functions of the module (only functions that submit)."""
        roles: dict[FunctionInfo, set[Role]] = {}
        functions = self.index.functions
        for function in functions:
            for site in function.calls:
                submit = self.calls.submit_of(site.node, site.scope)
                if submit is not None:
                    roles.setdefault(function, set()).add(submit.method.role)
        # Each function's callees in the module, resolved once (not on every round).
        callees = {
            function: [
                target
                for site in function.calls
                if (target := resolve_function(self.index.methods, site.node.func, site.scope))
                is not None
            ]
            for function in functions
        }
        changed = True
        while changed:
            changed = False
            for function in functions:
                mine = roles.setdefault(function, set())
                for target in callees[function]:
                    theirs = roles.get(target)
                    if theirs and not theirs <= mine:
                        mine |= theirs
                        changed = True
        return {key: frozenset(value) for key, value in roles.items() if value}

    def roles_of(self, call: cst.Call, scope: Scope) -> frozenset[Role]:
        """What calling ``call`` submits: its own request, or what the module function it calls
        submits."""
        # Memoised: asked of every call site by several rules (TNK101 of all of them).
        key = (id(call), id(scope))
        found = self._of_call.get(key)
        if found is None:
            found = self._of_call[key] = self._roles_of_call(call, scope)
        return found

    def _roles_of_call(self, call: cst.Call, scope: Scope) -> frozenset[Role]:
        submit = self.calls.submit_of(call, scope)
        if submit is not None:
            return frozenset({submit.method.role})
        target = resolve_function(self.index.methods, call.func, scope)
        if target is None:
            # A method through an instance or a base class, a function of another module.
            helper = self.helper_of(call, scope)
            return helper.submits if helper is not None else frozenset()
        return self.function_roles.get(target, frozenset())

    def of_loop(self, loop: LoopInfo) -> frozenset[Role]:
        """Roles of the requests a loop's body submits, directly or through module functions."""
        # Memoised: TNK102, TNK103 and the cost model ask of every loop.
        found = self._of_loop.get(loop)
        if found is None:
            roles: set[Role] = set()
            for site in loop.calls:
                roles |= self.roles_of(site.node, site.scope)
            found = self._of_loop[loop] = frozenset(roles)
        return found
