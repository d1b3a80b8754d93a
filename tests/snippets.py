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
