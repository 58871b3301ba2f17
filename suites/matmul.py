"""``matmul``: the compute ceiling — a matrix product on every local device.

Each local device multiplies its own ``A`` (M x K) by its own ``B`` (K x N); no
communication. ``size`` N makes it square (N x N x N); ``shape`` gives M x K x N instead.
``work`` counts 2·M·K·N operations per device, so its GFLOP/s is the figure to hold a
step's FLOP/s against, and its bytes the three matrices.

``out_dtype`` is the product's dtype: ``accumulator`` (the default) keeps what the MXU and
tensor cores accumulate in — float32, int32 for int8 inputs — every element exact and the
series the same as before the parameter; ``input`` writes the inputs' dtype (a bfloat16
product rounded once to bfloat16, as AMB's matmul and most models' layers write: half the
output bytes). ``int8`` inputs accumulate in int32 (against the chip's int8 peak).

``precision`` is JAX's (``default``, ``high``, ``highest``): on a TPU ``default``
multiplies float32 inputs as bfloat16 in one pass, and on GPUs as TF32. The inputs are
small integers, which every dtype holds, so every sum is exact in float32 — except that a
float32 case's A carries ``2**-f`` above each integer (f from 9 to 12, the finest the sums
still hold exactly for its K; none where K > 8183), a fraction bfloat16 and TF32 drop. Its
float check (a sample of whole columns, ``--check-elements`` elements per device) then
tells the precision the device used: an element equal to the integer-only product is
*lowered*, counted in the record and named in the findings; it passes at ``default`` and
``high`` and is wrong at ``highest``. The exact pass multiplies integers by a B whose
product is known in closed form — ones plus a shifted identity plus twice another:
``C[i, j] = sum(A[i]) + A[i, j mod K] + 2 A[i, (j + 1) mod K]`` — and compares every
element (at ``out_dtype=input``, with the exact product rounded once to the output dtype).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from podscale import ExactCheck, Expected, Mapped, Param, UsageError, Work, cast, seed_for

#: the inputs' values: integers in [-LIMIT, LIMIT]
LIMIT = 2
#: JAX's matmul precisions
PRECISIONS = ("default", "high", "highest")
#: the product's dtype: what the device accumulates in, or the inputs' own
OUT_DTYPES = ("accumulator", "input")
#: A's integer parts where it carries a fraction: m + 2**-f rounds to m in bfloat16 and
#: TF32 for each (never a tie), and B is then in [0, LIMIT] so the losses add up
WHOLE = (-2, 1, 2)


def fraction_bits(case) -> int | None:
    """f of a float32 case's ``2**-f`` probe: the largest in 9..12 whose sums stay exact in
    float32 (|partial sum| <= K·(2 + 2**-f)·2 < 2**(24-f)); None where none does, or the
    case is not float32."""
    if case.dtype != "float32":
        return None
    k = dims(case)[1]
    fits = [f for f in range(9, 13) if k * (2 + 2.0 ** -f) * LIMIT < 2.0 ** (24 - f)]
    return max(fits) if fits else None


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


def out_dtype(case) -> str:
    """The product's dtype: the accumulator's (float32, int32 for int8), or the input's."""
    if case.p["out_dtype"] == "input":
        return case.dtype
    return "int32" if case.dtype == "int8" else "float32"


def rounded(value: np.ndarray, case) -> np.ndarray:
    """The exact product as the output holds it: rounded once to a narrower float output
    (round to nearest even, as the device writes an accumulator it rounds), else itself."""
    if out_dtype(case) in ("float32", "int32"):
        return value
    return np.asarray(cast(value, out_dtype(case)), np.float64)


