"""A user workload: a tensor-parallel (column-parallel) matmul, y = x @ w.

``podscale run examples/tp_matmul.py:tp_matmul --hosts 2 --devices-per-host 2``
(or ``podscale replay ...`` to see its collective and its share of the step)

The rows of x (the batch) and the columns of w (the layer's outputs) are sharded over
every mesh axis; y keeps w's column sharding, so every device needs every row of x: XLA
inserts an all-gather of x's rows. Each process draws its rows of x and its columns of w
from its seed ``42 + 10*process_index``; the check is y's columns of this process at
``--check-elements`` sampled rows against float64 x (those rows of every process,
gathered: never all of x) @ w (this process's columns), within a first-order rounding
bound of the k-term dot products.
"""

from __future__ import annotations

import numpy as np

from podscale import (
    Expected,
    Param,
    Program,
    UsageError,
    Work,
    Workload,
    gamma,
    gather_elements,
)


class TPMatmul(Workload):
    """column-parallel matmul: x's rows gathered (all-gather), w's columns sharded"""

    name = "tp_matmul"
    version = "1"
    variants = ("jit",)
    dtypes = ("float32",)
    params = (Param("rows", 256, "size", help="rows of x per process", unit="rows"),
              Param("k", 128, "int", help="x's columns = w's rows"),
              Param("cols", 256, "size", help="columns of w per process"))

    def check_case(self, case):
        d = case.devices_per_host
        if case.p["rows"] % d or case.p["cols"] % d:
            raise UsageError(f"tp_matmul: rows and cols per process must divide by {d} "
                             "devices per host")

    def inputs(self, ctx):
        rng = np.random.default_rng(ctx.seed)
        x = rng.standard_normal((ctx.p["rows"], ctx.p["k"]), dtype=np.float32)
        w = (rng.standard_normal((ctx.p["k"], ctx.p["cols"]), dtype=np.float32)
             / np.sqrt(ctx.p["k"])).astype(np.float32)
        return x, w

    def place(self, ctx, local):
        from jax.experimental import multihost_utils
        from jax.sharding import PartitionSpec as P

        x, w = local
        axes = ctx.axis_names
        return (multihost_utils.host_local_array_to_global_array(x, ctx.mesh, P(axes, None)),
                multihost_utils.host_local_array_to_global_array(w, ctx.mesh, P(None, axes)))

    def program(self, ctx):
        import jax
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        out = NamedSharding(ctx.mesh, P(None, ctx.axis_names))
        return Program(jax.jit(lambda a, b: a @ b, out_shardings=out))

    def output(self, ctx, out):
        """This process's columns of y, transposed: (columns, every row)."""
        from jax.experimental import multihost_utils
        from jax.sharding import PartitionSpec as P

        return np.asarray(multihost_utils.global_array_to_host_local_array(
            out, ctx.mesh, P(None, ctx.axis_names))).T

    def reference(self, ctx, local):
        x, w = local
        rows = len(x)
        at = ctx.sample(rows * ctx.process_count, chunks=ctx.process_count)  # same offsets
        xs = gather_elements(x.T[None], at[:at.size // ctx.process_count])  # in each process
        xs = xs.transpose(0, 2, 1).reshape(-1, x.shape[1])  # (sampled rows, k)
        wt = w.astype(np.float64).T
        value = wt @ xs.T  # (this process's columns, sampled rows)
        bound = gamma(ctx.p["k"] + 2, "float32") * (np.abs(wt) @ np.abs(xs.T))
        return Expected(value, bound, at)

    def work(self, case):
        rows, k, cols = case.p["rows"], case.p["k"], case.p["cols"]
        everyone = rows * case.processes
        return Work(bytes_per_process=4 * (rows * k + k * cols + everyone * cols),
                    flops_per_process=2 * everyone * k * cols,
                    bytes_per_device=4 * everyone * k, participants=case.layout.devices,
                    hosts_per_group=case.processes)


tp_matmul = TPMatmul()
