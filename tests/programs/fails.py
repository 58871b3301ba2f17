"""A multi-controller loop one of whose processes fails part way: the others are then
inside the next step's all-reduce, waiting for it. Podscale's tests run it unedited.

  --steps N         steps (default 20)
  --raise P:STEP    process P raises ValueError before step STEP
  --exit P:STEP:C   process P calls sys.exit(C) before step STEP
"""

import argparse
import sys

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--raise", dest="fail", default=None)
parser.add_argument("--exit", default=None)
args = parser.parse_args()

jax.distributed.initialize()
me = jax.process_index()
mesh = jax.make_mesh((jax.device_count(),), ("d",))


@jax.jit
def step(x):
    return x + jnp.sum(x)  # every device's values in each one's: an all-reduce


x = jax.device_put(jnp.ones((jax.device_count(), 4)), NamedSharding(mesh, P("d")))
for i in range(args.steps):
    if args.fail and [int(v) for v in args.fail.split(":")] == [me, i]:
        raise ValueError(f"process {me} cannot go on at step {i}")
    if args.exit:
        p, at, code = (int(v) for v in args.exit.split(":"))
        if (p, at) == (me, i):
            sys.exit(code)
    x = step(x) / jax.device_count()
print(f"process {me}: done", float(jnp.sum(x)))
