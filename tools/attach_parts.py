"""Where ``podscale attach``'s cost a step goes, in one process on this machine's default
devices (a TPU VM's chips; the CPU with ``JAX_PLATFORMS=cpu``): the same jitted step as
``podscale/selfbench/loop_script.py`` (128×128, its loss waited for every step; a state of
ARRAYS arrays) called plainly, through attach's recorder with its watcher thread stopped
(the main thread's part: the wrapper), and through the whole recorder (the wrapper and the
watcher thread waiting on each call's outputs). Variants alternate within each round; each
round's median step per variant, and the medians of the differences, are printed.

    python tools/attach_parts.py [ROUNDS] [STEPS] [ARRAYS ...]   # defaults: 5 400 1 500
"""

import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from podscale.attach.calls import CallLog

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 400
sizes = [int(a) for a in sys.argv[3:]] or [1, 500]
mesh = jax.make_mesh((jax.device_count(),), ("d",))
x = jax.device_put(np.ones((128 * jax.device_count(), 128), np.float32),
                   NamedSharding(mesh, P("d")))


@jax.jit
def step(state: dict, x: jax.Array) -> tuple[dict, jax.Array]:
    loss = jnp.sum(jnp.tanh(x @ state["w"]))
    return {k: v * 0.999 for k, v in state.items()}, loss


class _Unwatched:
    """A queue nobody reads: the recorder without its watcher thread."""

    def put(self, item: object) -> None:
        pass


def recorder(watched: bool):
    log = CallLog(lambda: time.time_ns() // 1000, lambda obj: None)
    if not watched:
        log._queue.put(None)  # the watcher thread ends; later calls go nowhere
        log._watcher.join()
        log._queue = _Unwatched()
    comp = log.computation("step", "jit")
    return lambda *args: log.call(comp, step, args, {})


def median_step(fn, arrays: int) -> float:
    state = {"w": jnp.ones((128, 128), jnp.float32) / 128,
             **{f"b{i:04d}": jnp.ones((8,), jnp.float32) for i in range(arrays - 1)}}
    times = []
    for k in range(50 + steps):
        t0 = time.perf_counter()
        state, loss = fn(state, x)
        loss.block_until_ready()
        if k >= 50:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


print(f"# {jax.devices()[0].device_kind} x{jax.device_count()}, jax {jax.__version__}, "
      f"{rounds} rounds of {steps} steps")
for arrays in sizes:
    variants = {"plain": step, "wrapper only": recorder(False), "recorded": recorder(True)}
    got: dict[str, list[float]] = {name: [] for name in variants}
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(variants)[::-1]
        for name in order:
            got[name].append(median_step(variants[name], arrays))
    base = got["plain"]
    line = [f"{arrays} arrays: plain {statistics.median(base) * 1e6:.0f} µs"]
    for name in ("wrapper only", "recorded"):
        diff = [(a - b) * 1e6 for a, b in zip(got[name], base)]
        line.append(f"{name} +{statistics.median(diff):.0f} µs (rounds {min(diff):.0f} to "
                    f"{max(diff):.0f})")
    print("; ".join(line), flush=True)
