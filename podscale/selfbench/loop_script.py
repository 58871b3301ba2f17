"""A plain training-style loop that times itself, for the attach overhead stage (and the
accelerator check's profile): run as ``python loop_script.py STEPS WARMUP [WIDTH [ARRAYS]]`` and as
``podscale attach ... loop_script.py STEPS WARMUP [WIDTH [ARRAYS]]`` alike (no podscale import, on
purpose). One process (no distributed job: the overhead measured is attach's per call);
on a CPU its devices come from ``JAX_NUM_CPU_DEVICES``. Each step is a jitted matmul
whose loss is summed over every device (a psum), dispatched and waited for as a loop that
logs its loss would; its state is ARRAYS arrays (default 1: the weights; more: small ones
beside them, a model's state of many parameters, passed in and returned each step);
prints one JSON line: the per-step seconds after the warm-up."""

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
arrays = int(sys.argv[4]) if len(sys.argv) > 4 else 1
mesh = jax.make_mesh((jax.device_count(),), ("d",))
x = jax.device_put(np.ones((width * jax.device_count(), width), np.float32),
                   NamedSharding(mesh, P("d")))


@jax.jit
def step(state: dict, x: jax.Array) -> tuple[dict, jax.Array]:
    loss = jnp.sum(jnp.tanh(x @ state["w"]))
    return {k: v * 0.999 for k, v in state.items()}, loss


w = {"w": jnp.ones((width, width), jnp.float32) / width,
     **{f"b{i:04d}": jnp.ones((8,), jnp.float32) for i in range(arrays - 1)}}
times = []
for k in range(warmup + steps):
    t0 = time.perf_counter()
    w, loss = step(w, x)
    loss.block_until_ready()
    if k >= warmup:
        times.append(time.perf_counter() - t0)
print(json.dumps({"step_s": times}), flush=True)