class Matmul(Mapped):
    """compute ceiling: each local device's A (MxK) @ B (KxN), float32 (int32) accumulation"""

    name = "matmul"
    version = "2"
    dtypes = ("float32", "bfloat16", "float16", "int8")
    split_param = None  # every device multiplies matrices of the full shape
    params = (Param("size", 4096, "size", help="N of a square N x N x N product per device",
                    unit="rows"),
              Param("shape", "square", "str", help="MxKxN per device instead of size "
                                                   "(square: size cubed)"),
              Param("precision", "default", "str", choices=PRECISIONS,
                    help="JAX's matmul precision (default: bfloat16 on a TPU, TF32 on GPUs)"),
              Param("out_dtype", "accumulator", "str", choices=OUT_DTYPES,
                    help="the product's dtype: accumulator (float32; int32 for int8 "
                         "inputs) or input (the inputs' dtype, as AMB writes)"))

    def cases(self, case):
        """One case per distinct product: a shaped one's ``size`` is its N, so ``--sizes``
        given beside a shape does not repeat the product under other labels; a float32
        product written as its input dtype is the accumulator's (one case, not two)."""
        n = dims(case)[2] if str(case.p["shape"]).lower() != "square" else case.p["size"]
        same = case.dtype == "float32" and case.p["out_dtype"] == "input"
        return [replace(case, params=tuple(
            (k, n if k == "size" else "accumulator" if k == "out_dtype" and same else v)
            for k, v in case.params))]

    def unsupported_case(self, case):
        if case.dtype == "int8" and case.p["out_dtype"] == "input":
            return "int8 products accumulate in int32 and would overflow an int8 output"
        return None

    def check_case(self, case):
        m, k, n = dims(case)
        if 2 * LIMIT * LIMIT * k > 2 ** 24:
            raise UsageError(f"matmul: K = {k} is too long for exact float32 sums of the "
                             "inputs (at most 2**21)")

    def inputs(self, ctx):
        m, k, n = dims(ctx.case)
        rng = np.random.default_rng(seed_for(ctx.process))
        d = ctx.local_devices
        f = fraction_bits(ctx.case)
        if f is None:
            return tuple(cast(rng.integers(-LIMIT, LIMIT + 1, size=(d, *shape),
                                           dtype=np.int8).astype(np.float32), ctx.case.dtype)
                         for shape in ((m, k), (k, n)))
        a = rng.choice(np.array(WHOLE, np.float32), size=(d, m, k)) + np.float32(2.0 ** -f)
        return a, rng.integers(0, LIMIT + 1, size=(d, k, n), dtype=np.int8).astype(np.float32)

    def body(self, case, axes, a, b):
        import jax.numpy as jnp

        return jnp.matmul(a, b, preferred_element_type=jnp.dtype(out_dtype(case)),
                          precision=case.p["precision"])

    def reference(self, ctx, local):
        """A few whole columns of each device's product (``--check-elements`` elements,
        at least one column), in float64, exact; with a float32 case's probe, also the
        product of A's integer parts (the lowered one), accepted below ``highest``."""
        a, b = (np.asarray(x, np.float64) for x in local)
        m, _, n = dims(ctx.case)
        cols = max(1, min(n, (ctx.case.settings.check_elements or m * n) // m))
        where = np.sort(np.random.default_rng(ctx.case_seed).choice(n, cols, replace=False))
        value = np.matmul(a, b[:, :, where])
        lowered = None if fraction_bits(ctx.case) is None else \
            np.matmul(np.floor(a), b[:, :, where])
        return Expected(rounded(value, ctx.case), 0.0, positions=None if cols == n else where,
                        dtype=out_dtype(ctx.case), lowered=lowered,
                        lowered_ok=ctx.case.p["precision"] != "highest")

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
        return ExactCheck(inputs, Expected(rounded(value, ctx.case), 0.0,
                                           dtype=out_dtype(ctx.case)))

    def work(self, case):
        m, k, n = dims(case)
        d = case.devices_per_host
        out = 4 if case.p["out_dtype"] == "accumulator" else case.itemsize
        per_device = (m * k + k * n) * case.itemsize + m * n * out
        return Work(per_device * d, 2 * m * k * n * d, per_device)


matmul = Matmul()
