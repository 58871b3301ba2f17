"""``all_reduce``: ``jax.lax.psum`` / ``pmax`` / ``pmin`` of each device's buffer over the
named mesh axes; every device of a group gets the group's reduction. S = the buffer."""

from __future__ import annotations

import numpy as np

from podscale.core.workload import Param
from suites._collective import AXES, SIZE, Collective
from suites.common import sum_bound


class AllReduce(Collective):
    """all-reduce (sum, max or min) over any mesh axes"""

    name = "all_reduce"
    version = "1"
    collective = "all_reduce"
    params = (SIZE, AXES, Param("op", "sum", "str", choices=("sum", "max", "min")))

    def body(self, axes, x):
        import jax

        return {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}[self._op](x, axes)

    def step(self, ctx, local):
        self._op = ctx.p["op"]
        return super().step(ctx, local)

    def combine(self, x, case):
        n = x.shape[-2]
        if case.p["op"] == "sum":
            total = x.sum(axis=-2, keepdims=True)
            bound = sum_bound(n, case.dtype, np.abs(x).sum(axis=-2, keepdims=True), total)
            return np.repeat(total, n, axis=-2), np.repeat(bound, n, axis=-2)
        pick = x.max if case.p["op"] == "max" else x.min
        value = np.repeat(pick(axis=-2, keepdims=True), n, axis=-2)
        return value, np.zeros_like(value)  # max and min are exact


all_reduce = AllReduce()
