"""``replay``: one collective of a real program, as its compiled step runs it — the kind,
the bytes each device sends (``size``), the dtype, and the exact groups (global device
indices, process-major: process x devices per host + local index), all groups at once
over a mesh of the groups. ``podscale replay`` makes these cases from a workload's
optimized HLO (``analysis/data/hlo.py``); ``of`` names the instruction replayed.

Reductions other than sum, max and min, and a reduce-scatter's max or min (JAX has only
``psum_scatter``), are replayed as sums: the same bytes move. ``groups`` is ``0.1|2.3``
(devices joined by ``.``, groups by ``|``: no commas, which separate ``--param`` values);
``pairs`` (permutes) is ``0>1|1>2``, in ranks of the one group.
"""

from __future__ import annotations

import numpy as np

from podscale import Collective, Param, UsageError, Work
from podscale.suites import all_gather, all_reduce, all_to_all, reduce_scatter  # modules: the

# registry finds each workload once, in its file

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute")
#: analysis/models/bandwidth.py's key, where it differs
BANDWIDTH = {"collective_permute": "sendrecv"}
COMBINE = {"all_reduce": all_reduce.all_reduce, "all_gather": all_gather.all_gather,
           "reduce_scatter": reduce_scatter.reduce_scatter, "all_to_all": all_to_all.all_to_all}


def parse_groups(text: str) -> list[list[int]]:
    try:
        return [[int(x) for x in g.split(".")] for g in str(text).split("|") if g.strip()]
    except ValueError:
        raise UsageError(f"replay: bad groups {text!r} (use 0.1|2.3)") from None


def parse_pairs(text: str) -> list[tuple[int, int]]:
    try:
        return [tuple(int(x) for x in p.split(">")) for p in str(text).split("|") if p.strip()]
    except ValueError:
        raise UsageError(f"replay: bad pairs {text!r} (use 0>1|1>0)") from None


class Replay(Collective):
    """one collective of a real program, with its bytes, dtype and exact groups"""

    name = "replay"
    version = "1"
    variants = ("shard_map",)
    params = (Param("kind", "all_reduce", "str", choices=KINDS),
              Param("size", 4096, "size", help="bytes each device sends", unit="B"),
              Param("groups", "0", "str", help="global device indices: 0.1|2.3"),
              Param("op", "sum", "str", choices=("sum", "max", "min")),
              Param("pairs", "", "str", help="permutes: source>target ranks, 0>1|1>0"),
              Param("of", "", "str", help="the HLO instruction replayed"))

    def collective_of(self, case):
        return BANDWIDTH.get(case.p["kind"], case.p["kind"])

    def grouped(self, case) -> bool:
        return True

    def reduce_axes(self, case):
        """Its groups span the whole mesh (global device indices): every axis."""
        return case.layout.axis_names

    def groups(self, case) -> np.ndarray:
        return np.array(parse_groups(case.p["groups"]))

    def group_size(self, case) -> int:
        return len(parse_groups(case.p["groups"])[0])

    def rule(self, case):
        kind, op = case.p["kind"], case.p["op"]
        if kind == "all_reduce":
            return op
        return {"collective_permute": "permute"}.get(kind, kind)

    def is_chunked(self, case):
        return case.p["kind"] in ("reduce_scatter", "all_to_all")

    def perm(self, case):
        return self._pairs(case)

    def check_case(self, case) -> None:
        groups = parse_groups(case.p["groups"])
        flat = sorted(d for g in groups for d in g)
        if not groups or len({len(g) for g in groups}) != 1 or \
                flat != list(range(case.layout.devices)):
            raise UsageError(f"replay: groups {case.p['groups']!r} are not equal-sized groups "
                             f"covering the {case.layout.devices} devices once each")
        n, m = len(groups[0]), self.elements(case)
        if m < 1 or case.p["size"] % case.itemsize:
            raise UsageError(f"replay: {case.p['size']} bytes are not whole {case.dtype} "
                             "elements")
        if case.p["kind"] in ("reduce_scatter", "all_to_all") and m % n:
            raise UsageError(f"replay: {m} elements do not split into {n} chunks")
        for s, t in self._pairs(case):
            if not (0 <= s < n and 0 <= t < n):
                raise UsageError(f"replay: pair {s}>{t} outside the group of {n}")

    def _pairs(self, case) -> list[tuple[int, int]]:
        return parse_pairs(case.p["pairs"]) if case.p["kind"] == "collective_permute" else []

    def body(self, case, axes, x):
        import jax

        kind = case.p["kind"]
        if kind == "all_reduce":
            return {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}[
                case.p["op"]](x, axes)
        if kind == "all_gather":
            return jax.lax.all_gather(x, axes, tiled=True)
        if kind == "reduce_scatter":
            return jax.lax.psum_scatter(x, axes, tiled=True)
        if kind == "all_to_all":
            return jax.lax.all_to_all(x, axes, 0, 0, tiled=True)
        return jax.lax.ppermute(x, axes, self.perm(case))

    def combine(self, x, case):
        kind = case.p["kind"]
        if kind == "collective_permute":
            value = np.zeros_like(x)
            for s, t in self._pairs(case):
                value[..., t, :] = x[..., s, :]
            return value, np.zeros(1)
        return COMBINE[kind].combine(x, case)  # a reduce_scatter is replayed as a sum

    def work(self, case):
        send, n = case.p["size"], self.group_size(case)
        s = send * n if case.p["kind"] == "all_gather" else send
        return Work(send * case.devices_per_host, 0, s, n, self.hosts_per_group(case))


replay = Replay()
