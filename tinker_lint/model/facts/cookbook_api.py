"""What tinker-cookbook's public callables do, as a table the model reads where a file calls them
and the cookbook is not a module of its project.

A file that imports ``tinker_cookbook`` and calls ``await completer(messages)`` runs
``TinkerMessageCompleter.__call__``, which samples and waits for the sample. When the file is
linted inside the cookbook's own checkout, the project's summaries say so (``summaries.py``); a
user's project does not hold the cookbook, so its functions would be unknown calls. This table
stands in for them: what each submits (sample, train, save), which of those it waits for before
it returns, whether that wait blocks the calling thread, and what it hands back (a client, or
values: none of these returns a future). The linter never imports the cookbook.

Each entry is what tinker-lint's own project model says of the function when the cookbook is the
project (its summary, ``summaries.Summary``), read from the cookbook's source;
``tests/test_cookbook_api.py`` makes that model again over the released wheel and compares every
field, so a cookbook change fails the suite until the table follows. Where the model cannot follow
the cookbook's own code (a call through a strategy object, coroutines gathered), ``through`` names
the calls on the way to the function that submits, and the test checks each one is there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tinker_lint.model.facts.sdk import Client, Role

PACKAGE = "tinker_cookbook"
# The releases the table holds for: every entry from its ``since`` to ``NEWEST_CHECKED``, which
# ``tests/test_cookbook_api.py`` checks field by field. 0.2.0, 0.3.0, 0.4.0, 0.5.0 and 0.5.8 were
# checked the same way once: the same roles, waits, loops, blocking and clients; only the SDK
# methods named in messages differ (they call the ``*_async`` forms, and ``compute_logprobs``
# where 0.6.1 samples with prompt logprobs). Releases before 0.2.0 are not covered.
OLDEST_CHECKED = "0.2.0"
NEWEST_CHECKED = "0.6.1"

S, T = Client.SAMPLING, Client.TRAINING
SAMPLE, TRAIN, SAVE = Role.SAMPLE, Role.TRAIN, Role.SAVE


@dataclass(frozen=True)
class CookbookCallable:
    """One function or method of the cookbook, as ``summaries.Summary`` would say it."""

    # Where it is defined: ``tinker_cookbook.completers.TinkerMessageCompleter.__call__``.
    qualified: str
    is_async: bool
    submits: frozenset[Role]
    # The first request it submits and the first it waits for (the SDK method, for messages).
    first_submit: tuple[Client, str] | None
    waits: frozenset[Role] = frozenset()
    first_wait: tuple[Client, str] | None = None
    last_wait: tuple[Client, str] | None = None  # the last it waits for, when not the first
    blocks: bool = False  # a plain ``def`` that waits (``asyncio.run`` inside): blocks the thread
    # Its waits all sit in loops of its own (a multi-turn episode, one wait per checkpoint kind).
    waits_in_loop: bool = False
    returns_clients: frozenset[Client] = frozenset()
    refreshes_sampler: bool = False  # it saves weights for a new sampler
    # The calls on the way to what submits, where the model does not follow them: each calls the
    # next (by its last name), and the last one's summary is this one's.
    through: tuple[str, ...] = ()
    since: str = OLDEST_CHECKED  # the oldest release it holds for

    @property
    def module(self) -> str:
        return split(self.qualified)[0]

    @property
    def name(self) -> str:
        """As a summary names it: ``do_group_rollout``, ``TinkerMessageCompleter.__call__``."""
        return split(self.qualified)[1]


def split(qualified: str) -> tuple[str, str]:
    """A function's or method's qualified name as its module and its name in it: the module ends
    before the first capitalised part (a class), or before the last part."""
    parts = qualified.split(".")
    cut = next((i for i, part in enumerate(parts) if part[:1].isupper()), len(parts) - 1)
    return ".".join(parts[:cut]), ".".join(parts[cut:])


def _sampler(qualified: str, *, in_loop: bool = False, **more: object) -> CookbookCallable:
    """An ``async def`` that samples and waits for the sample before it returns values."""
    return CookbookCallable(
        qualified,
        is_async=True,
        submits=frozenset({SAMPLE}),
        first_submit=(S, "sample"),
        waits=frozenset({SAMPLE}),
        first_wait=(S, "sample"),
        waits_in_loop=in_loop,
        **more,  # type: ignore[arg-type]
    )


_RL = "tinker_cookbook.rl"
_ENTRIES = [
    # completers.py: one ``sample`` per call, awaited.
    _sampler("tinker_cookbook.completers.TinkerTokenCompleter.__call__"),
    _sampler("tinker_cookbook.completers.TinkerMessageCompleter.__call__"),
    # rollouts: an episode is a loop of turns, each sampling and waiting (``run_rollout``).
    _sampler(f"{_RL}.rollouts.do_single_rollout", in_loop=True),
    _sampler(f"{_RL}.rollout_runner.run_rollout", in_loop=True, since="0.5.0"),
    # A group: its strategy (``FailFast`` by default) gathers one rollout per environment.
    _sampler(
        f"{_RL}.rollouts.do_group_rollout",
        in_loop=True,
        through=(f"{_RL}.rollout_strategy.FailFast.execute", f"{_RL}.rollouts.do_single_rollout"),
    ),
    _sampler(
        f"{_RL}.rollouts.do_group_rollout_and_filter_constant_reward",
        in_loop=True,
        through=(
            f"{_RL}.rollouts._do_group_rollout_and_filter_constant_reward_impl",
            f"{_RL}.rollouts.do_group_rollout",
            f"{_RL}.rollout_strategy.FailFast.execute",
            f"{_RL}.rollouts.do_single_rollout",
        ),
    ),
    # rl/metrics.py: the sampler's logprobs of the sampled tokens, requests gathered and awaited.
    _sampler(f"{_RL}.metrics.compute_post_kl"),
    _sampler(f"{_RL}.metrics.incorporate_kl_penalty"),
    # rl/train.py's steps, which user loops call one by one.
    _sampler(f"{_RL}.train.prepare_minibatch"),
    CookbookCallable(
        f"{_RL}.train.train_step",
        is_async=True,
        submits=frozenset({TRAIN}),
        first_submit=(T, "forward_backward"),
        waits=frozenset({TRAIN}),
        first_wait=(T, "forward_backward"),
        last_wait=(T, "optim_step"),
        waits_in_loop=True,
    ),
    *(
        CookbookCallable(
            f"{_RL}.train.{name}",
            is_async=True,
            submits=frozenset({SAMPLE, SAVE, TRAIN}),
            first_submit=(S, "sample"),
            waits=frozenset({SAMPLE, TRAIN}),
            first_wait=(S, "sample"),
            returns_clients=frozenset({S}),
            refreshes_sampler=True,
        )
        for name in (
            "do_train_step_and_get_sampling_client",
            "do_train_step_streaming_and_get_sampling_client",
        )
    ),
    CookbookCallable(
        f"{_RL}.train.compute_full_batch_metrics_and_get_sampling_client",
        is_async=True,
        submits=frozenset({SAMPLE, SAVE}),
        first_submit=(T, "save_weights_and_get_sampling_client"),
        waits=frozenset({SAMPLE}),
        first_wait=(S, "sample"),
        returns_clients=frozenset({S}),
        refreshes_sampler=True,
    ),
    # Saves weights and waits for the new sampling client: setup, not a request waited for.
    CookbookCallable(
        f"{_RL}.train.save_checkpoint_and_get_sampling_client",
        is_async=True,
        submits=frozenset({SAVE}),
        first_submit=(T, "save_weights_and_get_sampling_client"),
        returns_clients=frozenset({S}),
        refreshes_sampler=True,
    ),
    # checkpoint_utils.py: ``save_state`` (and ``save_weights_for_sampler``), each awaited.
    CookbookCallable(
        "tinker_cookbook.checkpoint_utils.save_checkpoint_async",
        is_async=True,
        submits=frozenset({SAVE}),
        first_submit=(T, "save_state"),
        waits=frozenset({SAVE}),
        first_wait=(T, "save_state"),
        waits_in_loop=True,
        refreshes_sampler=True,
    ),
    CookbookCallable(
        "tinker_cookbook.checkpoint_utils.save_checkpoint",
        is_async=False,
        submits=frozenset({SAVE}),
        first_submit=(T, "save_state"),
        waits=frozenset({SAVE}),
        first_wait=(T, "save_state"),
        blocks=True,  # ``asyncio.run(save_checkpoint_async(...))``
        waits_in_loop=True,
        refreshes_sampler=True,
    ),
    # Evaluators, graders and adapters that sample (or run a forward pass) per call.
    CookbookCallable(
        "tinker_cookbook.supervised.nll_evaluator.NLLEvaluator.__call__",
        is_async=True,
        submits=frozenset({TRAIN}),
        first_submit=(T, "forward"),
        waits=frozenset({TRAIN}),
        first_wait=(T, "forward"),
    ),
    _sampler("tinker_cookbook.preference.types.PreferenceModelFromChatRenderer.__call__"),
    _sampler("tinker_cookbook.eval.inspect_utils.InspectAPIFromTinkerSampling.generate"),
    _sampler("tinker_cookbook.eval.custom_evaluators.CustomEvaluator.__call__", in_loop=True),
    _sampler(
        f"{_RL}.preference_envs.PairwisePreferenceGroupBuilder.compute_group_rewards", in_loop=True
    ),
]

CALLABLES: dict[str, CookbookCallable] = {entry.qualified: entry for entry in _ENTRIES}

# Names the cookbook's modules import from the module that defines them (re-exports): a file may
# import them from either (``from tinker_cookbook.rl.train import
# do_group_rollout_and_filter_constant_reward``). The test checks each import is there.
ALIASES: dict[str, str] = {
    f"{_RL}.train.{name}": f"{_RL}.{module}.{name}"
    for module, name in (
        ("rollouts", "do_group_rollout_and_filter_constant_reward"),
        ("metrics", "compute_post_kl"),
        ("metrics", "incorporate_kl_penalty"),
    )
}

# The classes whose methods are entries: an instance is made by the constructor or named by an
# annotation (``completer: TinkerMessageCompleter``).
CLASSES: frozenset[str] = frozenset(
    entry.module + "." + entry.name.partition(".")[0] for entry in _ENTRIES if "." in entry.name
)


def in_cookbook(qualified: str) -> bool:
    return qualified == PACKAGE or qualified.startswith(PACKAGE + ".")


def function(qualified: str) -> CookbookCallable | None:
    """The entry of a module-level function, by the name it is defined or re-exported under."""
    return CALLABLES.get(ALIASES.get(qualified, qualified))


def method(qualified_class: str, name: str) -> CookbookCallable | None:
    """The entry of ``name`` on an instance of a class of the table (its own: none of the
    classes inherits an entry)."""
    return CALLABLES.get(f"{qualified_class}.{name}") if qualified_class in CLASSES else None


def is_class(qualified: str) -> bool:
    return qualified in CLASSES


def callables_in(module: str) -> dict[str, CookbookCallable]:
    """What a file importing ``module`` may call of the table, by the last name of the call: its
    functions (and the re-exports it holds), and the methods of the classes it defines."""
    found: dict[str, CookbookCallable] = {}
    for qualified in (*CALLABLES, *ALIASES):
        entry = function(qualified)
        owner, _, last = qualified.rpartition(".")
        if entry is not None and (owner == module or entry.module == module):
            found[last] = entry
    return found


# The modules a file imports the table's names from, and every name a call of an entry may be
# made by or its file must hold (a function's or re-export's last name, a method, a class): what
# the pre-filters look for before the model is made (``project/index.py``).
MODULES: frozenset[str] = frozenset(
    {entry.module for entry in _ENTRIES} | {alias.rpartition(".")[0] for alias in ALIASES}
)
NAMES: frozenset[str] = frozenset(
    {name for module in MODULES for name in callables_in(module)}
    | {qualified.rpartition(".")[2] for qualified in CLASSES}
)


def imports_any(modules: Iterable[str]) -> bool:
    """Whether a module of ``modules`` holds an entry, or is a package above one."""
    return any(m in MODULES or any(k.startswith(f"{m}.") for k in MODULES) for m in modules)
