"""``reduce_scatter``: ``jax.lax.psum_scatter(tiled=True)`` over the named mesh axes; rank i
of a group gets chunk i of the group's sum. S = the send buffer (n x received)."""

from __future__ import annotations

import numpy as np

from podscale import Collective, integral, sum_bound


class ReduceScatter(Collective):
    """reduce-scatter (psum_scatter) over any mesh axes"""

    name = "reduce_scatter"
    version = "1"
    collective = "reduce_scatter"
    chunked = True
    exact_rule = "reduce_scatter"

    def body(self, case, axes, x):
        import jax

        return jax.lax.psum_scatter(x, axes, tiled=True)

    def combine(self, x, case):
        n = x.shape[-2]
        total = x.sum(axis=-2)
        bound = sum_bound(n, case.dtype, np.abs(x).sum(axis=-2), total,
                          integers=integral(x))
        shape = (*total.shape[:-1], n, total.shape[-1] // n)
        return total.reshape(shape), bound.reshape(shape)


reduce_scatter = ReduceScatter()
