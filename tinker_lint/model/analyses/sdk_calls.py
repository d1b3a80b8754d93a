"""Which calls are Tinker SDK calls: the method called, and why the receiver is taken for a Tinker
client (its inferred type, a method name only Tinker has, the receiver's name, a Tinker-only
keyword). Memoised per call node.
"""

from __future__ import annotations

import libcst as cst

from tinker_lint.model.analyses.infer import TypeInference
from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.collect import ModuleIndex
from tinker_lint.model.facts.imports import dotted_name
from tinker_lint.model.facts.scopes import Scope, SdkCall, is_tinker_name
from tinker_lint.model.facts.sdk import SdkMethod
from tinker_lint.model.facts.types import Kind, TType


class SdkCalls:
    def __init__(self, index: ModuleIndex, inference: TypeInference) -> None:
        self.index = index
        self.inference = inference
        self._sdk_calls: dict[int, SdkCall | None] = {}
        self._classifying: set[int] = set()
        self.cuts = 0  # recursions cut through a receiver's type

    def sdk_call(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None:
        """The Tinker method ``call`` invokes, if the receiver is (believed to be) a client."""
        if not self.inference.settled:
            self.inference.settle()
        key = id(call)
        if key in self._sdk_calls:
            if key in self._classifying:
                self.cuts += 1
            return self._sdk_calls[key]
        if scope is None:
            site = self.index.call_site_of.get(key)
            if site is None:
                return None
            scope = site.scope
        self._sdk_calls[key] = None  # guards recursion through the receiver's type
        self._classifying.add(key)
        try:
            result = self._classify_sdk_call(call, scope)
        finally:
            self._classifying.discard(key)
        self._sdk_calls[key] = result
        return result

    def _classify_sdk_call(self, call: cst.Call, scope: Scope) -> SdkCall | None:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        name = func.attr.value
        receiver = func.value
        if self.inference.qualify(receiver, scope) is not None:
            # ``tinker.SamplingClient.from_sampler_handle(...)``: a class method, or a module function.
            qualified = self.inference.qualify(receiver, scope) or ""
            last = qualified.rsplit(".", 1)[-1]
            if qualified.startswith("tinker.") and last in sdk.CLIENT_CLASSES:
                method = sdk.lookup(sdk.CLIENT_CLASSES[last], name)
                return SdkCall(call, method, "dataflow") if method else None
            return None
        # By the receiver's inferred types. They come as a set, whose order the hash seed and the
        # nodes' addresses decide: nothing is picked by its place in it. A client is taken before
        # a client's future (a name bound to both, ``tc = await tc``, is taken for the client).
        types = self.inference.types(receiver, scope)
        found = _on_client(call, name, types)
        if found is not None:
            return found
        if name in sdk.FUTURE_METHODS and any(_client_future(t) for t in types):
            return None  # ``.result()`` on a client's future: not a client method
        found = self._on_client_future(call, name, types)
        if found is not None:
            return found
        if name in sdk.DISTINCTIVE:
            return SdkCall(call, sdk.DISTINCTIVE[name], "distinctive")
        receiver_name = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
        for hint, kind in sdk.RECEIVER_NAME_HINTS:
            if hint in receiver_name:
                method = sdk.lookup(kind, name)
                if method is not None:
                    return SdkCall(call, method, "name")
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in sdk.TINKER_ONLY_KEYWORDS:
                method = sdk.lookup(sdk.TINKER_ONLY_KEYWORDS[arg.keyword.value], name)
                if method is not None:
                    return SdkCall(call, method, "keyword")
        return None

    def _on_client_future(
        self, call: cst.Call, name: str, types: frozenset[TType]
    ) -> SdkCall | None:
        """A client method called on 0.38's future of the client, with every factory call whose
        future the receiver may be (``sc`` made before a loop and again every few steps in it:
        both), in source order; the method is the first one's."""
        used: list[tuple[int, SdkMethod, cst.CSTNode]] = []
        for t in types:
            if _client_future(t) and t.client is not None and t.origin is not None:
                method = sdk.lookup(t.client, name)
                site = self.index.call_site_of.get(t.origin_id)
                if method is not None and site is not None:
                    used.append((site.order, method, t.origin))
        if not used:
            return None
        used.sort(key=lambda found: found[0])
        origins = tuple(dict.fromkeys(origin for _, _, origin in used))
        return SdkCall(call, used[0][1], "dataflow", True, origins)

    def submit_of(self, call: cst.Call, scope: Scope | None = None) -> SdkCall | None:
        """The SDK call if ``call`` submits a request (training, sampling or save)."""
        found = self.sdk_call(call, scope)
        return found if found is not None and found.method.is_submit else None

    def is_constructor(self, call: cst.Call, scope: Scope, *names: str) -> bool:
        return is_tinker_name(self.inference.qualify(call.func, scope), *names)


def _on_client(call: cst.Call, name: str, types: frozenset[TType]) -> SdkCall | None:
    """A method of a client the receiver may be; of the first in ``Client``'s order that has
    it, when it may be several (``client = sc if sampling else tc``)."""
    clients = {t.client for t in types if t.kind is Kind.CLIENT and t.client is not None}
    for client in sdk.Client:
        method = sdk.lookup(client, name) if client in clients else None
        if method is not None:
            return SdkCall(call, method, "dataflow")
    return None


def _client_future(t: TType) -> bool:
    return t.kind is Kind.CLIENT_FUTURE and t.client is not None
