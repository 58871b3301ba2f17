"""A toy program that stops (podscale's tests run it and never edit it): every process
pauses together for PAUSE seconds at step 2 (no hang: nobody waits for anybody), then
process 1 stops before step 5 and stays alive while the others wait for it in the step's
all-reduce.

    hangs.py PAUSE
"""

import sys
import time

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

pause = float(sys.argv[1])
jax.distributed.initialize()
mesh = jax.make_mesh((jax.device_count(),), ("d",))


@jax.jit
def local_step(x):
    return x * 0.5 + jnp.sum(x)  # a sum over every process's devices: an all-reduce


x = jax.device_put(jnp.ones(jax.device_count()), NamedSharding(mesh, P("d")))
for step in range(30):
    if step == 2:
        time.sleep(pause)  # every process at once: an idle pause, not a hang
    if step == 5 and jax.process_index() == 1:
        time.sleep(3600)  # process 1 stops here, alive
    x = local_step(x)
    x.block_until_ready()
print("done", flush=True)
