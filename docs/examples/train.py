"""A supervised fine-tuning step loop, as first written (the README's quick start)."""

import tinker

service = tinker.ServiceClient()
training = service.create_lora_training_client(base_model="Qwen/Qwen3-8B").result()
adam = tinker.AdamParams(learning_rate=1e-4)


def train(batches):
    for batch in batches:
        out = training.forward_backward(batch, loss_fn="cross_entropy").result()
        training.optim_step(adam).result()
        print(out.metrics)
