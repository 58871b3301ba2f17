"""A toy pmap program (podscale's tests run it and never edit it): its step is a pmap,
whose XLA module is not named after it (``jit__fun`` in JAX 0.10), and each step also
calls a small ahead-of-time compiled function three times, so that the busiest module by
count is not the step's.

    pmapped.py STEPS
"""

import functools
import sys

import jax
import jax.numpy as jnp

jax.distributed.initialize()


@functools.partial(jax.pmap, axis_name="i")
def step(x):
    return jnp.tanh(x @ x.T) @ x + jax.lax.psum(x, "i")


def bump(v):
    return v + 1


small = jax.jit(bump).lower(jnp.zeros(4)).compile()
x = jnp.ones((jax.local_device_count(), 256, 256)) * 0.01
v = jnp.zeros(4)
for _ in range(int(sys.argv[1])):
    x = step(x)
    for _ in range(3):
        v = small(v)
x.block_until_ready()
print("done", float(v[0]))
