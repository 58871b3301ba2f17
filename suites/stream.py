"""``stream``: a memory-bandwidth ceiling, measured the way every case is measured.

Every local device works on its own block of ``size / local_devices`` values, with no
communication, in one of STREAM's kernels (McCalpin) or a plain read:

==========  ==================  ===============  =====
op          computes            bytes moved      flops
==========  ==================  ===============  =====
``read``    ``sum(a)``          1 x the buffer   1/elt
``copy``    ``b = 2a``          2 x              0
``scale``   ``b = 3a``          2 x              1/elt
``add``     ``c = a + b``       3 x              1/elt
``triad``   ``a = b + 3c``      3 x              2/elt
==========  ==================  ===============  =====

(``copy`` writes ``2a``: XLA returns an unchanged input as it is, with no copy.) The
default, 128M float32 values (512 MiB) per process, is 4x a TPU v5e's 128 MiB of on-chip
memory (VMEM): a buffer that fits there measures that memory, not HBM (reads of 64 MiB
ran at 2.4-3.0 TB/s of device time on a v5e, against 819 GB/s of HBM). On CPU use at
least 4x the last-level cache (on a 32 MiB L3: ``--sizes 32M``, 128 MiB per process).
Run it on the same layout as the workload it bounds, so the ceiling holds for the same
number of processes and devices competing for memory. ``work`` counts the bytes moved, so
its GB/s is the figure to divide a local workload's GB/s by (``dot`` mostly reads:
compare it with ``op=read``). On CPU ``op=copy`` also pays for a fresh
output buffer every step (page faults: measured 4.9 GB/s against 31 GB/s for ``read`` on
one process here), as any non-donating jitted step does. Each device's values are rows of
1024 (see ``_block``): laid out as one row, a TPU's tiling, not its memory, set the ceiling.
"""

from __future__ import annotations

import numpy as np

from podscale import (
    ExactCheck,
    Expected,
    Mapped,
    Param,
    Work,
    cast,
    exact,
    exact_pattern,
    integral,
    seed_for,
    spacing,
    sum_bound,
)

OPS = ("read", "copy", "scale", "add", "triad")
#: buffers each op reads or writes, and its flops per element
MOVES = {"read": 1, "copy": 2, "scale": 2, "add": 3, "triad": 3}
FLOPS = {"read": 1, "copy": 0, "scale": 1, "add": 1, "triad": 2}
TWO_INPUTS = ("add", "triad")
#: scale/add/triad's inputs lie on a grid of 2**-GRID in [0, 1): 3a, a + b and b + 3c are
#: then exact in float32 (at most 22 significant bits), so every compared element is equal
GRID = 20
#: values per device that repeat to fill its block (4 MiB of float32)
PERIOD = 1 << 20


