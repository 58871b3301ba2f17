"""``all_reduce``: ``jax.lax.psum`` / ``pmax`` / ``pmin`` of each device's buffer over the
named mesh axes; every device of a group gets the group's reduction. S = the buffer.

``algorithm=hierarchical`` (shard_map, two or more axes): the first named axis is the outer
one (``hosts`` for ``axes=all``), the rest inner. A sum is a reduce_scatter (psum_scatter)
over the inner axes, an all-reduce over the outer axis and an all-gather over the inner
axes; max and min reduce over the inner axes, then the outer one. The report puts it next
to ``flat`` (one collective over all the axes)."""

from __future__ import annotations

import numpy as np

from podscale import AXES, GROUP, SIZE, Collective, Param, UsageError, integral, sum_bound


class AllReduce(Collective):
    """all-reduce (sum, max or min) over any mesh axes"""

    name = "all_reduce"
    version = "1"
    collective = "all_reduce"
    params = (SIZE, AXES, GROUP, Param("op", "sum", "str", choices=("sum", "max", "min")),
              Param("algorithm", "flat", "str", choices=("flat", "hierarchical")))

    def unsupported_case(self, case):
        if case.p["algorithm"] == "hierarchical":
            if case.variant == "pmap":
                return "all_reduce: the hierarchical algorithm needs shard_map"
            if len(self.reduce_axes(case)) < 2:
                return "all_reduce: the hierarchical algorithm needs two or more axes"
            if self.grouped(case):
                return "all_reduce: the hierarchical algorithm runs over whole axes (group=all)"
        return None

    def check_case(self, case):
        inner = self.axes_size(case) // dict(case.layout.axes)[self.reduce_axes(case)[0]]
        if case.p["algorithm"] == "hierarchical" and case.p["op"] == "sum" and \
                self.elements(case) % inner:
            raise UsageError(f"all_reduce: {self.elements(case)} elements do not split into "
                             f"{inner} chunks (the inner axes) for the hierarchical sum")

    def rule(self, case):
        return case.p["op"]  # the exact check's closed form: sum, max or min

    def body(self, case, axes, x):
        import jax

        op = case.p["op"]
        reduce = {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}[op]
        if case.p["algorithm"] != "hierarchical":
            return reduce(x, axes)
        outer, inner = axes[0], tuple(axes[1:])
        if op != "sum":
            return reduce(reduce(x, inner), outer)
        part = jax.lax.psum_scatter(x, inner, tiled=True)
        return jax.lax.all_gather(jax.lax.psum(part, outer), inner, tiled=True)

    def combine(self, x, case):
        n = x.shape[-2]
        if case.p["op"] == "sum":
            total = x.sum(axis=-2, keepdims=True)
            bound = sum_bound(n, case.dtype, np.abs(x).sum(axis=-2, keepdims=True), total,
                              integers=integral(x))
            return np.broadcast_to(total, x.shape), np.broadcast_to(bound, x.shape)
        pick = x.max if case.p["op"] == "max" else x.min
        return np.broadcast_to(pick(axis=-2, keepdims=True), x.shape), np.zeros(1)  # exact


all_reduce = AllReduce()
