"""Sound rounding-error bounds in a compute dtype (Higham's gamma_n), for correctness
checks, and the exact case: sums of small integers. A bound can become too loose to catch
anything (gamma_n is infinite once n*u >= 1: 256 terms in bfloat16); elements under such a
bound are counted unchecked, and collectives are also checked on integer inputs whose
every partial sum is exact (:func:`exact_pattern`)."""

from __future__ import annotations

import math

import numpy as np

#: unit roundoff u = 2**-p (p = significand bits incl. the implicit one)
UNIT_ROUNDOFF = {"float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11}


def gamma(n: int, dtype: str) -> float:
    """Higham's gamma_n = n*u / (1 - n*u): the relative error bound of n rounded
    operations in precision u (inf where n*u >= 1: no useful worst-case bound)."""
    nu = n * UNIT_ROUNDOFF[dtype]
    return nu / (1 - nu) if nu < 1 else math.inf


def exact_limit(dtype: str) -> float:
    """2**p: every integer of magnitude up to it is exact in ``dtype``."""
    return 1.0 / UNIT_ROUNDOFF[dtype]


def integral(x: np.ndarray) -> bool:
    """Whether every element of ``x`` is an integer (inputs of an exact check)."""
    x = np.asarray(x)
    return bool(np.all(np.isfinite(x)) and np.all(x == np.rint(x)))


def sum_bound(terms: int, dtype: str, abs_sum: np.ndarray, result: np.ndarray,
              integers: bool = False) -> np.ndarray:
    """Sound bound on |computed - exact| of a sum (or dot product) of ``terms`` exact
    inputs in ``dtype``, in any order, accumulated in ``dtype`` or wider and rounded to
    ``dtype``: gamma_terms * sum|x| + u * |result| (``abs_sum``: sum of |terms|).
    ``integers``: the terms are integers, so where sum|x| <= 2**p every partial sum, in
    any order, is an integer the dtype holds: the result is exact (bound 0)."""
    abs_sum = np.asarray(abs_sum)
    bound = gamma(max(terms, 1), dtype) * abs_sum + UNIT_ROUNDOFF[dtype] * np.abs(result)
    if integers:
        bound = np.where(abs_sum <= exact_limit(dtype), 0.0, bound)
    return bound


def exact_pattern(ranks: np.ndarray, m: int, n: int, dtype: str) -> np.ndarray:
    """Integer inputs, shape (len(ranks), m), for ranks of a group of ``n``: rank r's
    element j is non-zero (1..V, hashed from r and j) only where (r + j) % K == 0, with K
    and V chosen so that no element's sum over the group's ranks exceeds 2**p in
    magnitude: every partial sum, in any order, is exact in ``dtype``. Every rank is
    non-zero somewhere when m >= K (K = 32 for 4096 ranks in bfloat16), so a missing or
    doubled rank changes the sum."""
    cap = int(exact_limit(dtype))
    k = max(1, -(-2 * n // cap))  # ceil(2n / cap): at most cap/2 ranks share an element
    share = -(-n // k)
    v = max(1, min(cap // share, 97))
    r = np.asarray(ranks, dtype=np.uint64)[:, None]
    j = np.arange(m, dtype=np.uint64)[None, :]
    on = (r + j) % np.uint64(k) == 0
    h = (r << np.uint64(32)) + j  # splitmix64's finalizer: values differ by rank and position
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        h = (h ^ (h >> np.uint64(shift))) * np.uint64(mult)
    h ^= h >> np.uint64(31)
    return np.where(on, 1 + h % np.uint64(v), 0).astype(np.float32)
