"""A one-process flax NNX training loop, as flax's own examples write one (an MLP on
synthetic data, nnx.jit'd step, optax adam), for ``podscale attach`` on an accelerator:
``python -m podscale attach --run-dir RUN examples/nnx_train.py [STEPS] [BATCH] [WIDTH]``.
It never calls ``jax.distributed.initialize()`` (one process)."""

import sys

import jax
import jax.numpy as jnp
import optax
from flax import nnx

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 256
width = int(sys.argv[3]) if len(sys.argv) > 3 else 1024


class MLP(nnx.Module):
    def __init__(self, din: int, width: int, dout: int, rngs: nnx.Rngs) -> None:
        self.l1 = nnx.Linear(din, width, rngs=rngs, param_dtype=jnp.bfloat16,
                             dtype=jnp.bfloat16)
        self.l2 = nnx.Linear(width, width, rngs=rngs, param_dtype=jnp.bfloat16,
                             dtype=jnp.bfloat16)
        self.l3 = nnx.Linear(width, dout, rngs=rngs, param_dtype=jnp.bfloat16,
                             dtype=jnp.bfloat16)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.l3(nnx.relu(self.l2(nnx.relu(self.l1(x)))))


model = MLP(width, width, 10, nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    def loss_fn(model: MLP) -> jax.Array:
        logits = model(x).astype(jnp.float32)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


key = jax.random.key(0)
x = jax.random.normal(key, (batch, width), jnp.bfloat16)
y = jax.random.randint(key, (batch,), 0, 10)
for _ in range(steps):
    loss = train_step(model, optimizer, x, y)
print(f"final loss {float(loss):.4f} after {steps} steps")
