"""``dot``: per-process random 3-vectors, ``vmap(vdot)`` on every local device.

As in the reference listing: ``2*size`` normal rows of width ``width`` drawn with seed
``42 + 10*process_index``, split in two halves, reshaped to ``(local_devices, rows, width)``
(drawn with numpy's generator; see :func:`podscale.protocol.mapped.normals`). No communication.
"""

from __future__ import annotations

import math

import numpy as np

from podscale import (
    UNIT_ROUNDOFF,
    ExactCheck,
    Expected,
    Mapped,
    Param,
    Work,
    cast,
    exact,
    normals,
    seed_for,
    sum_bound,
)

#: rows of the exact check's inputs before they repeat (a prime: no device's or row
#: block's boundary lines up with it)
PERIOD = 4099


class Dot(Mapped):
    """vmap(vdot) of per-process random vectors on every local device (no communication)"""

    name = "dot"
    version = "1"
    params = (Param("size", 4096, "size", help="rows per process (split over local devices)",
                    unit="rows"),
              Param("width", 3, "int", help="length of each vector", unit="elements"))

    def inputs(self, ctx):
        size, width = ctx.p["size"], ctx.p["width"]
        vs = normals(ctx.process, (2 * size, width))
        shape = (ctx.local_devices, size // ctx.local_devices, width)
        return (cast(vs[:size].reshape(shape), ctx.case.dtype),
                cast(vs[size:].reshape(shape), ctx.case.dtype))

    def body(self, case, axes, x, y):
        import jax
        import jax.numpy as jnp

        return jax.vmap(jnp.vdot)(x, y)

    def reference(self, ctx, local):
        """Each row's dot product and sum of |products| in float64 (a float32 product is
        exact in float64), by einsum: no float64 copies of the rows (2.4x faster on 1M)."""
        x, y = (a if a.dtype in (np.float32, np.float64) else exact(a) for a in local)
        value = np.einsum("...i,...i->...", x, y, dtype=np.float64)
        size = np.einsum("...i,...i->...", np.abs(x), np.abs(y), dtype=np.float64)
        return Expected(value, sum_bound(ctx.p["width"], ctx.case.dtype, size, value))

    def exact_check(self, ctx):
        """Small signed integers (|v| <= a, with width * a**2 within the integers the dtype
        holds: 9 in bfloat16 at width 3), a drawn period of ``PERIOD`` rows repeated: every
        product and partial sum is exact, so every row's dot product is compared for
        equality (a dropped, swapped or misplaced row changes it); drawing the period,
        not every row, keeps the pass cheap. Where no a >= 1 fits (wide rows in a short
        dtype) the rounding bound stands in for equality."""
        size, width, d = ctx.p["size"], ctx.p["width"], ctx.local_devices
        dtype = ctx.case.dtype
        a = max(1, math.isqrt(int(1 / UNIT_ROUNDOFF[dtype]) // width))
        rng = np.random.default_rng(seed_for(ctx.process) + 1)
        period = rng.integers(-a, a + 1, size=(2, min(size, PERIOD), width)).astype(np.float32)
        rows = np.arange(size) % period.shape[1]
        x, y = (cast(v[rows].reshape(d, size // d, width), dtype) for v in period)
        each = np.einsum("ri,ri->r", period[0], period[1], dtype=np.float64)
        magnitude = np.einsum("ri,ri->r", np.abs(period[0]), np.abs(period[1]),
                              dtype=np.float64)
        value, size_abs = (v[rows].reshape(d, size // d) for v in (each, magnitude))
        return ExactCheck((x, y), Expected(value, sum_bound(width, dtype, size_abs, value,
                                                            integers=True)))

    def work(self, case):
        size, width = case.p["size"], case.p["width"]
        nbytes = (2 * width + 1) * size * case.itemsize
        return Work(nbytes, 2 * width * size, nbytes // case.devices_per_host)


dot = Dot()
