"""``stream``: a memory-bandwidth ceiling, measured the way every case is measured.

Every local device sums (``op=read``) or scales (``op=copy``: ``y = 2x``, reading and
writing) its own block of ``size / local_devices`` float32 values; no communication. Run
with a buffer of at least 4x the last-level cache (on a 32 MiB L3: ``--sizes 32M``, i.e.
128 MiB per process) and on the same layout as the workload it bounds, so the ceiling
holds for the same number of processes and devices competing for memory. ``work`` counts
the bytes moved, so its GB/s is the figure to divide a local workload's GB/s by (``dot``
mostly reads: compare it with ``op=read``). On CPU ``op=copy`` also pays for a fresh
output buffer every step (page faults: measured 4.9 GB/s against 31 GB/s for ``read`` on
one process here), as any non-donating jitted step does.
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
    normals,
    spacing,
    sum_bound,
)

OPS = ("read", "copy")


class Stream(Mapped):
    """memory bandwidth ceiling: sum (read) or 2x (copy) of each device's block"""

    name = "stream"
    version = "1"
    params = (Param("size", 1 << 25, "size", help="float32 values per process (split over "
                                                   "local devices); >= 4x the LLC in bytes",
                    unit="elements"),
              Param("op", "read", "str", choices=OPS, help="read: sum; copy: y = 2x"))

    def inputs(self, ctx):
        shape = (ctx.local_devices, ctx.p["size"] // ctx.local_devices)
        return (cast(normals(ctx.process, shape), ctx.case.dtype),)

    def body(self, case, axes, x):
        import jax.numpy as jnp

        if case.p["op"] == "copy":
            return x * 2
        return jnp.sum(x, keepdims=True)

    def reference(self, ctx, local):
        (x,) = local
        if ctx.p["op"] == "copy":
            e = exact(x)
            return Expected(2 * e, np.zeros_like(e))  # scaling by 2 is exact
        # summed in float64 without a float64 copy of the buffer
        total = np.add.reduce(x, axis=-1, dtype=np.float64, keepdims=True)
        size = np.add.reduce(np.abs(x), axis=-1, dtype=np.float64, keepdims=True)
        return Expected(total, sum_bound(x.shape[-1], ctx.case.dtype, size, total,
                                         integers=integral(x)))

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
        return ExactCheck((x,), Expected(total, 0.0))

    def work(self, case):
        size = case.p["size"] * case.itemsize
        moved = size * (2 if case.p["op"] == "copy" else 1)
        return Work(moved, case.p["size"] if case.p["op"] == "read" else 0,
                    moved // case.devices_per_host)


stream = Stream()
