"""Names the semantic model and the tree pre-filter (``sketch.py``) both go by. No libcst here: the
pre-filter runs before libcst is imported, and must agree with the model on these."""

from __future__ import annotations

import re

# Functions that block on futures (a Tinker future's ``.future()`` is a concurrent one).
BLOCKING_WAIT_FUNCTIONS = frozenset({"concurrent.futures.wait", "concurrent.futures.as_completed"})
# Container methods whose value is one of the container's elements (``pending.pop()``).
CONTAINER_GETS = frozenset({"pop", "popleft", "get_nowait"})
# Container methods whose value holds the container's elements (``futures.values()``).
CONTAINER_VIEWS = frozenset({"values", "copy", "items"})


def names_hot_call(name: str, pattern: re.Pattern[str]) -> bool:
    """``hot-loop-calls`` match the called name as written (``trainer.step``) or its last part
    (``step``)."""
    return bool(pattern.match(name) or pattern.match(name.rsplit(".", 1)[-1]))


# What makes a ``tinker.ModelInput`` besides its constructor: its class methods
# (``ModelInput.from_ints(tokens)``, ``.empty()``), its methods that return a new one (each copies
# the chunk list and adds one chunk), and the cookbook renderers' prompt builder.
MODEL_INPUT_FACTORIES = frozenset({"from_ints", "empty"})
MODEL_INPUT_COPIES = frozenset({"append", "append_int"})
MODEL_INPUT_BUILDERS = frozenset({"build_generation_prompt"})

TOKENIZER_FACTORIES = frozenset(
    {
        "transformers.AutoTokenizer.from_pretrained",
        "transformers.PreTrainedTokenizerFast.from_pretrained",
        "tinker_cookbook.tokenizer_utils.get_tokenizer",
    }
)

# Functions that make a tensor or an array on the CPU from their first argument, unless given a
# ``device=``: where a value read on the host came from (TNK401), what a batch is wrapped in before
# it is copied to the device (TNK403). One table: the two rules' copies had disagreed.
CPU_TENSOR_MAKERS = frozenset(
    {"torch.from_numpy", "torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray"}
)

# Methods that copy a tensor to the host (``loss.item()``), so the CPU waits for the GPU to finish
# everything queued: TNK401's reads on every step, TNK404's per element.
HOST_READS = frozenset({"item", "tolist", "cpu", "numpy"})

# Modules whose functions make or compute arrays (``np.array``, ``torch.tensor``, ``F.softmax``).
_ARRAY_MODULES = frozenset(
    {"numpy", "numpy.linalg", "torch", "torch.nn.functional", "torch.linalg", "torch.special"}
)
# Functions of those modules whose result is not an array.
_NOT_ARRAY_FUNCTIONS = frozenset(
    {
        "no_grad",
        "inference_mode",
        "enable_grad",
        "set_grad_enabled",
        "device",
        "dtype",
        "finfo",
        "iinfo",
        "errstate",
        "manual_seed",
        "seed",
        "load",
        "save",
        "compile",
        "is_tensor",
        "isscalar",
        "set_printoptions",
        "get_default_dtype",
        "set_default_dtype",
    }
)
# Array methods whose result is a Python value, not an array.
ARRAY_SCALAR_METHODS = frozenset(
    {"item", "tolist", "size", "dim", "numel", "nelement", "element_size", "is_contiguous"}
)


def array_function(qualified: str | None) -> str | None:
    """The qualified name of a numpy or torch function that makes or computes an array
    (``np.array``, ``torch.tensor``, ``torch.logsumexp``, ``F.softmax``), else None. Other
    submodules (``torch.nn`` layers, ``torch.cuda``) and helpers (``torch.no_grad``) are not."""
    if qualified is None:
        return None
    module, _, name = qualified.rpartition(".")
    if (
        module not in _ARRAY_MODULES
        or not name
        or not name[0].islower()
        or name in _NOT_ARRAY_FUNCTIONS
    ):
        return None
    return qualified


# What ends a PyTorch training step on the host (``torch_steps.py``; the sketch's ``torch_step``
# reads the same): ``x.backward(...)`` on any receiver, and ``x.step(...)`` by the last part of its
# receiver's dotted name: an optimizer's or a DeepSpeed engine's without arguments
# (``optimizer.step()``, ``engine.step()``), a grad scaler's with them (``scaler.step(opt)``);
# ``scheduler.step()`` and ``env.step(action)`` do not.
TORCH_BACKWARD_METHOD = "backward"
TORCH_STEP_METHOD = "step"
_TORCH_OPTIMIZER = re.compile(
    r"(^|_)(optim|optimizer|opt|engine|model_engine)s?($|_)|optimi[sz]er", re.I
)
_TORCH_SCALER = re.compile(r"scaler", re.I)
# What each receiver name those two take holds, in some case: the text pre-filter's words for it.
TORCH_STEP_RECEIVER_PARTS = frozenset({"opt", "engine", "scaler"})
# Per-step hooks of frameworks: their bodies run once per step (``training_step`` of a Lightning
# module, ``compute_loss`` of a ``Trainer`` subclass, an agent's ``update``/``learn``). Methods
# only; those of ``TORCH_STEP_HOOKS_ALONE`` are a step even without a step call in them.
TORCH_STEP_HOOKS = frozenset(
    {"training_step", "train_step", "run_step", "compute_loss", "update", "learn"}
)
TORCH_STEP_HOOKS_ALONE = frozenset({"training_step", "compute_loss"})


def torch_step_receiver(last: str, arguments: bool) -> bool:
    """Whether ``<receiver>.step(...)`` ends a torch step: ``last``, the last part of the
    receiver's dotted name (empty when the receiver is no chain of names); ``arguments``, whether
    the call has any."""
    if _TORCH_SCALER.search(last):
        return arguments
    return not arguments and bool(_TORCH_OPTIMIZER.search(last))
