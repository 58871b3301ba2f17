"""``psum``: all-reduce (sum) of every device's vector across all global devices.

Each device holds ``size / local_devices`` normals (seed ``42 + 10*process_index``); the
result on every device is their sum over all devices, checked against a float64 sum of
all processes' inputs gathered with ``multihost_utils.process_allgather``.
"""

from __future__ import annotations

import numpy as np

from podscale import (
    Expected,
    Mapped,
    Param,
    Work,
    cast,
    exact,
    exact_pattern,
    gather_processes,
    integral,
    normals,
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

    def body(self, axes, x):
        import jax

        return jax.lax.psum(x, axes)

    def reference(self, ctx, local):
        (x,) = local
        everything = exact(gather_processes(x)).reshape(-1, x.shape[-1])
        total = np.broadcast_to(everything.sum(axis=0), x.shape)
        abs_sum = np.broadcast_to(np.abs(everything).sum(axis=0), x.shape)
        return Expected(total, sum_bound(len(everything), ctx.case.dtype, abs_sum, total,
                                         integers=integral(everything)))

    def exact_inputs(self, ctx):
        d = ctx.local_devices
        ranks = np.arange(ctx.process * d, (ctx.process + 1) * d)
        pattern = exact_pattern(ranks, ctx.p["size"] // d, ctx.case.layout.devices,
                                ctx.case.dtype)
        return (cast(pattern, ctx.case.dtype),)

    def groups(self, case):
        return np.arange(case.layout.devices)[None, :]

    def work(self, case):
        per_device = case.p["size"] // case.devices_per_host * case.itemsize
        return Work(case.p["size"] * case.itemsize, 0, per_device, case.layout.devices,
                    case.hosts)


psum = Psum()
