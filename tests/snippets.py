"""Small programs the command-line tests lint, each with the findings it must give."""

from __future__ import annotations

# One TNK101 at 4:66: `forward_backward` waited for before the independent `optim_step`.
WAIT_BEFORE_SUBMIT = (
    "import tinker\n"
    'tc = tinker.ServiceClient().create_lora_training_client(base_model="m").result()\n'
    "for batch in batches:\n"
    '    result = tc.forward_backward(batch, loss_fn="cross_entropy").result()\n'
    "    tc.optim_step(adam)\n"
)

# A training function with one TNK101, to repeat (``.format(i=n)``) into a file of any size.
TRAIN_FUNCTION = """\
def train_{i}(training_client, batches, adam):
    for batch in batches:
        result = training_client.forward_backward(batch, loss_fn="cross_entropy").result()
        training_client.optim_step(adam)
        print(result.loss)


"""

# Files of ``fixtures/tnk1xx/helpers_project/trainer`` (as ``example.py``) that call its helpers
# (``steps.py``), each with the TNK101 findings it must give. A call's own wait comes after its
# own requests: a module's function named as the helper it calls (``def main(c): asyncio.run(
# train.main(c))``, tinker-cookbook's ``recipes/rl_basic.py``) waits where it is called, by name,
# but not before that call's submit; so does a function named as the SDK method it calls. Those
# give nothing; the same calls with a wait before another submit are reported.
OWN_WAITS = (
    (
        "import asyncio\n\nfrom . import steps\n\n\n"
        "def sample_one(sampling_client, prompt, params):\n"
        "    return asyncio.run(steps.sample_one(sampling_client, prompt, params))\n",
        [],
    ),
    (
        "from . import steps\n\n\n"
        "def forward_backward_and_wait(training_client, batch):\n"
        "    return steps.forward_backward_and_wait(training_client, batch)\n",
        [],
    ),
    (
        "import asyncio\n\nfrom . import steps\n\n\n"
        "def sample_one(sampling_client, prompt, params):\n"
        "    first = asyncio.run(steps.sample_one(sampling_client, prompt, params))\n"
        "    second = asyncio.run(steps.sample_one(sampling_client, prompt, params))\n"
        "    return first, second\n",
        [("TNK101", 7, 13)],
    ),
    (
        "from . import steps\n\n\n"
        "def forward_backward_and_wait(training_client, batch, adam):\n"
        "    result = steps.forward_backward_and_wait(training_client, batch)\n"
        "    training_client.optim_step(adam)\n"
        "    return result\n",
        [("TNK101", 5, 14)],
    ),
    # The same of a module's function named as the SDK method it calls (a wrapper).
    (
        "def sample(sampling_client, prompt, params):\n"
        "    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()\n",
        [],
    ),
    (
        "def sample(sampling_client, prompt, params):\n"
        "    return sampling_client.sample(prompt, num_samples=1, sampling_params=params).result()\n"
        "\n\n"
        "def two_samples(sampling_client, prompt, params):\n"
        "    first = sample(sampling_client, prompt, params)\n"
        "    return first, sampling_client.sample(prompt, num_samples=1, sampling_params=params)\n",
        [("TNK101", 6, 13)],
    ),
)
