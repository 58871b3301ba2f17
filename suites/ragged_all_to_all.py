"""``ragged_all_to_all``: ``jax.lax.ragged_all_to_all`` over the named mesh axes, where
rank i sends rank j a chunk of its own length: ``q*(1 + (i+j) % n)`` elements
(q = as many whole units as the send buffer holds; each rank sends and receives
``q*n*(n+1)/2`` elements). Receiver j stores the chunks in sender order. S = the bytes
each rank sends; the busbw factor is all_to_all's. Backends that do not implement the
op (XLA:CPU) make the worker record the case as skipped, with the backend's reason.
"""

from __future__ import annotations

import numpy as np

from podscale import Collective, UsageError, Work, cast, normals


def chunk_sizes(n: int, q: int) -> np.ndarray:
    """s[i, j]: elements rank i sends rank j."""
    i, j = np.indices((n, n))
    return q * (1 + (i + j) % n)


class RaggedAllToAll(Collective):
    """ragged all-to-all (uneven chunks) over any mesh axes"""

    name = "ragged_all_to_all"
    version = "1"
    collective = "all_to_all"
    variants = ("shard_map",)

    def unit(self, case) -> int:
        n = self.group_size(case)
        return self.elements(case) // (n * (n + 1) // 2)

    sampled = False  # chunk offsets depend on the whole buffer: every element compared

    def check_case(self, case) -> None:
        n = self.group_size(case)
        if self.unit(case) < 1:
            raise UsageError(f"{self.name}: {self.elements(case)} elements per device cannot "
                             f"carry chunks of 1..{n} units to {n} ranks (need "
                             f"{n * (n + 1) // 2})")

    def inputs(self, ctx):
        case = ctx.case
        n, m, q = self.group_size(case), self.elements(case), self.unit(case)
        s = chunk_sizes(n, q)
        in_off = np.cumsum(s, axis=1) - s  # sender i: where chunk j starts in its buffer
        out_off = np.cumsum(s, axis=0) - s  # sender i: where its chunk lands in receiver j
        rank = np.empty(case.layout.devices, int)
        idx = self.groups(case)
        rank[idx] = np.arange(n)  # each device's rank within its group
        d = ctx.local_devices
        ranks = rank[ctx.process * d:(ctx.process + 1) * d]
        x = cast(normals(ctx.process, (ctx.local_devices, m)), case.dtype)
        meta = [np.stack([a[r] for r in ranks]).astype(np.int32)
                for a in (in_off, s, out_off, s.T)]  # recv sizes: receiver j, sender i
        return (x, np.zeros_like(x), *meta)

    def body(self, case, axes, x, out, in_off, send, out_off, recv):
        import jax

        return jax.lax.ragged_all_to_all(x, out, in_off, send, out_off, recv, axis_name=axes)

    def combine(self, x, case):
        n = x.shape[-2]
        s = chunk_sizes(n, self.unit(case))
        in_off = np.cumsum(s, axis=1) - s
        value = np.zeros_like(x)
        for j in range(n):
            got = [x[..., i, in_off[i, j]:in_off[i, j] + s[i, j]] for i in range(n)]
            row = np.concatenate(got, axis=-1)
            value[..., j, :row.shape[-1]] = row
        return value, np.zeros_like(value)

    def work(self, case):
        n, q = self.group_size(case), self.unit(case)
        sent = q * n * (n + 1) // 2 * case.itemsize
        return Work(sent * case.devices_per_host, 0, sent, n, self.hosts_per_group(case))


ragged_all_to_all = RaggedAllToAll()
