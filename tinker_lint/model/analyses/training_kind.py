"""What kind of training a function does: supervised, RL or DPO, for the findings that point at
the tinker-cookbook trainer that already runs such a loop well (TNK101, TNK102).

Read once per module from its Tinker calls, for each function that trains:

- RL: a loss that only RL uses (``loss_fn="importance_sampling"``, ``"ppo"``...), or a function (or
  the module's top level) that names no loss but both samples (``sample``: rollouts; ``compute_logprobs`` alone is a
  DPO reference or a distillation teacher) and trains, its sampling not under a cadence guard (an
  evaluation every N steps is no rollout);
- DPO: ``forward_backward_custom`` with a loss named for DPO (``dpo_loss_fn``), or a ``loss_fn``
  naming it;
- otherwise supervised (``loss_fn="cross_entropy"`` says so even in a function that samples: an
  evaluation, or off-policy distillation).

A function that trains only through helpers takes the module's kind (RL if one of its functions
is).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.facts.sdk import Role

if TYPE_CHECKING:
    from tinker_lint.model.analyses.view import ModelView

# The SDK's losses for policy-gradient training: tinker 0.38.0's ``LossFnType`` (types/loss_fn_type.py)
# is these, "cross_entropy" and "custom".
RL_LOSSES = frozenset({"importance_sampling", "ppo", "cispo", "dro", "gspo", "stable_reinforce"})
SUPERVISED_LOSSES = frozenset({"cross_entropy"})


class TrainingKind(str, Enum):
    SUPERVISED = "supervised"
    RL = "rl"
    DPO = "dpo"


# The cookbook (0.6.1) trainer that pipelines each kind's requests. None for DPO:
# ``tinker_cookbook.preference.train_dpo`` waits for ``forward_backward_custom`` before submitting
# ``optim_step``, so it is no example of submitting ahead.
COOKBOOK_TRAINER: dict[TrainingKind, str | None] = {
    TrainingKind.SUPERVISED: "tinker_cookbook.supervised.train",
    TrainingKind.RL: "tinker_cookbook.rl.train",
    TrainingKind.DPO: None,
}


class TrainingKinds:
    """The kind of training of each function of a module (and of its top level), read once from
    the module's Tinker calls: a function's own calls decide when it trains; one that does not (a
    loop calling helpers only) takes the module's kind."""

    def __init__(self, model: ModelView) -> None:
        self.model = model
        roles: dict[int | None, set[Role]] = {}  # by function (None: the top level)
        losses: dict[int | None, set[TrainingKind]] = {}  # what its losses say
        for site in model.calls:
            call = model.sdk_call(site.node, site.scope)
            if call is None:
                continue
            role = call.method.role
            if role is Role.SAMPLE and (site.guarded or not call.method.name.startswith("sample")):
                continue
            owner = id(site.function.node) if site.function is not None else None
            roles.setdefault(owner, set()).add(role)
            loss = _loss_of(site.node, call.method.name)
            if loss in RL_LOSSES:
                losses.setdefault(owner, set()).add(TrainingKind.RL)
            elif loss is not None and "dpo" in loss.lower():
                losses.setdefault(owner, set()).add(TrainingKind.DPO)
            elif loss in SUPERVISED_LOSSES:
                losses.setdefault(owner, set()).add(TrainingKind.SUPERVISED)
        self._kinds = {
            owner: _kind(found, losses.get(owner, set()))
            for owner, found in roles.items()
            if Role.TRAIN in found
        }
        kinds = set(self._kinds.values())
        # The module's: RL if any of its functions is, then DPO, else supervised.
        self.module = next(
            (k for k in (TrainingKind.RL, TrainingKind.DPO) if k in kinds), TrainingKind.SUPERVISED
        )

    def of(self, node: cst.CSTNode) -> TrainingKind:
        """The kind of training of the function ``node`` is in (the innermost that trains)."""
        model = self.model
        current: cst.CSTNode | None = node
        while current is not None:
            if isinstance(current, cst.FunctionDef) and id(current) in self._kinds:
                return self._kinds[id(current)]
            current = model.parent(current)
        return self._kinds.get(None, self.module)

    def trainer(self, node: cst.CSTNode) -> str | None:
        """The cookbook trainer that pipelines the training ``node`` is part of (None: none does)."""
        return COOKBOOK_TRAINER[self.of(node)]


def _kind(roles: set[Role], losses: set[TrainingKind]) -> TrainingKind:
    """The losses named decide (RL's first); with none named, sampling and training is RL."""
    for kind in (TrainingKind.RL, TrainingKind.DPO, TrainingKind.SUPERVISED):
        if kind in losses:
            return kind
    return TrainingKind.RL if Role.SAMPLE in roles else TrainingKind.SUPERVISED


def _loss_of(call: cst.Call, method: str) -> str | None:
    """The loss a training call names: ``loss_fn="ppo"``'s string (or its second positional
    argument, as ``forward_backward(data, "ppo")`` and ``forward_backward_custom(data, dpo_loss)``
    pass it), or the name of the function given as the loss."""
    if not method.startswith("forward"):
        return None
    for index, arg in enumerate(call.args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "loss_fn" or (keyword is None and index == 1 and not arg.star):
            value = arg.value
            if isinstance(value, cst.SimpleString):
                text = value.evaluated_value
                return text if isinstance(text, str) else None
            if isinstance(value, cst.Name):
                return value.value
            if isinstance(value, cst.Attribute):
                return value.attr.value
    return None
