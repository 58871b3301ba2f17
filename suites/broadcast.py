"""``broadcast``: rank 0 of each group sends its buffer to every rank of the group.

JAX has no broadcast primitive; it is expressed as ``psum`` of the buffer masked to zero
everywhere but rank 0 (``jax.lax.axis_index``), an all-reduce whose sum is exact (adding
zeros). S = the buffer; busbw factor 1 as nccl-tests' broadcast (a lower bound on the
all-reduce's traffic)."""

from __future__ import annotations

import numpy as np

from podscale import Collective


class Broadcast(Collective):
    """broadcast from rank 0 of each group over any mesh axes (masked psum)"""

    name = "broadcast"
    version = "1"
    collective = "broadcast"
    exact_rule = "broadcast"

    def body(self, case, axes, x):
        import jax
        import jax.numpy as jnp

        return jax.lax.psum(jnp.where(jax.lax.axis_index(axes) == 0, x, jnp.zeros_like(x)),
                            axes)

    def combine(self, x, case):
        value = np.broadcast_to(x[..., :1, :], x.shape)  # a view: no copy
        return value, np.zeros(1)


broadcast = Broadcast()
