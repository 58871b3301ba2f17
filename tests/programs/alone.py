"""A toy program that never joins (podscale's tests run it and never edit it), as flax's
single-process examples do: it jits and steps without ``jax.distributed.initialize()``."""

import jax
import jax.numpy as jnp

step = jax.jit(lambda x: x + 1)
x = jnp.zeros(3)
for _ in range(20):
    x = step(x)
print("done", float(x[0]))