class Stream(Mapped):
    """memory bandwidth ceiling: STREAM's copy, scale, add, triad, or a read (sum)"""

    name = "stream"
    version = "1"
    params = (Param("size", 1 << 27, "size", help="values per process (split over local "
                                                   "devices); >= 4x the device's on-chip "
                                                   "memory or the LLC, in bytes",
                    unit="elements"),
              Param("op", "read", "str", choices=OPS,
                    help="read: sum(a); copy: 2a; scale: 3a; add: a + b; triad: b + 3c"))

    def inputs(self, ctx):
        """Uniform in [0, 1) from the process's seed, a period of ``PERIOD`` values per
        device repeated to fill its block: a bandwidth figure does not depend on the
        values, every byte of the block is still read, and the reference is the period's
        sum times its repeats (1 ms, against 0.09 s for two float64 passes over 128 MiB;
        drawing 4 MiB and copying it: 0.05 s against 0.09 s for drawing it all). With no
        cancellation the sum stands well clear of zero (signs are the exact check's).
        scale, add and triad's values lie on a grid of 2**-20 (:data:`GRID`); add and
        triad's second buffer is the first's period reversed."""
        op, m = ctx.p["op"], ctx.p["size"] // ctx.local_devices
        rng = np.random.default_rng(seed_for(ctx.process))
        period = rng.random((ctx.local_devices, min(m, PERIOD)), dtype=np.float32)
        if op not in ("read", "copy"):
            period = np.floor(period * 2.0 ** GRID) / np.float32(2.0 ** GRID)
        periods = [period, period[:, ::-1]] if op in TWO_INPUTS else [period]
        return tuple(_fill(cast(p, ctx.case.dtype), m) for p in periods)

    def body(self, case, axes, *blocks):
        import jax.numpy as jnp

        op, a = case.p["op"], blocks[0]
        if op == "read":
            return jnp.sum(a).reshape(1)
        if op == "copy":
            return a * 2
        if op == "scale":
            return a * 3
        if op == "add":
            return a + blocks[1]
        return a + 3 * blocks[1]  # triad

    def reference(self, ctx, local):
        op = ctx.p["op"]
        if op == "read":
            return _read_reference(ctx, local[0])
        e = [exact(x) for x in local]
        value = {"copy": lambda: 2 * e[0], "scale": lambda: 3 * e[0],
                 "add": lambda: e[0] + e[1], "triad": lambda: e[0] + 3 * e[1]}[op]()
        if op == "copy" or ctx.case.dtype == "float32":  # exact: see GRID
            return Expected(value, 0.0)
        magnitude = 3 * e[0] if op == "scale" else e[0] + (3 if op == "triad" else 1) * e[1]
        return Expected(value, sum_bound(3, ctx.case.dtype, magnitude, value))

    def exact_check(self, ctx):
        """read: signed values at every K-th element whose sum stays exact in the dtype
        (a dropped or repeated block of K elements changes it), K = m / 128; scale, add,
        triad: integers 0..63 (every result exact in bfloat16 too), every element
        compared; copy is exact already. The reference is local: each device works on
        its own elements."""
        op, m, dtype = ctx.p["op"], ctx.p["size"] // ctx.local_devices, ctx.case.dtype
        if op == "copy":
            return None
        shape = _block(ctx.local_devices, m)
        if op != "read":
            ints = np.broadcast_to(np.arange(m, dtype=np.float64) % 64, (ctx.local_devices, m))
            a, b = ints, ints[:, ::-1]
            value = {"scale": 3 * a, "add": a + b, "triad": a + 3 * b}[op]
            inputs = (a,) if op == "scale" else (a, b)
            return ExactCheck(tuple(cast(np.ascontiguousarray(x, np.float32), dtype)
                                    .reshape(shape) for x in inputs),
                              Expected(value.reshape(shape), 0.0))
        k, _ = spacing(m, dtype, contributors=128)
        on = np.arange(0, m, k)  # the pattern's non-zero elements (ranks of a group of m)
        values = exact_pattern(on, 1, m, dtype, contributors=128)[:, 0]
        x = cast(np.zeros((ctx.local_devices, m), np.float32), dtype)
        x[:, on] = values
        total = np.full((ctx.local_devices, 1), values.sum())
        return ExactCheck((x.reshape(shape),), Expected(total, 0.0))

    def work(self, case):
        op, size = case.p["op"], case.p["size"]
        moved = size * case.itemsize * MOVES[op]
        return Work(moved, size * FLOPS[op], moved // case.devices_per_host)


def _fill(period: np.ndarray, m: int) -> np.ndarray:
    """Each device's row of ``m`` values: its period repeated, as :func:`_block`'s rows."""
    devices, n = period.shape
    x = np.empty((devices, m), period.dtype)
    whole = m - m % n
    x[:, :whole].reshape(devices, -1, n)[:] = period[:, None]
    x[:, whole:] = period[:, :m - whole]
    return x.reshape(_block(devices, m))


def _read_reference(ctx, x):
    """read: each device's sum, from the period its block repeats."""
    flat = x.reshape(x.shape[0], -1)  # a view: each device's values in a row
    m = flat.shape[-1]
    period = exact(flat[:, :min(m, PERIOD)])  # what inputs() repeats
    repeats, rest = divmod(m, period.shape[1])
    total = repeats * period.sum(axis=-1, keepdims=True) + \
        period[:, :rest].sum(axis=-1, keepdims=True)
    # non-negative values: the sum of magnitudes is the sum
    return Expected(total, sum_bound(m, ctx.case.dtype, total, total,
                                     integers=integral(period)))


def _block(devices: int, m: int) -> tuple[int, int, int]:
    """The inputs' shape: each device's ``m`` values as rows of 1024 (or of the largest of
    512, 256, 128 that divides ``m``; else one row). A TPU tiles a leading dimension of 1
    as (1, 128), and a sum over f32[1, 64M] ran at 195 GB/s on a v5e against 288 GB/s
    over f32[64K, 1024] (tiles of (8, 128)): the ceiling must not be the layout's."""
    width = next((w for w in (1024, 512, 256, 128) if m % w == 0), m)
    return devices, m // width, width


stream = Stream()
