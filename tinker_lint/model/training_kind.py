"""What kind of training a module does: supervised, RL or DPO, for the findings that point at the
tinker-cookbook trainer that already runs such a loop well (TNK101, TNK102).

Read once per module from its Tinker calls:

- RL: a loss that only RL uses (``loss_fn="importance_sampling"``, ``"ppo"``...), or a function (or
  the module's top level) that both samples (``sample``: rollouts; ``compute_logprobs`` alone is a
  DPO reference or a distillation teacher) and trains, its sampling not under a cadence guard (an
  evaluation every N steps is no rollout);
- DPO: ``forward_backward_custom`` with a loss named for DPO (``dpo_loss_fn``), or a ``loss_fn``
  naming it;
- otherwise supervised.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import libcst as cst

from tinker_lint.model.sdk import Role

if TYPE_CHECKING:
    from tinker_lint.model.semantic import SemanticModel

# The SDK's losses for policy-gradient training (tinker's ``LossFnType``, and the cookbook's).
RL_LOSSES = frozenset({"importance_sampling", "ppo", "cispo", "dro", "stable_reinforce"})


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


def training_kind(model: SemanticModel) -> TrainingKind:
    """The module's kind of training (see the module docstring)."""
    roles: dict[int | None, set[Role]] = {}  # by function (None: the top level)
    dpo = False
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
        if loss is None:
            continue
        if loss in RL_LOSSES:
            return TrainingKind.RL
        dpo = dpo or "dpo" in loss.lower()
    if any({Role.SAMPLE, Role.TRAIN} <= found for found in roles.values()):
        return TrainingKind.RL
    return TrainingKind.DPO if dpo else TrainingKind.SUPERVISED


def _loss_of(call: cst.Call, method: str) -> str | None:
    """The loss a training call names: ``loss_fn="ppo"``'s string, or the name of the function
    ``forward_backward_custom`` is given (its second argument, or ``loss_fn=``)."""
    for index, arg in enumerate(call.args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "loss_fn" or (
            keyword is None and index == 1 and method.startswith("forward_backward_custom")
        ):
            value = arg.value
            if isinstance(value, cst.SimpleString):
                text = value.evaluated_value
                return text if isinstance(text, str) else None
            if isinstance(value, cst.Name):
                return value.value
            if isinstance(value, cst.Attribute):
                return value.attr.value
    return None
