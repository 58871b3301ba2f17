"""psum of a 6,148-byte buffer: one all-reduce, or (PODSCALE_TEST_SPLIT=1) three."""

import os

import numpy as np

from podscale import AXES, GROUP, Collective, Param, integral, sum_bound


class Split(Collective):
    """all-reduce that an environment variable splits in three"""

    name = "split_psum"
    params = (Param("size", 6148, "size", unit="B"), AXES, GROUP)
    exact_rule = "sum"

    def body(self, case, axes, x):
        import jax
        import jax.numpy as jnp

        if os.environ.get("PODSCALE_TEST_SPLIT") != "1":
            return jax.lax.psum(x, axes)
        parts = (x[:1024], x[1024:1536], x[1536:])
        return jnp.concatenate([jax.lax.psum(p, axes) * 1.0 for p in parts])

    def combine(self, x, case):
        total = x.sum(axis=-2, keepdims=True)
        bound = sum_bound(x.shape[-2], case.dtype, np.abs(x).sum(axis=-2, keepdims=True),
                          total, integers=integral(x))
        return np.broadcast_to(total, x.shape), np.broadcast_to(bound, x.shape)


split = Split()
