"""stream's scale (b = 3a), and with PODSCALE_TEST_EXTRA=1 one op more in the step: a
cumulative sum of the input, added times zero (the output is unchanged, the program is
not): a planted one-op change for the op-level comparison."""

import os

from podscale.suites.stream import Stream


class ExtraOp(Stream):
    """stream's kernels, with an op more where PODSCALE_TEST_EXTRA=1"""

    name = "extra_op"

    def body(self, case, axes, *blocks):
        out = super().body(case, axes, *blocks)
        if os.environ.get("PODSCALE_TEST_EXTRA") != "1":
            return out
        import jax.numpy as jnp

        return out + jnp.cumsum(blocks[0], axis=-1) * 0.0


extra_op = ExtraOp()
