"""What the Tinker SDK's public methods do, as tables the semantic model reads.

Evidence is in ``shared/tinker-sdk-facts.md``; ``tests/test_sdk_tables.py`` checks these tables against
the installed ``tinker`` package, so a new or renamed SDK method fails the suite until it is classified.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from packaging.version import Version

from tinker_lint.versions import ASYNC_DEPRECATION_VERSION as ASYNC_DEPRECATION_VERSION
from tinker_lint.versions import NEWEST_KNOWN_TINKER as NEWEST_KNOWN_TINKER


class Client(str, Enum):
    SERVICE = "ServiceClient"
    TRAINING = "TrainingClient"
    SAMPLING = "SamplingClient"
    REST = "RestClient"
    ADMIN = "AdminClient"


class Role(str, Enum):
    TRAIN = "train"  # a training request: forward, forward_backward, optim_step
    SAMPLE = "sample"  # a sampling request: sample, compute_logprobs
    SAVE = "save"  # a checkpoint/weights save on the training client
    FACTORY = "factory"  # makes a client (a network round trip; setup, not per step)
    INFO = "info"  # get_info, get_tokenizer and other setup/metadata calls
    REST = "rest"  # management calls (RestClient, AdminClient, close, copy_weights)
    LOCAL = "local"  # no request at all


class Returns(str, Enum):
    FUTURE = "future"  # an APIFuture at once (the sync submit forms)
    FUTURE_AFTER_AWAIT = "future-after-await"  # async def returning an APIFuture: await twice
    VALUE_AFTER_AWAIT = "value-after-await"  # async def returning the value: submit and wait in one
    CLIENT_FUTURE = "client-future"  # a future of a client (Backcompat*ClientFuture in 0.38)
    VALUE = "value"  # a plain value


@dataclass(frozen=True)
class SdkMethod:
    name: str
    client: Client
    role: Role
    returns: Returns
    # Set for client factories: the kind of client the (awaited) value is.
    makes: Client | None = None
    # Method names unique to Tinker count on any receiver; generic words need receiver evidence.
    distinctive: bool = False
    deprecated: bool = False

    @property
    def is_submit(self) -> bool:
        return self.role in (Role.TRAIN, Role.SAMPLE, Role.SAVE)

    @property
    def plain_name(self) -> str:
        """The non-``_async`` form that replaces a deprecated ``*_async`` method."""
        return self.name.removesuffix("_async")


def _pair(
    name: str,
    client: Client,
    role: Role,
    returns: Returns,
    async_returns: Returns,
    *,
    makes: Client | None = None,
    distinctive: bool = False,
    sync_deprecated: bool = False,
) -> list[SdkMethod]:
    """A sync method and its deprecated ``*_async`` twin."""
    return [
        SdkMethod(name, client, role, returns, makes, distinctive, sync_deprecated),
        SdkMethod(f"{name}_async", client, role, async_returns, makes, distinctive, True),
    ]


F, FA, VA, CF, V = (
    Returns.FUTURE,
    Returns.FUTURE_AFTER_AWAIT,
    Returns.VALUE_AFTER_AWAIT,
    Returns.CLIENT_FUTURE,
    Returns.VALUE,
)
T, S, SV = Client.TRAINING, Client.SAMPLING, Client.SERVICE

_TRAINING = [
    *_pair("forward", T, Role.TRAIN, F, FA),
    *_pair("forward_backward", T, Role.TRAIN, F, FA, distinctive=True),
    *_pair("forward_backward_custom", T, Role.TRAIN, F, FA, distinctive=True),
    *_pair("optim_step", T, Role.TRAIN, F, FA, distinctive=True),
    *_pair("save_state", T, Role.SAVE, F, FA),
    *_pair("save_weights_for_sampler", T, Role.SAVE, F, FA, distinctive=True),
    *_pair("save_weights_external", T, Role.SAVE, F, FA, distinctive=True),
    *_pair("save_weights_and_get_sampling_client", T, Role.SAVE, CF, VA, makes=S, distinctive=True),
    *_pair("create_sampling_client", T, Role.FACTORY, CF, VA, makes=S),
    *_pair("load_state", T, Role.REST, F, FA, sync_deprecated=True),
    *_pair("load_state_with_optimizer", T, Role.REST, F, FA, sync_deprecated=True),
    *_pair("get_info", T, Role.INFO, V, VA),
    SdkMethod("get_tokenizer", T, Role.INFO, V),
    SdkMethod("get_console_url", T, Role.LOCAL, V),
    SdkMethod("get_telemetry", T, Role.LOCAL, V),
]

_SAMPLING = [
    *_pair("sample", S, Role.SAMPLE, F, VA),
    *_pair("compute_logprobs", S, Role.SAMPLE, F, VA),
    *_pair("get_base_model", S, Role.LOCAL, V, VA),
    SdkMethod("get_tokenizer", S, Role.INFO, V),
    SdkMethod("get_sampler_handle", S, Role.LOCAL, V),
    SdkMethod("from_sampler_handle", S, Role.LOCAL, V, makes=S),
    SdkMethod("create", S, Role.FACTORY, F, makes=S),
    SdkMethod("on_queue_state_change", S, Role.LOCAL, V),
    SdkMethod("get_telemetry", S, Role.LOCAL, V),
]

_SERVICE = [
    *_pair("create_lora_training_client", SV, Role.FACTORY, CF, VA, makes=T, distinctive=True),
    *_pair(
        "create_training_client_from_state", SV, Role.FACTORY, CF, VA, makes=T, distinctive=True
    ),
    *_pair(
        "create_training_client_from_state_with_optimizer",
        SV,
        Role.FACTORY,
        CF,
        VA,
        makes=T,
        distinctive=True,
    ),
    *_pair("create_sampling_client", SV, Role.FACTORY, CF, VA, makes=S),
    *_pair("get_server_capabilities", SV, Role.INFO, V, VA, sync_deprecated=True),
    SdkMethod("create_rest_client", SV, Role.FACTORY, V, makes=Client.REST, deprecated=True),
    SdkMethod("create_custom_loss", SV, Role.INFO, F),
    SdkMethod("copy_weights", SV, Role.REST, F),
    SdkMethod("close", SV, Role.REST, F),
    SdkMethod("get_console_url", SV, Role.LOCAL, V),
    SdkMethod("get_telemetry", SV, Role.LOCAL, V),
    SdkMethod("holder", SV, Role.LOCAL, V),
]

# RestClient/AdminClient: management calls, never part of a training step. Each sync form returns
# an APIFuture; its ``*_async`` twin is deprecated and returns the value after one await.
_REST_PAIRS = [
    "assign_session_project",
    "copy_weights",
    "delete_checkpoint",
    "delete_checkpoint_from_tinker_path",
    "export_session_trace",
    "get_external_weights_urls",
    "get_sampler",
    "get_session",
    "get_training_run",
    "get_training_run_by_tinker_path",
    "list_checkpoints",
    "list_sessions",
    "list_training_runs",
    "list_user_checkpoints",
    "publish_checkpoint_from_tinker_path",
    "set_checkpoint_ttl_from_tinker_path",
    "unpublish_checkpoint_from_tinker_path",
]
_REST_DEPRECATED_PAIRS = "get_audit_log get_billing_usage get_current_checkpoint_storage_usage"
_REST = [
    *(m for n in _REST_PAIRS for m in _pair(n, Client.REST, Role.REST, F, VA)),
    *(
        m
        for n in _REST_DEPRECATED_PAIRS.split()
        for m in _pair(n, Client.REST, Role.REST, F, VA, sync_deprecated=True)
    ),
    SdkMethod("get_server_capabilities", Client.REST, Role.REST, F),
    SdkMethod("get_weights_info_by_tinker_path", Client.REST, Role.REST, F),
    SdkMethod("whoami", Client.REST, Role.REST, F),
    # Experimental, not deprecated: tinker marks it with ``typing_extensions.deprecated`` and
    # ``category=ExperimentalWarning``, so ``__deprecated__`` is set all the same.
    SdkMethod("search_sessions", Client.REST, Role.REST, F),
    SdkMethod("get_telemetry", Client.REST, Role.LOCAL, V),
]
_ADMIN = [
    *(m for n in _REST_DEPRECATED_PAIRS.split() for m in _pair(n, Client.ADMIN, Role.REST, F, VA)),
    SdkMethod("get_telemetry", Client.ADMIN, Role.LOCAL, V),
]

METHODS: dict[Client, dict[str, SdkMethod]] = {}
for _m in (*_TRAINING, *_SAMPLING, *_SERVICE, *_REST, *_ADMIN):
    METHODS.setdefault(_m.client, {})[_m.name] = _m

# Methods whose name alone identifies Tinker, on any receiver (a TrainingClient's unless known).
DISTINCTIVE: dict[str, SdkMethod] = {
    m.name: m for table in METHODS.values() for m in table.values() if m.distinctive
}

# Keywords only Tinker's generic-named methods take: `x.sample(..., sampling_params=...)` is Tinker's.
TINKER_ONLY_KEYWORDS: dict[str, Client] = {
    "sampling_params": Client.SAMPLING,
    "num_samples": Client.SAMPLING,
    "prompt_logprobs_last_n": Client.SAMPLING,
    "loss_fn": Client.TRAINING,
}

# Receiver names that stand for a client when dataflow says nothing (spec: "semantic model").
RECEIVER_NAME_HINTS: tuple[tuple[str, Client], ...] = (
    ("sampling_client", Client.SAMPLING),
    ("sampler", Client.SAMPLING),
    ("training_client", Client.TRAINING),
)

# The public client classes, by their name in the ``tinker`` namespace.
CLIENT_CLASSES: dict[str, Client] = {c.value: c for c in Client}

# APIFuture's own methods: waiting on, or converting, a future.
FUTURE_METHODS = frozenset({"result", "result_async", "future", "coroutine"})

# Methods of the SDK's value types that return a new value and leave their receiver as it was,
# by class (``ModelInput.append(chunk)`` is ``ModelInput(chunks=self.chunks + [chunk])``, and
# ``append_int(t)`` appends a one-token chunk the same way). Storing a result with them changes
# nothing the receiver holds: ``prompt.append(chunk)`` makes a datum, it does not put the result in
# ``prompt`` (a list's ``append`` does). ``tests/test_sdk_tables.py`` checks each against the
# installed tinker, and that no other SDK class has a method the model takes to store.
NON_MUTATING_METHODS: dict[str, frozenset[str]] = {
    "ModelInput": frozenset({"append", "append_int"}),
}


def lookup(client: Client, name: str) -> SdkMethod | None:
    return METHODS.get(client, {}).get(name)


# Setup calls that ask the server on every call, and the releases where they do: from the first
# version up to, not including, the second. Read in each release's ``training_client.py`` and
# ``sampling_client.py``: ``get_info()`` sent a request (``_get_info_submit().result()``) until
# 0.36.0; ``TrainingClient.get_tokenizer()`` was ``@cache``d on the method up to 0.7.0 and from
# 0.8.0 to 0.36.0 called ``get_info`` over the network each time; ``SamplingClient.get_tokenizer()``
# (from 0.8.0) fetched the sampler each time. In 0.38.0 each answers from the client (its info is
# fetched when it is made; the tokenizer load is ``lru_cache``d). There is no 0.37.
_ASKS_SERVER_PER_CALL: dict[tuple[Client, str], tuple[Version, Version]] = {
    (Client.TRAINING, "get_info"): (Version("0.1.0"), Version("0.38.0")),
    (Client.TRAINING, "get_info_async"): (Version("0.1.0"), Version("0.38.0")),
    (Client.TRAINING, "get_tokenizer"): (Version("0.8.0"), Version("0.38.0")),
    (Client.SAMPLING, "get_tokenizer"): (Version("0.8.0"), Version("0.38.0")),
}


def asks_server_per_call(method: SdkMethod, version: Version) -> bool:
    """Whether a call of this information method is a request to the server in ``version``
    (setup calls that make a client or a session always are)."""
    span = _ASKS_SERVER_PER_CALL.get((method.client, method.name))
    return span is not None and span[0] <= version < span[1]
