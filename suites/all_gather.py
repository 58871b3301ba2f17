"""``all_gather``: ``jax.lax.all_gather(tiled=True)`` over the named mesh axes; every device
gets the group's buffers concatenated by rank. S = the received buffer (n x send)."""

from __future__ import annotations

import numpy as np

from podscale import Collective


class AllGather(Collective):
    """all-gather over any mesh axes"""

    name = "all_gather"
    version = "1"
    collective = "all_gather"
    s_buffer = "recv"
    exact_rule = "all_gather"

    def body(self, case, axes, x):
        import jax

        return jax.lax.all_gather(x, axes, tiled=True)

    def combine(self, x, case):
        n = x.shape[-2]
        row = x.reshape(*x.shape[:-2], 1, -1)
        value = np.broadcast_to(row, (*x.shape[:-2], n, row.shape[-1]))  # a view: no copy
        return value, np.zeros(1)  # data movement is exact


all_gather = AllGather()
