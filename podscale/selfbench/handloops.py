"""The three timing methods written by hand, with no podscale in the loop: the baselines
podscale's own ``each``, ``chain`` and ``device`` are held against (bench-self's
``methods`` stage and ``tools/accel_check.py``).

- :func:`each`: ``fn(*args).block_until_ready()`` timed with ``perf_counter``, call by call;
- :func:`chain`: nccl-tests' way: ``length`` calls back to back, one wait, the mean;
- :func:`device`: AMB's ``xprof_timing`` way: the calls under ``jax.profiler.trace``, then
  each execution's duration read from the trace's device lines with
  ``jax.profiler.ProfileData`` (the ``XLA Modules`` line on TPU and GPU; on CPU the union of
  the op events of one ``run_id``).

Each takes a jitted function and its placed arguments and returns seconds, one per call
(``chain``: one per chain).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podscale.core import xprof


def each(fn: Callable[..., Any], args: tuple, iters: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn(*args).block_until_ready()
    out = []
    for _ in range(iters):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        out.append(time.perf_counter() - start)
    return out


def chain(fn: Callable[..., Any], args: tuple, length: int, chains: int = 3) -> list[float]:
    """Per chain, its time over its length (outputs dropped as they are replaced)."""
    fn(*args).block_until_ready()
    out = []
    for _ in range(chains):
        start = time.perf_counter()
        for _ in range(length):
            y = fn(*args)
        y.block_until_ready()
        out.append((time.perf_counter() - start) / length)
    return out


def device(fn: Callable[..., Any], args: tuple, iters: int, module: str) -> list[float]:
    """Device seconds of each execution of ``module`` (e.g. ``jit_triad``) among
    ``iters`` calls traced back to back (on CPU, each waited on)."""
    import jax
    from jax.profiler import ProfileData

    fn(*args).block_until_ready()
    cpu = jax.devices()[0].platform == "cpu"
    where = tempfile.mkdtemp(prefix="hand-device-")
    with jax.profiler.trace(where):
        for _ in range(iters):
            y = fn(*args)
            if cpu:
                y.block_until_ready()
        y.block_until_ready()
    (path,) = xprof.session_files(Path(where))
    spans: list[float] = []
    runs: dict[int, list[tuple[float, float]]] = {}
    for plane in ProfileData.from_file(str(path)).planes:
        for line in plane.lines:
            for ev in line.events:
                if line.name == xprof.MODULES_LINE and ev.name.split("(")[0] == module:
                    spans.append(ev.duration_ns / 1e9)
                stats = dict(ev.stats)
                if cpu and stats.get(xprof.HLO_MODULE) == module and \
                        not ev.name.startswith("end:"):
                    runs.setdefault(stats.get(xprof.RUN_ID, 0), []).append(
                        (ev.start_ns, ev.start_ns + ev.duration_ns))
    for ops in runs.values():  # the union of one execution's op intervals
        total, end = 0.0, float("-inf")
        for a, b in sorted(ops):
            total += max(0.0, b - max(a, end))
            end = max(end, b)
        spans.append(total / 1e9)
    return spans[-iters:]


def op_for(case: Any) -> tuple[Callable[..., Any], tuple]:
    """The case's op as a user would write it by hand, unjitted (its name makes its jitted
    module ``jit_<name>``), and its arguments on the first device: dot, stream (each op),
    one-device psum, matmul."""
    import jax.numpy as jnp
    import numpy as np

    n, rng = case.p["size"], np.random.default_rng(42)
    if case.workload == "dot":
        v = jnp.asarray(rng.standard_normal((2, n, 3), dtype=np.float32))
        return _dot, (v[0], v[1])
    if case.workload == "stream":
        a = jnp.asarray(rng.random((n // 1024, 1024), dtype=np.float32))
        fn = STREAM[case.p["op"]]
        return fn, (a,) if case.p["op"] in ("read", "copy", "scale") else (a, a[::-1] + 0)
    if case.workload == "psum":
        return _psum, (jnp.ones((1, n), jnp.float32),)
    m = jnp.asarray(rng.integers(-2, 3, (2, n, n)), jnp.dtype(case.dtype))
    into_input = case.p.get("out_dtype") == "input"
    return matmul_input if into_input else matmul, (m[0], m[1])


def _dot(a: Any, b: Any) -> Any:
    import jax
    import jax.numpy as jnp

    return jax.vmap(jnp.vdot)(a, b)


def read(a: Any) -> Any:
    import jax.numpy as jnp

    return jnp.sum(a)


def copy(a: Any) -> Any:
    return 2 * a


def scale(a: Any) -> Any:
    return 3 * a


def add(a: Any, b: Any) -> Any:
    return a + b


def triad(a: Any, b: Any) -> Any:
    return a + 3 * b


STREAM: dict[str, Callable[..., Any]] = {"read": read, "copy": copy, "scale": scale,
                                         "add": add, "triad": triad}


def _psum(x: Any) -> Any:
    import jax
    import numpy as np
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    return jax.shard_map(lambda v: jax.lax.psum(v, "i"), mesh=mesh, in_specs=P("i"),
                         out_specs=P("i"))(x)


def matmul(a: Any, b: Any) -> Any:
    """The product into the accumulator's dtype (float32; int32 for int8)."""
    import jax.numpy as jnp

    wide = jnp.int32 if a.dtype == jnp.int8 else jnp.float32
    return jnp.matmul(a, b, preferred_element_type=wide)


def matmul_input(a: Any, b: Any) -> Any:
    """The product written in the inputs' dtype, as AMB's matmul writes it."""
    import jax.numpy as jnp

    return jnp.matmul(a, b)
