"""``stream``: a memory-bandwidth ceiling, measured the way every case is measured.

Every local device sums (``op=read``) or scales (``op=copy``: ``y = 2x``, reading and
writing) its own block of ``size / local_devices`` float32 values; no communication. Run
with a buffer of at least 4x the last-level cache (on a 32 MiB L3: ``--sizes 32M``, i.e.
128 MiB per process) and on the same layout as the workload it bounds, so the ceiling
holds for the same number of processes and devices competing for memory. ``work`` counts
the bytes moved, so its GB/s is the figure to divide a local workload's GB/s by (``dot``
mostly reads: compare it with ``op=read``). On CPU ``op=copy`` also pays for a fresh
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

OPS = ("read", "copy")
#: values per device that repeat to fill its block (4 MiB of float32)
PERIOD = 1 << 20


class Stream(Mapped):
    """memory bandwidth ceiling: sum (read) or 2x (copy) of each device's block"""

    name = "stream"
    version = "1"
    params = (Param("size", 1 << 25, "size", help="float32 values per process (split over "
                                                   "local devices); >= 4x the LLC in bytes",
                    unit="elements"),
              Param("op", "read", "str", choices=OPS, help="read: sum; copy: y = 2x"))

    def inputs(self, ctx):
        """Uniform in [0, 1) from the process's seed, a period of ``PERIOD`` values per
        device repeated to fill its block: a bandwidth figure does not depend on the
        values, every byte of the block is still read, and the reference is the period's
        sum times its repeats (1 ms, against 0.09 s for two float64 passes over 128 MiB;
        drawing 4 MiB and copying it: 0.05 s against 0.09 s for drawing it all). With no
        cancellation the sum stands well clear of zero (signs are the exact check's)."""
        m = ctx.p["size"] // ctx.local_devices
        rng = np.random.default_rng(seed_for(ctx.process))
        period = cast(rng.random((ctx.local_devices, min(m, PERIOD)), dtype=np.float32),
                      ctx.case.dtype)
        x = np.empty((ctx.local_devices, m), period.dtype)
        whole = m - m % period.shape[1]
        x[:, :whole].reshape(ctx.local_devices, -1, period.shape[1])[:] = period[:, None]
        x[:, whole:] = period[:, :m - whole]
        return (x.reshape(_block(ctx.local_devices, m)),)

    def body(self, case, axes, x):
        import jax.numpy as jnp

        if case.p["op"] == "copy":
            return x * 2
        return jnp.sum(x).reshape(1)

    def reference(self, ctx, local):
        (x,) = local
        if ctx.p["op"] == "copy":
            e = exact(x)
            return Expected(2 * e, np.zeros_like(e))  # scaling by 2 is exact
        flat = x.reshape(x.shape[0], -1)  # a view: each device's values in a row
        m = flat.shape[-1]
        period = exact(flat[:, :min(m, PERIOD)])  # what inputs() repeats
        repeats, rest = divmod(m, period.shape[1])
        total = repeats * period.sum(axis=-1, keepdims=True) + \
            period[:, :rest].sum(axis=-1, keepdims=True)
        # non-negative values: the sum of magnitudes is the sum
        return Expected(total, sum_bound(m, ctx.case.dtype, total, total,
                                         integers=integral(period)))

    def exact_check(self, ctx):
        """read: signed values at every K-th element whose sum stays exact in the dtype
        (a dropped or repeated block of K elements changes it), K = m / 128; copy is
        exact already. The reference is local: each device sums its own elements."""
        if ctx.p["op"] != "read":
            return None
        m, dtype = ctx.p["size"] // ctx.local_devices, ctx.case.dtype
        k, _ = spacing(m, dtype, contributors=128)
        on = np.arange(0, m, k)  # the pattern's non-zero elements (ranks of a group of m)
        values = exact_pattern(on, 1, m, dtype, contributors=128)[:, 0]
        x = cast(np.zeros((ctx.local_devices, m), np.float32), dtype)
        x[:, on] = values
        total = np.full((ctx.local_devices, 1), values.sum())
        return ExactCheck((x.reshape(_block(ctx.local_devices, m)),), Expected(total, 0.0))

    def work(self, case):
        size = case.p["size"] * case.itemsize
        moved = size * (2 if case.p["op"] == "copy" else 1)
        return Work(moved, case.p["size"] if case.p["op"] == "read" else 0,
                    moved // case.devices_per_host)


def _block(devices: int, m: int) -> tuple[int, int, int]:
    """The inputs' shape: each device's ``m`` values as rows of 1024 (or of the largest of
    512, 256, 128 that divides ``m``; else one row). A TPU tiles a leading dimension of 1
    as (1, 128), and a sum over f32[1, 64M] ran at 195 GB/s on a v5e against 288 GB/s
    over f32[64K, 1024] (tiles of (8, 128)): the ceiling must not be the layout's."""
    width = next((w for w in (1024, 512, 256, 128) if m % w == 0), m)
    return devices, m // width, width


stream = Stream()
