"""``psum``: all-reduce of every device's partial sums across all global devices.

Each device holds ``size / local_devices`` normals (seed ``42 + 10*process_index``);
the result on every device is their sum over all devices, checked against a float64
sum of all processes' inputs gathered with ``multihost_utils.process_allgather``.
"""

from __future__ import annotations

import numpy as np

from suites.common import AXIS, cast, normals


class Psum:
    def inputs(self, case, process: int) -> tuple[np.ndarray, ...]:
        shape = (case.devices_per_host, case.per_device)
        return (cast(normals(process, shape), case.dtype),)

    def body(self, x):
        import jax

        return jax.lax.psum(x, AXIS)

    def reference(self, case, local):
        from jax.experimental import multihost_utils

        (x,) = local
        everything = np.asarray(multihost_utils.process_allgather(x.astype(np.float32)))
        everything = everything.reshape(-1, case.per_device).astype(np.float64)
        total = np.broadcast_to(everything.sum(axis=0), x.shape)
        scale = np.broadcast_to(np.abs(everything).sum(axis=0), x.shape)
        return total, scale, case.hosts * case.devices_per_host

    def work(self, case) -> tuple[int, int, int]:
        per_device = case.per_device * case.itemsize
        return case.size * case.itemsize, 0, per_device


WORKLOAD = Psum()
