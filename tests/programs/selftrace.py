"""A toy program that runs its own profiler (podscale's tests run it and never edit it),
as MaxText's ``profiler=xplane`` does: every process joins, then steps a jitted
all-reducing step STEPS times, tracing itself with ``jax.profiler.start_trace`` before
step FROM and ``stop_trace`` after step TO - 1, into DIR/process-<i>.

    selftrace.py DIR FROM TO STEPS
"""

import sys

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

out, first, stop, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
jax.distributed.initialize()
mesh = jax.make_mesh((jax.device_count(),), ("d",))


@jax.jit
def step(x):
    return x * 0.5 + jnp.sum(x)


x = jax.device_put(jnp.ones(jax.device_count()), NamedSharding(mesh, P("d")))
for k in range(steps):
    if k == first:
        jax.profiler.start_trace(f"{out}/process-{jax.process_index()}")
    x = step(x)
    if k == stop - 1:
        x.block_until_ready()
        jax.profiler.stop_trace()
print("done", float(x[0]) if jax.process_count() == 1 else "")
