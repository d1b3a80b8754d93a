"""The few static types tinker-lint tracks: Tinker clients, futures and what waiting on them gives."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from libcst import CSTNode

from tinker_lint.model.facts.sdk import Client, SdkMethod


class Kind(str, Enum):
    CLIENT = "client"  # a Tinker client (``client`` says which)
    FUTURE = "future"  # an APIFuture; waiting on it gives ``inner``
    CLIENT_FUTURE = "client-future"  # 0.38's future of a client, usable (deprecated) as the client
    CONCURRENT_FUTURE = "concurrent-future"  # ``fut.future()``: a concurrent.futures.Future
    COROUTINE = "coroutine"  # what a deprecated ``*_async`` call gives; awaiting gives ``inner``
    RESULT = "result"  # the value a request produced
    LIST = "list"  # a list (or other iterable) of ``inner``
    TUPLE = "tuple"  # a fixed-length sequence: ``items`` holds each position's possible types
    TOKENIZER = "tokenizer"  # a Hugging Face tokenizer
    ARRAY = "array"  # a numpy array or torch tensor (iterating it runs Python per element)
    INSTANCE = "instance"  # an instance of a class of the project: ``name`` is its qualified name
    MODEL_INPUT = "model-input"  # a ``tinker.ModelInput`` (its ``append``/``append_int`` copy it)


@dataclass(frozen=True)
class TType:
    kind: Kind
    client: Client | None = None
    inner: TType | None = None
    # The SDK method whose request this future/result/coroutine stands for.
    method: SdkMethod | None = None
    # Where the value was made (a Call node); compared by identity only.
    origin_id: int = 0
    origin: CSTNode | None = field(default=None, compare=False, hash=False, repr=False)
    items: tuple[frozenset[TType], ...] = ()  # for TUPLE
    name: str = ""  # for INSTANCE: the class, as ``package.module.Class``

    @property
    def is_future(self) -> bool:
        return self.kind in (Kind.FUTURE, Kind.CLIENT_FUTURE, Kind.CONCURRENT_FUTURE)

    def awaited(self) -> TType | None:
        """The type of ``await value``, or None if it is not awaitable in a way we track."""
        if self.kind in (Kind.FUTURE, Kind.CLIENT_FUTURE, Kind.COROUTINE):
            return self.inner
        return None

    def waited(self) -> TType | None:
        """The type of ``value.result()``."""
        if self.is_future:
            return self.inner
        return None


def client(kind: Client) -> TType:
    return TType(Kind.CLIENT, client=kind)


def result_of(method: SdkMethod | None, origin: CSTNode | None = None) -> TType:
    if method is not None and method.makes is not None:
        return client(method.makes)
    if method is not None and method.name == "get_tokenizer":
        return TOKENIZER
    return TType(Kind.RESULT, method=method, origin_id=id(origin), origin=origin)


def future(inner: TType, method: SdkMethod | None, origin: CSTNode | None) -> TType:
    return TType(Kind.FUTURE, inner=inner, method=method, origin_id=id(origin), origin=origin)


def instance(qualified_class: str) -> TType:
    return TType(Kind.INSTANCE, name=qualified_class)


TOKENIZER = TType(Kind.TOKENIZER)
ARRAY = TType(Kind.ARRAY)
MODEL_INPUT = TType(Kind.MODEL_INPUT)
UNKNOWN_FUTURE = TType(Kind.FUTURE, inner=TType(Kind.RESULT))
