"""A toy multi-controller training loop that podscale's tests profile and never edit.

Every process joins the job with ``jax.distributed.initialize()`` (no arguments), then runs
STEPS steps of a jitted step whose loss is a sum over every device of every process (an
all-reduce), an eval step every 10 steps, and prints the final loss. Planted effects come
from its own arguments:

  --steps N            steps (default 60)
  --slow P:FROM:SEC[:TO]  process P sleeps SEC before each step from step FROM on (to
                       step TO, exclusive)
  --loader P:SEC       process P's load_batch sleeps SEC per step
  --save STEP:SEC      every process's save_checkpoint sleeps SEC after step STEP
  --reshape STEP       the batch changes shape from step STEP on (a re-compile)
  --desync P:STEP      process P launches eval_step once more, before step STEP (its
                       launch sequence parts from the others')
  --work K             K more 256x256 matrix products in each step (a step that takes
                       milliseconds, not microseconds)
  --stop P:STEP:SEC     process P stops itself (SIGSTOP) before step STEP, for SEC
                       seconds (a child sends SIGCONT)
  --save-every N:SEC   every process's save_checkpoint sleeps SEC after every N-th step
                       (steps N, 2N, ...)
  --async-save STEP:SEC  after step STEP, a thread named "checkpoint" serialises (pickles)
                       the state for SEC seconds beside the steps, holding the interpreter
                       through each call (an asynchronous save in Python)
  --aot                compile local_step ahead of time first, for its memory statistics
                       (as MaxText does), then call the jitted function as usual
  --annotate           mark each step with jax.profiler.StepTraceAnnotation("train"), and
                       apply the update in a second jitted function inside it
  --late-eval STEP     before step STEP, a computation never called before, which compiles
                       for a while (a long unrolled program), as an eval's first call does
  --width N            the weight is 32 x N (default 8): with N = 1024, a weight larger
                       than the batch
"""

import argparse
import os
import signal
import subprocess
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def triple(text):
    return [float(x) for x in text.split(":")]


parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--slow", type=triple, default=None)
parser.add_argument("--loader", type=triple, default=None)
parser.add_argument("--save", type=triple, default=None)
parser.add_argument("--reshape", type=int, default=None)
parser.add_argument("--desync", type=triple, default=None)
parser.add_argument("--work", type=int, default=0)
parser.add_argument("--stop", type=triple, default=None)
parser.add_argument("--save-every", type=triple, default=None)
parser.add_argument("--aot", action="store_true")
parser.add_argument("--annotate", action="store_true")
parser.add_argument("--width", type=int, default=8)
parser.add_argument("--late-eval", type=int, default=None)
parser.add_argument("--async-save", type=triple, default=None)
args = parser.parse_args()

jax.distributed.initialize()
me = jax.process_index()
mesh = jax.make_mesh((jax.device_count(),), ("d",))
batch_sharding = NamedSharding(mesh, P("d"))
ROWS = 256


@jax.jit
def local_step(w, x):
    loss = jnp.mean((x @ w) ** 2)  # a mean over every device's rows: an all-reduce
    if args.work:
        a = jnp.tanh(jnp.tile(w, (8, 32)))  # 256 x 256, on every device
        for _ in range(args.work):
            a = jnp.tanh(a @ a / 256)
        loss = loss + 1e-9 * jnp.mean(a)
    return w - 0.01 * loss * w, loss


@jax.jit
def apply_update(w):
    return w * 0.999


@jax.jit
def eval_step(w):
    return jnp.sum(w * w)


@jax.jit
def late_eval(w):
    a = w
    for _ in range(100):
        a = jnp.tanh(a @ w.T @ w * 1e-3 + jnp.sin(a))
    return jnp.sum(a)


def load_batch(step):
    if args.loader and me == int(args.loader[0]):
        time.sleep(args.loader[1])
    rows = ROWS // 2 if args.reshape is not None and step >= args.reshape else ROWS
    local = np.random.default_rng(step * 100 + me).standard_normal(
        (rows * jax.local_device_count(), 32), dtype=np.float32)
    return jax.make_array_from_process_local_data(batch_sharding, local)


def save_checkpoint(w, seconds):
    np.asarray(w)
    time.sleep(seconds)


def save_async(w, seconds):
    import pickle

    state = list(range(1_000_000)) + np.asarray(w).ravel().tolist()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pickle.dumps(state)


w = jnp.ones((32, args.width), jnp.float32)
if args.aot:
    spec = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (w, load_batch(0))]
    stats = local_step.lower(*spec).compile().memory_analysis()
for step in range(args.steps):
    if args.slow and me == int(args.slow[0]) and args.slow[1] <= step < (
            args.slow[3] if len(args.slow) > 3 else args.steps):
        time.sleep(args.slow[2])
    if args.stop and me == int(args.stop[0]) and step == int(args.stop[1]):
        subprocess.Popen(["sh", "-c", f"sleep {args.stop[2]}; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)
    if step == args.late_eval:
        late_eval(w)
    x = load_batch(step)
    if args.desync and me == int(args.desync[0]) and step == int(args.desync[1]):
        eval_step(w)
    if args.annotate:
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            w, loss = local_step(w, x)
            w = apply_update(w)
    else:
        w, loss = local_step(w, x)
    if step % 10 == 0:
        eval_step(w)
    if args.save and step == int(args.save[0]):
        save_checkpoint(w, args.save[1])
    if args.save_every and step and step % int(args.save_every[0]) == 0:
        save_checkpoint(w, args.save_every[1])
    if args.async_save and step == int(args.async_save[0]):
        import threading

        threading.Thread(target=save_async, args=(w, args.async_save[1]),
                         name="checkpoint").start()
print(f"process {me}: final loss {float(loss):.6f} after {args.steps} steps", flush=True)
