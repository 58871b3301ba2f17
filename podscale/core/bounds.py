"""Sound rounding-error bounds in a compute dtype (Higham's gamma_n), for correctness
checks, and the exact case: sums of small integers. A bound can become too loose to catch
anything (gamma_n is infinite once n*u >= 1: 256 terms in bfloat16); elements under such a
bound are counted unchecked, and collectives are also checked on integer inputs whose
every partial sum is exact (:mod:`podscale.core.patterns`)."""

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
    head = x.reshape(-1)[:1024]  # random inputs fail here, without a pass over x
    if not (np.all(np.isfinite(head)) and np.all(head == np.rint(head))):
        return False
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
