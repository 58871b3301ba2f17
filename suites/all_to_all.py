"""``all_to_all``: ``jax.lax.all_to_all(tiled=True)`` over the named mesh axes; chunk j of
rank i's buffer lands at position i of rank j's. S = the send buffer."""

from __future__ import annotations

import numpy as np

from podscale import Collective


class AllToAll(Collective):
    """all-to-all over any mesh axes"""

    name = "all_to_all"
    version = "1"
    collective = "all_to_all"
    chunked = True
    exact_rule = "all_to_all"

    def body(self, case, axes, x):
        import jax

        return jax.lax.all_to_all(x, axes, 0, 0, tiled=True)

    def combine(self, x, case):
        n = x.shape[-2]
        chunks = x.reshape(*x.shape[:-1], n, -1)  # (..., sender, chunk, m/n)
        value = np.swapaxes(chunks, -3, -2).reshape(x.shape)
        return value, np.zeros_like(value)


all_to_all = AllToAll()
