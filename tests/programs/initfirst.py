"""A program whose first computation outweighs its step: a heavy initialisation run once
(a 512 x 512 random matrix), then STEPS calls of a light step (a 64 x 64 product).

  python initfirst.py STEPS
"""

import sys

import jax
import jax.numpy as jnp

jax.distributed.initialize()


@jax.jit
def init(key):
    return jax.random.normal(key, (512, 512))


@jax.jit
def step(x):
    return jnp.tanh(x @ x.T / 100)


x = init(jax.random.key(0))[:64, :64]
for _ in range(int(sys.argv[1])):
    x = step(x)
print(f"process {jax.process_index()}: {float(x.sum()):.4f}", flush=True)
