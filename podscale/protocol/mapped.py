"""Opt-in helpers for workloads: per-process inputs, gathering the compared elements, and
:class:`Mapped`, which runs a per-device ``body(case, axes, *blocks)`` in two API variants.

- ``pmap``: legacy ``jax.pmap`` over this process's devices; collectives name the pmap
  axis, which spans every device of the job (so only "all axes" can be expressed).
- ``shard_map``: ``jax.jit(jax.shard_map(...))`` over the case's mesh with its named axes
  (``hosts``, ``local``, or a 3-D split); collectives may name any subset of the axes.

Inputs are host-local arrays of shape ``(local_devices, ...)``: device ``d`` of this
process gets row ``d``. The body sees one device's block (leading axis removed) and the
axis name(s) to pass to ``jax.lax`` collectives.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np

from podscale.core.case import Case
from podscale.core.errors import UsageError
from podscale.core.workload import Context, Program, Workload, seed_for

PMAP_AXIS = "p"


def normals(process: int, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals (float32) from the process's seed ``42 + 10*process``. numpy's
    generator, not ``jax.random``: no kernel to compile per shape (``podscale seed`` runs
    the reference listing with ``jax.random`` as written)."""
    return np.random.default_rng(seed_for(process)).standard_normal(shape, dtype=np.float32)


def cast(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` in ``dtype`` (``float32``, ``bfloat16``, ...): ``a`` itself where it is in
    ``dtype`` already, else a copy."""
    import jax.numpy as jnp

    return a.astype(jnp.dtype(dtype), copy=False)


def exact(a: np.ndarray) -> np.ndarray:
    """float64 copy of inputs already rounded to their dtype (exact)."""
    return np.asarray(a).astype(np.float64)


def gather_processes(x: np.ndarray) -> np.ndarray:
    """Every process's host-local array, stacked on a new leading axis (all processes
    must call it together). O(processes x size) on every process: for checks, gather only
    the compared elements (:func:`gather_elements`)."""
    from jax.experimental import multihost_utils

    out = np.asarray(multihost_utils.process_allgather(np.asarray(x, np.float32)))
    return out.reshape((-1, *np.shape(x)))


def gather_elements(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Every device's elements at ``positions`` (along the last axis) as float64, shape
    (global devices, ..., len(positions)), device-major as the processes' rows: what a
    sampled reference needs, O(processes x devices x k) however large the buffers (all
    processes call it together, with the same positions: ``ctx.sample(m)``)."""
    picked = np.asarray(x)[..., np.asarray(positions)]
    if picked.dtype != np.float32:  # bfloat16 and float16 widen exactly
        picked = picked.astype(np.float32)
    gathered = gather_processes(picked)
    return gathered.reshape((-1, *picked.shape[1:])).astype(np.float64)


class Mapped(Workload):
    """A workload written as a per-device ``body(case, axes, *blocks)``; see the module doc."""

    variants = ("pmap", "shard_map")
    #: name of the parameter that must divide evenly over local devices (None: none)
    split_param: str | None = "size"

    @abc.abstractmethod
    def body(self, case: Case, axes: Any, *blocks: Any) -> Any:
        """One device's computation.

        Args: case: the case (its parameters: ``case.p``); axes: the mesh axis name(s)
        to pass to ``jax.lax`` collectives; blocks: this device's block of each input
        (the leading device axis removed).
        Returns: this device's output block."""

    def reduce_axes(self, case: Case) -> tuple[str, ...]:
        """The mesh axes the body's collectives run over (default: all of them)."""
        return case.layout.axis_names

    def check_case(self, case: Case) -> None:
        n = case.p.get(self.split_param) if self.split_param else None
        if n is not None and n % case.devices_per_host:
            raise UsageError(f"{self.name}: {self.split_param} {n} is not divisible by "
                             f"{case.devices_per_host} devices per host")

    def unsupported_case(self, case: Case) -> str | None:
        if case.variant == "pmap" and tuple(self.reduce_axes(case)) != case.layout.axis_names:
            return (f"{self.name}: pmap can only run collectives over all devices, "
                    f"not over {','.join(self.reduce_axes(case))} (use shard_map)")
        return None

    def mesh_of(self, ctx: Context) -> tuple[Any, tuple[str, ...]]:
        """The shard_map variant's mesh and the axes the body's collectives name (default:
        the case's mesh and :meth:`reduce_axes`). The inputs' leading axis is sharded over
        every axis of it, in its device order."""
        return ctx.mesh, tuple(self.reduce_axes(ctx.case))

    def place(self, ctx: Context, local: Sequence[np.ndarray]) -> tuple:
        """Each local device's row on that device; pmap: over this process's devices,
        shard_map: one global array over :meth:`mesh_of`'s mesh."""
        import jax
        from jax.sharding import Mesh, NamedSharding
        from jax.sharding import PartitionSpec as P

        mine = _mine(ctx)
        if ctx.case.variant == "pmap":
            sharding = NamedSharding(Mesh(np.array(mine), (PMAP_AXIS,)), P(PMAP_AXIS))
            return tuple(jax.device_put(a, sharding) for a in local)
        mesh, _ = self.mesh_of(ctx)
        sharding = NamedSharding(mesh, P(mesh.axis_names))
        return tuple(jax.make_array_from_single_device_arrays(
            (len(ctx.devices), *a.shape[1:]), sharding,
            [jax.device_put(a[i:i + 1], dev) for i, dev in enumerate(mine)]) for a in local)

    def program(self, ctx: Context) -> Program:
        import jax
        from jax.sharding import PartitionSpec as P

        body, case = self.body, ctx.case
        if case.variant == "pmap":
            return Program(jax.pmap(lambda *b: body(case, PMAP_AXIS, *b), axis_name=PMAP_AXIS,
                                    devices=ctx.devices), aot=False)
        mesh, axes = self.mesh_of(ctx)
        spec = P(mesh.axis_names)

        def blockwise(*blocks: Any) -> Any:
            return body(case, axes, *(b[0] for b in blocks))[None]

        return Program(jax.jit(jax.shard_map(blockwise, mesh=mesh, in_specs=spec,
                                             out_specs=spec)))

    def output(self, ctx: Context, out: Any) -> np.ndarray:
        """This process's devices' output blocks, in local device order."""
        if ctx.case.variant == "pmap":
            return np.asarray(out)
        shards = {s.device: np.asarray(s.data) for s in out.addressable_shards}
        mine = _mine(ctx)
        if len(mine) == 1:  # the one block as it is, not a copy
            return shards[mine[0]]
        return np.concatenate([shards[dev] for dev in mine])


def _mine(ctx: Context) -> list:
    """This process's devices of the case, in local order (``ctx.devices`` is
    process-major)."""
    return [d for d in ctx.devices if d.process_index == ctx.process]
