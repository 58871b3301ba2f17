"""``links``: every link between processes in P-1 steps, to find a bad host or link.

A ring shift by k (``jax.lax.ppermute`` over the ``hosts`` axis, process i sending its
buffer to process i+k) moves every pair (i, i+k) at once; the shifts k = 1..P-1 (one case
each, ``shift=all``) cover all P(P-1) ordered pairs in P-1 concurrent steps, where
``pairs`` needs one case per pair. Every local device index moves its buffer at the same
time. The link i -> i+k takes the faster of its two ends' median times at shift k
(:mod:`podscale.analysis.models.links`); processes and links that stand out are named.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from podscale import SIZE, Collective, Param, UsageError


class Links(Collective):
    """every link between processes in P-1 ring shifts (ppermute by k = 1..P-1)"""

    name = "links"
    version = "1"
    collective = "sendrecv"
    variants = ("shard_map",)
    params = (SIZE, Param("shift", "all", "str", help="k of the ring shift i -> i+k, or all "
                                                      "(k = 1..P-1)"))

    def reduce_axes(self, case):
        return ("hosts",)

    def cases(self, case):
        if case.p["shift"] != "all":
            return [case]
        return [replace(case, params=tuple({**case.p, "shift": str(k)}.items()))
                for k in range(1, case.processes)]

    exact_rule = "permute"

    def check_case(self, case):
        if case.processes < 2:
            raise UsageError("links: needs 2 or more hosts")
        k = case.p["shift"]
        if not k.isdigit() or not 1 <= int(k) < case.processes:
            raise UsageError(f"links: shift {k!r} is not 1..{case.processes - 1} (or all)")

    def perm(self, case):
        n, k = case.processes, int(case.p["shift"])
        return [(i, (i + k) % n) for i in range(n)]

    def body(self, case, axes, x):
        import jax

        return jax.lax.ppermute(x, axes, self.perm(case))

    def combine(self, x, case):
        value = np.roll(x, int(case.p["shift"]), axis=-2)  # rank i+k holds rank i's buffer
        return value, np.zeros_like(value)


links = Links()
