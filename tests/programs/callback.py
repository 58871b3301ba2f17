"""A toy multi-controller step with a host callback (podscale's tests run it and never edit
it): inside ``shard_map`` each device's shard goes through a host callback, then an
all-reduce over every device of every process sums it.

    callback.py STEPS SLOW_PROCESS SECONDS

The callback sleeps SECONDS on process SLOW_PROCESS only, so that process's step spends
them in the callback before the all-reduce, and the others wait for it in the all-reduce.
"""

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

steps, slow, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
jax.distributed.initialize()
me = jax.process_index()
mesh = jax.make_mesh((jax.device_count(),), ("d",))


def host_work(x):
    if me == slow:
        time.sleep(seconds)
    return np.asarray(x) * 2


def shard(x):
    y = jax.pure_callback(host_work, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return jax.lax.psum(jnp.sum(y * y), "d")


@jax.jit
def step(x):
    return jax.shard_map(shard, mesh=mesh, in_specs=P("d"), out_specs=P())(x)


local = np.ones((64 * jax.local_device_count(),), np.float32)
x = jax.make_array_from_process_local_data(NamedSharding(mesh, P("d")), local)
for _ in range(steps):
    total = step(x)
    total.block_until_ready()
print(f"process {me}: {float(total):.1f}", flush=True)
