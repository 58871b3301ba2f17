"""``ppermute``: ``jax.lax.ppermute`` ring shift over the named mesh axes: rank i sends to
rank i+1 (``direction=+1``), or to both neighbours with the two halves of its buffer
(``direction=both``). S = the send buffer; busbw as nccl-tests' sendrecv (factor 1)."""

from __future__ import annotations

import numpy as np

from podscale import AXES, GROUP, SIZE, Collective, Param


class PPermute(Collective):
    """ring shift (collective-permute) by +1 or both ways over any mesh axes"""

    name = "ppermute"
    version = "1"
    collective = "sendrecv"
    params = (SIZE, AXES, GROUP, Param("direction", "+1", "str", choices=("+1", "both")))
    variants = ("shard_map",)

    def rule(self, case):
        return "permute" if case.p["direction"] == "+1" else None  # both: the float check

    def perm(self, case, step=1):
        n = self.group_size(case)
        return [(i, (i + step) % n) for i in range(n)]

    def body(self, case, axes, x):
        import jax
        import jax.numpy as jnp

        if case.p["direction"] != "both":
            return jax.lax.ppermute(x, axes, self.perm(case))
        half = x.shape[-1] // 2
        return jnp.concatenate([jax.lax.ppermute(x[..., :half], axes, self.perm(case)),
                                jax.lax.ppermute(x[..., half:], axes, self.perm(case, -1))],
                               axis=-1)

    def combine(self, x, case):
        if case.p["direction"] == "+1":
            value = np.roll(x, 1, axis=-2)
        else:
            half = x.shape[-1] // 2
            value = np.concatenate([np.roll(x[..., :half], 1, axis=-2),
                                    np.roll(x[..., half:], -1, axis=-2)], axis=-1)
        return value, np.zeros_like(value)


ppermute = PPermute()
