"""A stand-in ``tinker`` module for running the generated training loops of ``fix_programs``: it
records every request and every call of the loop's helpers, so a program and its fixed version can
be compared by what they do. It copies the structure of tinker 0.38 that the fixes rely on (and
that ``test_fix_sdk.py`` checks in the real package): a deprecated ``*_async`` method is
``return self.<plain>(...)`` or ``return await self.<plain>(...)``; futures can be waited with
``.result()``, ``await`` or ``.result_async()``; a client factory returns a future of the client
that also forwards the client's methods.
"""

from __future__ import annotations

import types
from typing import Any


class RequestFailed(RuntimeError):
    pass


class Recorder:
    def __init__(self, fail: int | None = None) -> None:
        self.events: list[tuple] = []
        self.requests = 0
        self.fail = fail  # the number of the request whose result is an error

    def submit(self, method: str, *args: Any) -> Future:
        self.requests += 1
        self.events.append(("submit", method, self.requests, describe(args)))
        failed = self.requests == self.fail
        value = RequestFailed(f"request {self.requests}") if failed else (method, self.requests)
        return Future(value)


class Future:
    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self, timeout: float | None = None) -> Any:
        if isinstance(self._value, BaseException):
            raise self._value
        return self._value

    async def result_async(self, timeout: float | None = None) -> Any:
        return self.result()

    def __await__(self):
        return self.result_async().__await__()


class TrainingClient:
    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def forward_backward(self, data, loss_fn, loss_fn_config=None):
        return self._recorder.submit("forward_backward", data, loss_fn, loss_fn_config)

    async def forward_backward_async(self, data, loss_fn, loss_fn_config=None):
        return self.forward_backward(data, loss_fn, loss_fn_config)

    def optim_step(self, optim_params):
        return self._recorder.submit("optim_step", optim_params)

    async def optim_step_async(self, optim_params):
        return self.optim_step(optim_params)

    def save_state(self, name):
        return self._recorder.submit("save_state", name)


class SamplingClient:
    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def sample(self, prompt, num_samples, sampling_params):
        return self._recorder.submit("sample", prompt, num_samples, sampling_params)

    async def sample_async(self, prompt, num_samples, sampling_params):
        return await self.sample(prompt, num_samples, sampling_params)


class ClientFuture(Future):
    """A future of a client that can be used, deprecated, as the client."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result(), name)


def module(recorder: Recorder) -> types.ModuleType:
    fake = types.ModuleType("tinker")

    class ServiceClient:
        def create_lora_training_client(self, base_model):
            recorder.events.append(("create", "training"))
            return ClientFuture(TrainingClient(recorder))

        async def create_lora_training_client_async(self, base_model):
            return await self.create_lora_training_client(base_model)

        def create_sampling_client(self, base_model):
            recorder.events.append(("create", "sampling"))
            return ClientFuture(SamplingClient(recorder))

        async def create_sampling_client_async(self, base_model):
            return await self.create_sampling_client(base_model)

    fake.ServiceClient = ServiceClient
    return fake


def describe(value: Any) -> Any:
    """A value as it can be compared across runs (objects by kind, futures by what they hold)."""
    if isinstance(value, Future):
        return (type(value).__name__, describe(value._value))
    if isinstance(value, TrainingClient | SamplingClient):
        return type(value).__name__
    if isinstance(value, tuple):
        return tuple(describe(v) for v in value)
    return value


def helpers(recorder: Recorder) -> dict[str, Any]:
    """The names the generated loops use besides tinker's: each call is recorded."""

    def recorded(name: str):
        def call(*args: Any) -> Any:
            recorder.events.append((name, tuple(describe(a) for a in args)))
            return (name, args)

        return call

    names = ("schedule", "metrics", "adam_for", "register", "print")
    found: dict[str, Any] = {name: recorded(name) for name in names}
    found.update(batches=["b0", "b1", "b2"], prompt="p", params="sp", adam="adam")
    return found
