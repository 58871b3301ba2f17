"""``matmul``: the compute ceiling — a matrix product on every local device.

Each local device multiplies its own ``A`` (M x K) by its own ``B`` (K x N) and keeps the
float32 product (``preferred_element_type``: a bfloat16 product accumulates in float32, as
the MXU and tensor cores do); no communication. ``size`` N makes it square (N x N x N);
``shape`` gives M x K x N instead. ``work`` counts 2·M·K·N flops per device, so its
GFLOP/s is the figure to hold a step's FLOP/s against, and its bytes the three matrices.

The inputs are small integers (-2..2), which every dtype holds: each product element is
an integer sum of at most 4·K in magnitude, exact in float32, so the float check compares
its sample (a few whole columns, ``--check-elements`` elements per device) for equality
against numpy. The exact pass multiplies by a B whose product is known in closed form —
ones plus a shifted identity plus twice another: ``C[i, j] = sum(A[i]) + A[i, j mod K] +
2 A[i, (j + 1) mod K]`` — and compares every element.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from podscale import ExactCheck, Expected, Mapped, Param, UsageError, Work, cast, seed_for

#: the inputs' values: integers in [-LIMIT, LIMIT]
LIMIT = 2


def dims(case) -> tuple[int, int, int]:
    """(M, K, N) of a case: ``shape`` MxKxN, or ``size`` cubed."""
    shape = str(case.p["shape"]).lower()
    if shape == "square":
        n = case.p["size"]
        return n, n, n
    parts = shape.split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise UsageError(f"matmul: bad shape {case.p['shape']!r}: MxKxN, e.g. 4096x8192x1024, "
                         "or square (size cubed)")
    m, k, n = (int(p) for p in parts)
    return m, k, n


class Matmul(Mapped):
    """compute ceiling: each local device's A (MxK) @ B (KxN), float32 accumulation"""

    name = "matmul"
    version = "1"
    split_param = None  # every device multiplies matrices of the full shape
    params = (Param("size", 4096, "size", help="N of a square N x N x N product per device",
                    unit="rows"),
              Param("shape", "square", "str", help="MxKxN per device instead of size "
                                                   "(square: size cubed)"))

    def cases(self, case):
        """One case per distinct product: a shaped one's ``size`` is its N, so ``--sizes``
        given beside a shape does not repeat the product under other labels."""
        if str(case.p["shape"]).lower() == "square":
            return [case]
        n = dims(case)[2]
        return [replace(case, params=tuple((k, n if k == "size" else v)
                                           for k, v in case.params))]

    def check_case(self, case):
        m, k, n = dims(case)
        if 2 * LIMIT * LIMIT * k > 2 ** 24:
            raise UsageError(f"matmul: K = {k} is too long for exact float32 sums of the "
                             "inputs (at most 2**21)")

    def inputs(self, ctx):
        m, k, n = dims(ctx.case)
        rng = np.random.default_rng(seed_for(ctx.process))
        d = ctx.local_devices
        return tuple(cast(rng.integers(-LIMIT, LIMIT + 1, size=(d, *shape), dtype=np.int8)
                          .astype(np.float32), ctx.case.dtype) for shape in ((m, k), (k, n)))

    def body(self, case, axes, a, b):
        import jax.numpy as jnp

        return jnp.matmul(a, b, preferred_element_type=jnp.float32)

    def reference(self, ctx, local):
        """A few whole columns of each device's product (``--check-elements`` elements,
        at least one column), in float64: integers, so exact."""
        a, b = (np.asarray(x, np.float64) for x in local)
        m, _, n = dims(ctx.case)
        cols = max(1, min(n, (ctx.case.settings.check_elements or m * n) // m))
        where = np.sort(np.random.default_rng(ctx.case_seed).choice(n, cols, replace=False))
        value = np.matmul(a, b[:, :, where])
        return Expected(value, 0.0, positions=None if cols == n else where, dtype="float32")

    def exact_check(self, ctx):
        m, k, n = dims(ctx.case)
        d = ctx.local_devices
        rng = np.random.default_rng(seed_for(ctx.process) + 1)
        a = rng.integers(-LIMIT, LIMIT + 1, size=(d, m, k), dtype=np.int8).astype(np.float64)
        j = np.arange(n)
        b = np.ones((k, n))
        b[j % k, j] += 1
        b[(j + 1) % k, j] += 2
        value = a.sum(axis=-1, keepdims=True) + a[:, :, j % k] + 2 * a[:, :, (j + 1) % k]
        inputs = (cast(a.astype(np.float32), ctx.case.dtype),
                  cast(np.broadcast_to(b, (d, k, n)).astype(np.float32), ctx.case.dtype))
        return ExactCheck(inputs, Expected(value, 0.0, dtype="float32"))

    def work(self, case):
        m, k, n = dims(case)
        d = case.devices_per_host
        per_device = (m * k + k * n) * case.itemsize + m * n * 4
        return Work(per_device * d, 2 * m * k * n * d, per_device)


matmul = Matmul()
