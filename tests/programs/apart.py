"""A toy multi-controller program whose computations podscale must keep apart (its tests
run it and never edit it). Every process joins with ``jax.distributed.initialize()``; the
step is ``jax.jit(lambda ...)``, re-wrapped at every step (``jax.jit(train)(w, x)``, one
computation all the same), with an eval lambda after each step and a prefetching thread
calling a third jitted lambda meanwhile.

  --steps N        steps (default 20)
  --local          each process's step runs on its own devices only (no collective across
                   processes: nobody waits on anybody)
  --slow P:SEC     process P sleeps SEC before each step
  --shapes P:STEP  from step STEP, process P's batch has half the rows (a program of its
                   own: with --local, the job runs on, desynchronised)
"""

import argparse
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--local", action="store_true")
parser.add_argument("--slow", type=lambda t: [float(x) for x in t.split(":")])
parser.add_argument("--shapes", type=lambda t: [int(x) for x in t.split(":")])
args = parser.parse_args()

jax.distributed.initialize()
me = jax.process_index()
mesh = jax.make_mesh((jax.device_count(),), ("d",))


def train(w, x):
    return w - 0.01 * jnp.mean(x @ w) * w


evaluate = jax.jit(lambda w: jnp.sum(w * w))
prefetch = jax.jit(lambda b: b * 2.0)


def batch(step):
    rows = 64 if args.shapes and me == args.shapes[0] and step >= args.shapes[1] else 128
    local = np.random.default_rng(step + 10 * me).standard_normal(
        (rows * jax.local_device_count(), 32), dtype=np.float32)
    if args.local:
        return jnp.asarray(local)
    return multihost_utils.host_local_array_to_global_array(local, mesh, P("d"))


def prefetching(stop):
    b = jnp.ones((256, 32))
    while not stop.is_set():
        b = prefetch(b) / 2.0
        time.sleep(0.005)


stop = threading.Event()
thread = threading.Thread(target=prefetching, args=(stop,))
thread.start()
w = jnp.ones((32, 32)) * 0.1
if not args.local:
    w = multihost_utils.host_local_array_to_global_array(np.asarray(w), mesh, P())
for step in range(args.steps):
    if args.slow and me == int(args.slow[0]):
        time.sleep(args.slow[1])
    w = jax.jit(train)(w, batch(step))
    score = evaluate(w)
stop.set()
thread.join()
print(f"process {me}: score {float(score):.4f}")
