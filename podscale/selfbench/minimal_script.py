"""The simplest honest baseline: a hand-written multi-process JAX timing script.

What a user writes without podscale (no podscale import, on purpose): join the job over
127.0.0.1, build a (hosts, local) mesh, jit a shard_map'd ``psum`` (or the vmap(vdot) of
``dot``) of ``size`` float32 values per process, and per iteration meet the other
processes (``multihost_utils.sync_global_devices``), then time
``f(x).block_until_ready()`` with ``time.perf_counter``. Prints one JSON line: this
process's per-iteration seconds.

    python minimal_script.py PROCESS NPROC PORT DEVICES OP SIZE ITERS WARMUP
"""

import json
import sys
import time


def main(argv: list[str]) -> None:
    process, nproc, port, devices = (int(a) for a in argv[:4])
    op, size, iters, warmup = argv[4], int(argv[5]), int(argv[6]), int(argv[7])

    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", devices)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=nproc, process_id=process)

    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()).reshape(nproc, devices), ("hosts", "local"))
    spec = P(("hosts", "local"))
    rng = np.random.default_rng(42 + 10 * process)
    if op == "psum":
        local: tuple[np.ndarray, ...] = (
            rng.standard_normal((devices, size // devices), dtype=np.float32),)

        def body(*xs: jax.Array) -> jax.Array:
            return jax.lax.psum(xs[0], ("hosts", "local"))
    else:  # dot: rows of 3-vectors
        v = rng.standard_normal((2 * size, 3), dtype=np.float32)
        shape = (devices, size // devices, 3)
        local = (v[:size].reshape(shape), v[size:].reshape(shape))

        def body(*xs: jax.Array) -> jax.Array:
            return jax.vmap(jax.numpy.vdot)(xs[0][0], xs[1][0])[None]

    args = [multihost_utils.host_local_array_to_global_array(a, mesh, spec) for a in local]
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec))
    times = []
    for i in range(warmup + iters):
        multihost_utils.sync_global_devices("step")
        start = time.perf_counter()
        f(*args).block_until_ready()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    print(json.dumps({"process": process, "seconds": times}), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
