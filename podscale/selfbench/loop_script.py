"""A plain training-style loop that times itself, for the attach overhead stage (and the
accelerator check's profile): run as ``python loop_script.py STEPS WARMUP [WIDTH]`` and as
``podscale attach ... loop_script.py STEPS WARMUP [WIDTH]`` alike (no podscale import, on
purpose). One process (no distributed job: the overhead measured is attach's per call);
on a CPU its devices come from ``JAX_NUM_CPU_DEVICES``. Each step is a jitted matmul
whose loss is summed over every device (a psum), dispatched and waited for as a loop that
logs its loss would; prints one JSON line: the per-step seconds after the warm-up."""

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

steps, warmup = int(sys.argv[1]), int(sys.argv[2])
width = int(sys.argv[3]) if len(sys.argv) > 3 else 128
mesh = jax.make_mesh((jax.device_count(),), ("d",))
x = jax.device_put(np.ones((width * jax.device_count(), width), np.float32),
                   NamedSharding(mesh, P("d")))


@jax.jit
def step(w: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    loss = jnp.sum(jnp.tanh(x @ w))
    return w * 0.999, loss


w = jnp.ones((width, width), jnp.float32) / width
times = []
for k in range(warmup + steps):
    t0 = time.perf_counter()
    w, loss = step(w, x)
    loss.block_until_ready()
    if k >= warmup:
        times.append(time.perf_counter() - t0)
print(json.dumps({"step_s": times}), flush=True)
