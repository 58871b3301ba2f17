"""``dot``: per-process random 3-vectors, ``vmap(vdot)`` on every local device.

As in the reference listing: ``2*size`` normal rows of width 3 drawn with seed
``42 + 10*process_index``, split in two halves, reshaped to ``(local_devices, rows, 3)``
(drawn with numpy's generator; see :func:`suites.common.normals`).
"""

from __future__ import annotations

import numpy as np

from suites.common import cast, normals


class Dot:
    def inputs(self, case, process: int) -> tuple[np.ndarray, ...]:
        vs = normals(process, (2 * case.size, case.width))
        shape = (case.devices_per_host, case.per_device, case.width)
        return cast(vs[: case.size].reshape(shape), case.dtype), cast(
            vs[case.size :].reshape(shape), case.dtype
        )

    def body(self, x, y):
        import jax
        import jax.numpy as jnp

        return jax.vmap(jnp.vdot)(x, y)

    def reference(self, case, local):
        x, y = (a.astype(np.float64) for a in local)
        products = x * y
        return products.sum(axis=-1), np.abs(products).sum(axis=-1), case.width

    def work(self, case) -> tuple[int, int, int]:
        nbytes = (2 * case.width + 1) * case.size * case.itemsize
        return nbytes, 2 * case.width * case.size, nbytes // case.devices_per_host


WORKLOAD = Dot()
