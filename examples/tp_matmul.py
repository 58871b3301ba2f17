"""A user workload: a tensor-parallel (column-parallel) matmul, y = x @ w.

``podscale run examples/tp_matmul.py:tp_matmul --hosts 2 --devices-per-host 2``
(or ``podscale replay ...`` to see its collective and its share of the step)

The rows of x (the batch) and the columns of w (the layer's outputs) are sharded over
every mesh axis; y keeps w's column sharding, so every device needs every row of x: XLA
inserts an all-gather of x's rows. Each process draws its rows of x and its columns of w
from its seed ``42 + 10*process_index``; the check is y's columns of this process against
float64 x (every process's rows, gathered) @ w (this process's columns), within a
first-order rounding bound of the k-term dot products.
"""

from __future__ import annotations

import numpy as np

from podscale import Expected, Param, Step, UsageError, Work, Workload, gamma, gather_processes


class TPMatmul(Workload):
    """column-parallel matmul: x's rows gathered (all-gather), w's columns sharded"""

    name = "tp_matmul"
    version = "1"
    variants = ("jit",)
    dtypes = ("float32",)
    params = (Param("rows", 256, "size", help="rows of x per process", unit="rows"),
              Param("k", 128, "int", help="x's columns = w's rows"),
              Param("cols", 256, "size", help="columns of w per process"))

    def validate(self, case):
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

    def step(self, ctx, local):
        import jax
        from jax.experimental import multihost_utils
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        x, w = local
        axes = ctx.axis_names
        gx = multihost_utils.host_local_array_to_global_array(x, ctx.mesh, P(axes, None))
        gw = multihost_utils.host_local_array_to_global_array(w, ctx.mesh, P(None, axes))
        fn = jax.jit(lambda a, b: a @ b, out_shardings=NamedSharding(ctx.mesh, P(None, axes)))
        return Step(fn, (gx, gw))

    def output(self, ctx, out):
        from jax.experimental import multihost_utils
        from jax.sharding import PartitionSpec as P

        return np.asarray(multihost_utils.global_array_to_host_local_array(
            out, ctx.mesh, P(None, ctx.axis_names)))

    def reference(self, ctx, local):
        x, w = local
        xs = gather_processes(x).reshape(-1, x.shape[1]).astype(np.float64)
        value = xs @ w.astype(np.float64)
        bound = gamma(ctx.p["k"] + 2, "float32") * (np.abs(xs) @ np.abs(w.astype(np.float64)))
        return Expected(value, bound)

    def work(self, case):
        rows, k, cols = case.p["rows"], case.p["k"], case.p["cols"]
        everyone = rows * case.hosts
        return Work(bytes_per_process=4 * (rows * k + k * cols + everyone * cols),
                    flops_per_process=2 * everyone * k * cols,
                    bytes_per_device=4 * everyone * k, participants=case.layout.devices,
                    hosts_per_group=case.hosts)


tp_matmul = TPMatmul()
