"""A toy program whose process 1 is slow for SECONDS before the all-reduce of step 5
(podscale's tests run it and never edit it): while tracing the step's new computation
(``trace``: a long first compile, not a hang) or in Python before calling it
(``python``: the others wait for it in the collective). Every process then finishes.

    slowtrace.py trace|python SECONDS
"""

import sys
import time

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

where, seconds = sys.argv[1], float(sys.argv[2])
jax.distributed.initialize()
mesh = jax.make_mesh((jax.device_count(),), ("d",))
slow = jax.process_index() == 1


@jax.jit
def local_step(x):
    return x * 0.5 + jnp.sum(x)  # a sum over every process's devices: an all-reduce


@jax.jit
def late_step(x):
    if slow and where == "trace":
        time.sleep(seconds)  # while JAX traces it: process 1 compiles long
    return x * 0.25 + jnp.sum(x)


x = jax.device_put(jnp.ones(jax.device_count()), NamedSharding(mesh, P("d")))
for step in range(10):
    if step == 5 and slow and where == "python":
        time.sleep(seconds)
    x = (late_step if step >= 5 else local_step)(x)
    x.block_until_ready()
print("done", flush=True)
