"""``pairs``: transfer time between every ordered pair of processes, one pair at a time.

Each case is one (src, dst) pair: ``jax.lax.ppermute`` over the ``hosts`` axis with that
single source/destination pair (``mode=one-way``), or the exchange src<->dst
(``mode=two-way``); every local device index moves its buffer at the same time. With
``src``/``dst`` left at ``all`` the workload expands to every pair of the layout. The
report shows the matrix as a table and a heatmap and names the outlier process.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from podscale import SIZE, Collective, Param, UsageError, Work


class Pairs(Collective):
    """point-to-point transfer time between every pair of processes (ppermute, one pair)"""

    name = "pairs"
    version = "1"
    collective = "sendrecv"
    variants = ("shard_map",)
    params = (SIZE, Param("mode", "one-way", "str", choices=("one-way", "two-way")),
              Param("src", "all", "str", help="source process, or all"),
              Param("dst", "all", "str", help="destination process, or all"))

    def reduce_axes(self, case):
        return ("hosts",)

    def cases(self, case):
        h = case.processes
        p = case.p
        srcs = range(h) if p["src"] == "all" else [int(p["src"])]
        dsts = range(h) if p["dst"] == "all" else [int(p["dst"])]
        if p["mode"] == "two-way":
            pairs = [(s, d) for s in srcs for d in dsts if s < d or p["src"] != "all"]
        else:
            pairs = [(s, d) for s in srcs for d in dsts]
        return [replace(case, params=tuple({**p, "src": str(s), "dst": str(d)}.items()))
                for s, d in pairs if s != d]

    exact_rule = "permute"

    def check_case(self, case):
        if case.processes < 2:
            raise UsageError("pairs: needs 2 or more hosts")
        for key in ("src", "dst"):
            if not case.p[key].isdigit() or int(case.p[key]) >= case.processes:
                raise UsageError(f"pairs: {key} {case.p[key]!r} is not a process of "
                                 f"{case.processes}")

    def perm(self, case):
        s, d = int(case.p["src"]), int(case.p["dst"])
        return [(s, d), (d, s)] if case.p["mode"] == "two-way" else [(s, d)]

    def body(self, case, axes, x):
        import jax

        return jax.lax.ppermute(x, axes, self.perm(case))

    def combine(self, x, case):
        value = np.zeros_like(x)
        for s, d in self.perm(case):
            value[..., d, :] = x[..., s, :]
        return value, np.zeros_like(value)

    def takes_part(self, case, process):
        return str(process) in (case.p["src"], case.p["dst"])

    def work(self, case):
        send = case.p["size"]  # one pair: two participants on two hosts
        return Work(send * case.devices_per_host, 0, send, 2, hosts_per_group=2)


pairs = Pairs()
