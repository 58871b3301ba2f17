"""Sound rounding-error bounds in a compute dtype (Higham's gamma_n), for correctness
checks: garbage cannot pass them at any device count."""

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


def sum_bound(terms: int, dtype: str, abs_sum: np.ndarray, result: np.ndarray) -> np.ndarray:
    """Sound bound on |computed - exact| of a sum (or dot product) of ``terms`` exact
    inputs in ``dtype``, in any order, accumulated in ``dtype`` or wider and rounded to
    ``dtype``: gamma_terms * sum|x| + u * |result| (``abs_sum``: sum of |terms|)."""
    return gamma(max(terms, 1), dtype) * np.asarray(abs_sum) \
        + UNIT_ROUNDOFF[dtype] * np.abs(result)
