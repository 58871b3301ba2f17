"""``psum``: all-reduce (sum) of every device's vector across all global devices.

Each device holds ``size / local_devices`` normals (seed ``42 + 10*process_index``); the
result on every device is their sum over all devices, checked at ``--check-elements``
positions against a float64 sum of every device's elements there (gathered: O(k) per
device), and exactly at every position on integer inputs whose sum has a closed form.
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
    exact_pattern,
    gather_elements,
    integral,
    normals,
    reduce_pattern,
    sum_bound,
)


class Psum(Mapped):
    """all-reduce (sum) of every device's vector over all devices"""

    name = "psum"
    version = "1"
    collective = "all_reduce"
    params = (Param("size", 65536, "size",
                    help="elements per process (split over local devices)", unit="elements"),)

    def inputs(self, ctx):
        shape = (ctx.local_devices, ctx.p["size"] // ctx.local_devices)
        return (cast(normals(ctx.process, shape), ctx.case.dtype),)

    def body(self, case, axes, x):
        import jax

        return jax.lax.psum(x, axes)

    def reference(self, ctx, local):
        (x,) = local
        at = ctx.sample(x.shape[-1])
        everything = gather_elements(x, at)  # (devices, k): the compared elements only
        shape = (x.shape[0], at.size)
        total = np.broadcast_to(everything.sum(axis=0), shape)
        abs_sum = np.broadcast_to(np.abs(everything).sum(axis=0), shape)
        return Expected(total, sum_bound(len(everything), ctx.case.dtype, abs_sum, total,
                                         integers=integral(everything)), at)

    def exact_check(self, ctx):
        d, n, dtype = ctx.local_devices, ctx.case.layout.devices, ctx.case.dtype
        m = ctx.p["size"] // d
        pattern = exact_pattern(np.arange(ctx.process * d, (ctx.process + 1) * d), m, n, dtype)
        total = reduce_pattern("sum", np.arange(m), n, dtype)  # closed form: no gather
        return ExactCheck((cast(pattern, dtype),), Expected(np.broadcast_to(total, (d, m)),
                                                           np.zeros(1)))

    def groups(self, case):
        return np.arange(case.layout.devices)[None, :]

    def work(self, case):
        per_device = case.p["size"] // case.devices_per_host * case.itemsize
        return Work(case.p["size"] * case.itemsize, 0, per_device, case.layout.devices,
                    case.processes)


psum = Psum()
