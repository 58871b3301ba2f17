"""A user workload: the gradient of a data-parallel training step of a small MLP.

``podscale run examples/mlp.py:mlp_step --hosts 2 --devices-per-host 2``

Parameters are replicated on every device, the batch is sharded over every mesh axis
(each process holds ``batch`` examples drawn from its seed ``42 + 10*process_index``),
and ``jax.jit`` with those shardings makes XLA insert the all-reduce of the gradients
across all devices. The check scales to any number of processes: each process computes
the float64 gradient of its own examples (its share of the mean), and the shares of
``--check-elements`` sampled gradient elements are gathered and summed (O(processes x k),
never the batch), within a first-order rounding bound.
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


def _params(features: int, hidden: int) -> list[np.ndarray]:
    """The same initial parameters on every process (a fixed seed)."""
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32),
            np.zeros(hidden, np.float32),
            (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
            np.zeros(1, np.float32)]


def _grads(w1, b1, w2, b2, x, y, absolute: bool = False) -> list[np.ndarray]:
    """Backpropagation of mean squared error in float64; with ``absolute``, the same
    recurrences on magnitudes (|x|, |W|, ...): the scale of each rounding error."""
    f = np.abs if absolute else (lambda a: a)
    pre = f(x) @ f(w1) + f(b1)
    h = np.abs(np.tanh(pre)) if absolute else np.tanh(pre)
    out = h @ f(w2) + f(b2)
    d_out = 2 * (np.abs(out) + np.abs(y) if absolute else out - y) / len(x)
    dh = (d_out @ f(w2).T) * (1 if absolute else (1 - h**2))
    return [f(x).T @ dh, dh.sum(axis=0), h.T @ d_out, d_out.sum(axis=0)]


class MLPStep(Workload):
    """gradient of a data-parallel MLP training step (batch sharded, XLA all-reduces grads)"""

    name = "mlp_step"
    version = "1"
    variants = ("jit",)
    dtypes = ("float32",)
    params = (Param("batch", 256, "size", help="examples per process", unit="examples"),
              Param("features", 64, "int"), Param("hidden", 128, "int"))

    def check_case(self, case):
        if case.p["batch"] % case.devices_per_host:
            raise UsageError(f"mlp_step: batch {case.p['batch']} is not divisible by "
                             f"{case.devices_per_host} devices per host")

    def inputs(self, ctx):
        rng = np.random.default_rng(ctx.seed)
        x = rng.standard_normal((ctx.p["batch"], ctx.p["features"]), dtype=np.float32)
        y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)
        return (*_params(ctx.p["features"], ctx.p["hidden"]), x, y)

    def place(self, ctx, local):
        import jax
        from jax.experimental import multihost_utils
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        replicated = NamedSharding(ctx.mesh, P())
        *params, x, y = local
        params = [jax.make_array_from_process_local_data(replicated, p) for p in params]
        batch = [multihost_utils.host_local_array_to_global_array(a, ctx.mesh,
                                                                  P(ctx.axis_names))
                 for a in (x, y)]
        return (params, *batch)

    def program(self, ctx):
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        def loss(ps, x, y):
            w1, b1, w2, b2 = ps
            out = jnp.tanh(x @ w1 + b1) @ w2 + b2
            return jnp.mean((out - y) ** 2)

        return Program(jax.jit(jax.grad(loss), out_shardings=NamedSharding(ctx.mesh, P())))

    def output(self, ctx, out):
        return np.concatenate([np.asarray(g.addressable_data(0)).ravel() for g in out])

    def reference(self, ctx, local):
        *params, x, y = (a.astype(np.float64) for a in local)
        share = len(x) / (len(x) * ctx.process_count)  # this process's part of the mean
        mine = np.stack([np.concatenate([g.ravel() * share for g in
                                         _grads(*params, x, y, absolute=a)])
                         for a in (False, True)])  # (2, parameters): value, magnitude
        at = ctx.sample(mine.shape[-1])
        gathered = gather_elements(mine[None], at)  # (processes, 2, k)
        exact, scale = gathered.sum(axis=0)
        # first-order bound: every product and sum on the longest chain (global batch,
        # features, hidden), with slack for tanh and its derivative
        chain = len(x) * ctx.process_count + ctx.p["features"] + ctx.p["hidden"] + 8
        return Expected(exact, 8 * gamma(chain, "float32") * scale, at)

    def work(self, case):
        f, h = case.p["features"], case.p["hidden"]
        nparams = f * h + 2 * h + 1
        return Work(bytes_per_process=nparams * 4,
                    flops_per_process=6 * case.p["batch"] * (f * h + h),
                    bytes_per_device=nparams * 4, participants=case.layout.devices,
                    hosts_per_group=case.processes)


mlp_step = MLPStep()
