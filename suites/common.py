"""Shared machinery for the workloads: inputs, the two API variants, checks.

A workload gives a per-device ``body`` that uses the mapped axis ``"p"``, host-local
inputs of shape ``(local_devices, ...)`` and a float64 reference. Both variants run
the same body: legacy ``jax.pmap`` over local shards, and ``jax.jit(jax.shard_map)``
over a one-axis :class:`jax.sharding.Mesh` of all global devices.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

AXIS = "p"
EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-7, "float16": 2.0**-10}


def seed_for(process: int) -> int:
    """The reference workload's per-process seed."""
    return 42 + 10 * process


class Workload(Protocol):
    def inputs(self, case, process: int) -> tuple[np.ndarray, ...]: ...
    def body(self, *blocks): ...
    def reference(self, case, local: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        """(expected float64, error scale, summands per output element)."""
        ...
    def work(self, case) -> tuple[int, int, int]:
        """(bytes per process, flops per process, bytes per device)."""
        ...


@dataclass(frozen=True)
class Check:
    checked: int
    wrong: int
    max_error: float
    result: float


@dataclass
class Prepared:
    """A case ready to run on this process: inputs placed, function built, reference known."""

    case: Any
    fn: Callable
    args: tuple
    mesh: Any
    expected: np.ndarray
    scale: np.ndarray
    terms: int
    bytes_per_process: int
    flops_per_process: int
    bytes_per_device: int
    compile_seconds: float = 0.0

    def compile(self) -> Callable[[], Any]:
        """Compile (timed into ``compile_seconds``) and return the blocking step. jit:
        ahead-of-time lower+compile; pmap's AOT executables reject host-local arrays in
        multi-process runs, so its compile sample is the first call."""
        start = time.perf_counter()
        if self.case.variant == "pmap":
            self.fn(*self.args).block_until_ready()
            compiled = self.fn
        else:
            compiled = self.fn.lower(*self.args).compile()
        self.compile_seconds = time.perf_counter() - start
        args = self.args
        return lambda: compiled(*args).block_until_ready()

    def check(self, out) -> Check:
        """Compare this process's outputs with the float64 reference."""
        got = _host_local(self.case, out, self.mesh).astype(np.float64)
        err = np.abs(got - self.expected)
        tol = 4 * EPS[self.case.dtype] * max(self.terms, 1) * self.scale + 1e-30
        return Check(
            checked=int(got.size),
            wrong=int(np.count_nonzero(~(err <= tol))),
            max_error=float(np.max(err / np.maximum(self.scale, 1e-30))) if got.size else 0.0,
            result=float(np.sum(got)),
        )


def normals(process: int, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals (float32) from the process's seed ``42 + 10*process``. numpy's
    generator, not ``jax.random``: no kernel to compile per shape (``podscale seed`` runs
    the reference listing with ``jax.random`` as written)."""
    return np.random.default_rng(seed_for(process)).standard_normal(shape, dtype=np.float32)


def cast(a: np.ndarray, dtype: str) -> np.ndarray:
    import jax.numpy as jnp

    return a.astype(jnp.dtype(dtype))


def case_devices(case) -> list:
    """The global devices a case runs on: the first ``devices_per_host`` local devices of
    every process, so one set of processes can serve every smaller layout."""
    import jax

    if jax.process_count() != case.hosts:
        raise ValueError(f"case {case.id} needs {case.hosts} processes, "
                         f"this job has {jax.process_count()}")
    by_process: dict[int, list] = {}
    for d in sorted(jax.devices(), key=lambda d: (d.process_index, d.id)):
        by_process.setdefault(d.process_index, []).append(d)
    have = min(len(v) for v in by_process.values())
    if have < case.devices_per_host:
        raise ValueError(f"case {case.id} needs {case.devices_per_host} devices per process, "
                         f"processes have {have}")
    return [d for p in sorted(by_process) for d in by_process[p][: case.devices_per_host]]


def _place(case, local: tuple[np.ndarray, ...], devices: list):
    """Put host-local inputs on devices the way the variant expects them."""
    import jax
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    if case.variant == "pmap":  # host-local arrays over this process's devices
        here = [d for d in devices if d.process_index == jax.process_index()]
        sharding = NamedSharding(Mesh(np.array(here), (AXIS,)), P(AXIS))
        return None, tuple(jax.device_put(a, sharding) for a in local)
    mesh = Mesh(np.array(devices), (AXIS,))
    return mesh, tuple(
        multihost_utils.host_local_array_to_global_array(a, mesh, P(AXIS)) for a in local
    )


def _function(case, body: Callable, mesh, devices: list):
    import jax
    from jax.sharding import PartitionSpec as P

    if case.variant == "pmap":
        return jax.pmap(body, axis_name=AXIS, devices=devices)

    def blockwise(*blocks):
        return body(*(b[0] for b in blocks))[None]

    return jax.jit(jax.shard_map(blockwise, mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS)))


def _host_local(case, out, mesh) -> np.ndarray:
    if case.variant == "pmap":
        return np.asarray(out)
    from jax.experimental import multihost_utils
    from jax.sharding import PartitionSpec as P

    return np.asarray(multihost_utils.global_array_to_host_local_array(out, mesh, P(AXIS)))


def prepare_case(wl: Workload, case, rt) -> Prepared:
    devices = case_devices(case)
    local = wl.inputs(case, rt.process)
    mesh, args = _place(case, local, devices)
    expected, scale, terms = wl.reference(case, local)
    return Prepared(case, _function(case, wl.body, mesh, devices), args, mesh, expected, scale,
                    terms, *wl.work(case))
