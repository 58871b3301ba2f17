"""Opt-in helpers for workloads: per-process inputs, rounding-error bounds, and
:class:`Mapped`, which runs a per-device ``body`` in two API variants.

- ``pmap``: legacy ``jax.pmap`` over this process's devices; collectives name the pmap
  axis, which spans every device of the job (so only "all axes" can be expressed).
- ``shard_map``: ``jax.jit(jax.shard_map(...))`` over the case's mesh with its named axes
  (``hosts``, ``local``, or a 3-D split); collectives may name any subset of the axes.

Inputs are host-local arrays of shape ``(local_devices, ...)``: device ``d`` of this
process gets row ``d``. The body sees one device's block (leading axis removed) and the
axis name(s) to pass to ``jax.lax`` collectives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from podscale.core.bounds import UNIT_ROUNDOFF, gamma, sum_bound  # noqa: F401 (re-exported)
from podscale.core.case import Case
from podscale.core.errors import UsageError
from podscale.core.workload import Context, Step, Workload, seed_for

PMAP_AXIS = "p"


def normals(process: int, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals (float32) from the process's seed ``42 + 10*process``. numpy's
    generator, not ``jax.random``: no kernel to compile per shape (``podscale seed`` runs
    the reference listing with ``jax.random`` as written)."""
    return np.random.default_rng(seed_for(process)).standard_normal(shape, dtype=np.float32)


def cast(a: np.ndarray, dtype: str) -> np.ndarray:
    import jax.numpy as jnp

    return a.astype(jnp.dtype(dtype))


def exact(a: np.ndarray) -> np.ndarray:
    """float64 copy of inputs already rounded to their dtype (exact)."""
    return np.asarray(a).astype(np.float64)


def gather_processes(x: np.ndarray) -> np.ndarray:
    """Every process's host-local array, stacked on a new leading axis (all processes
    must call it together)."""
    from jax.experimental import multihost_utils

    out = np.asarray(multihost_utils.process_allgather(np.asarray(x, np.float32)))
    return out.reshape((-1, *np.shape(x)))


class Mapped(Workload):
    """A workload written as a per-device ``body(axes, *blocks)``; see the module doc."""

    variants = ("pmap", "shard_map")
    #: name of the parameter that must divide evenly over local devices (None: none)
    split_param: str | None = "size"

    def body(self, axes: Any, *blocks: Any) -> Any:
        raise NotImplementedError

    def reduce_axes(self, case: Case) -> tuple[str, ...]:
        """The mesh axes the body's collectives run over (default: all of them)."""
        return case.layout.axis_names

    def validate(self, case: Case) -> None:
        n = case.p.get(self.split_param) if self.split_param else None
        if n is not None and n % case.devices_per_host:
            raise UsageError(f"{self.name}: {self.split_param} {n} is not divisible by "
                             f"{case.devices_per_host} devices per host")
        problem = self.unsupported(case)
        if problem:
            raise UsageError(problem)

    def unsupported(self, case: Case) -> str | None:
        if case.variant == "pmap" and tuple(self.reduce_axes(case)) != case.layout.axis_names:
            return (f"{self.name}: pmap can only run collectives over all devices, "
                    f"not over {','.join(self.reduce_axes(case))} (use shard_map)")
        return None

    def step(self, ctx: Context, local: Sequence[np.ndarray]) -> Step:
        import jax
        from jax.experimental import multihost_utils
        from jax.sharding import Mesh, NamedSharding
        from jax.sharding import PartitionSpec as P

        body = self.body
        if ctx.case.variant == "pmap":
            here = [d for d in ctx.devices if d.process_index == ctx.process]
            sharding = NamedSharding(Mesh(np.array(here), (PMAP_AXIS,)), P(PMAP_AXIS))
            args = tuple(jax.device_put(a, sharding) for a in local)
            fn = jax.pmap(lambda *b: body(PMAP_AXIS, *b), axis_name=PMAP_AXIS,
                          devices=ctx.devices)
            return Step(fn, args, aot=False)
        spec = P(ctx.axis_names)
        axes = tuple(self.reduce_axes(ctx.case))
        args = tuple(multihost_utils.host_local_array_to_global_array(a, ctx.mesh, spec)
                     for a in local)

        def blockwise(*blocks: Any) -> Any:
            return body(axes, *(b[0] for b in blocks))[None]

        fn = jax.jit(jax.shard_map(blockwise, mesh=ctx.mesh, in_specs=spec, out_specs=spec))
        return Step(fn, args)

    def output(self, ctx: Context, out: Any) -> np.ndarray:
        if ctx.case.variant == "pmap":
            return np.asarray(out)
        from jax.experimental import multihost_utils
        from jax.sharding import PartitionSpec as P

        return np.asarray(multihost_utils.global_array_to_host_local_array(
            out, ctx.mesh, P(ctx.axis_names)))
