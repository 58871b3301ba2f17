"""Comparing a case's outputs with their reference: shape and dtype first, then every
compared element against its bound; a non-finite output, expected value or bound is wrong,
a bound too loose to tell is unchecked, an element outside the sample is unsampled — none
of them is ever OK."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from podscale.core.errors import UsageError
from podscale.core.workload import Expected


class OutputMismatch(UsageError):
    """An output whose shape or dtype is not the reference's (a workload bug)."""


@dataclass(frozen=True)
class Check:
    """One comparison of outputs with their reference. ``unchecked``: compared elements
    whose bound cannot tell a wrong value (it is infinite, or so loose that a zero output
    would pass); ``unsampled``: elements outside the compared sample. Neither is ever
    counted OK. ``max_error``: the largest |error| / bound (for exact elements,
    |error| / (u·|expected|): how many half-ulps off), finite for finite outputs, of the
    elements not accepted as ``lowered`` (equal to the reference's lowered-precision
    value, where it has one)."""

    checked: int
    wrong: int
    max_error: float
    result: float  # sum of this process's outputs (a fingerprint)
    unchecked: int = 0
    exact: int = 0  # elements whose bound is 0: checked for equality
    unsampled: int = 0
    lowered: int = 0


#: output dtypes numpy compares with float64 values exactly, element by element, with no
#: float64 copy of the outputs (an exact pass over 16 x 256K float32 values: one
#: temporary of booleans, not 32 MB)
NATIVE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _conform(got: np.ndarray, expected: Expected, dtype: str) -> tuple[np.ndarray, ...]:
    """(compared outputs, in their own dtype where numpy compares it with float64
    exactly, else as float64; value; bound) after the shape and dtype comparison."""
    want = expected.dtype or dtype
    have = str(got.dtype)
    value = np.asarray(expected.value, np.float64)
    shape = value.shape
    if expected.positions is not None:
        positions = np.asarray(expected.positions)
        ok = got.ndim == value.ndim and got.shape[:-1] == shape[:-1] and \
            shape[-1] == positions.size and (positions.size == 0 or (
                0 <= positions.min() and positions.max() < got.shape[-1]))
        full = (*got.shape[:-1], "...") if got.ndim else got.shape
    else:
        ok, full = got.shape == shape, shape
    if have != want or not ok:
        raise OutputMismatch(f"the output is {have} {tuple(got.shape)} where the reference "
                             f"is {want} {tuple(full)}")
    if expected.positions is not None:
        got = got[..., np.asarray(expected.positions)]
    if got.dtype not in NATIVE:  # bfloat16 and other ml_dtypes: as float64
        got = got.astype(np.float64)
    return got, value, np.broadcast_to(expected.bound, shape)


def _lowered(got: np.ndarray, value: np.ndarray, expected: Expected) -> np.ndarray | bool:
    """Where an output is the reference's lowered-precision value and not its own (False
    where the reference has none)."""
    if expected.lowered is None:
        return False
    return (got == np.broadcast_to(np.asarray(expected.lowered, np.float64), value.shape)) \
        & (got != value)


def check(got: np.ndarray, expected: Expected, dtype: str = "float32") -> Check:
    """Compare outputs with the reference element by element: shape and dtype first
    (:class:`OutputMismatch`), then values; NaN or inf output is wrong, and so is an element
    whose expected value or bound is not finite (a broken reference never passes)."""
    from podscale.core.bounds import UNIT_ROUNDOFF

    raw = np.asarray(got)
    total = int(raw.size)
    got, value, bound = _conform(raw, expected, dtype)
    if not np.any(expected.bound) and np.isfinite(value).all():  # every bound 0 (NaN is not)
        return _equal(raw, got, value, dtype, total, expected)
    got = got.astype(np.float64, copy=False)
    finite = np.isfinite(got)
    sound = np.isfinite(value) & ~np.isnan(bound)
    low = _lowered(got, value, expected)
    err = np.abs(np.where(finite, got, 0.0) - np.where(sound, value, 0.0))
    if expected.lowered_ok:
        err = np.where(low, 0.0, err)
    wrong = ~finite | ~sound | (err > bound)
    loose = ~np.isfinite(bound) | ((bound > 0) & (bound >= np.abs(value)))
    scale = np.where(bound > 0, bound, UNIT_ROUNDOFF.get(dtype, 2.0**-24) * np.abs(value))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / np.maximum(scale, np.finfo(np.float64).tiny))
    ratio = np.where(np.isfinite(bound) & sound, ratio, 0.0)
    ok = bool(finite.all() and sound.all())
    return Check(checked=int(got.size), wrong=int(np.count_nonzero(wrong)),
                 max_error=float(np.max(ratio, initial=0.0)) if ok else math.inf,
                 result=float(np.sum(raw, dtype=np.float64)) if np.isfinite(raw).all()
                 else float("nan"),
                 unchecked=int(np.count_nonzero(loose & ~wrong)),
                 exact=int(np.count_nonzero((bound == 0) & sound)),
                 unsampled=total - int(got.size), lowered=int(np.count_nonzero(low)))


def _equal(raw: np.ndarray, got: np.ndarray, value: np.ndarray, dtype: str,
           total: int, expected: Expected) -> Check:
    """:func:`check` where every bound is 0 and every expected value finite (the exact
    pass): an element is wrong unless it equals its expected value (NaN never does), with
    two temporaries rather than a dozen; ``max_error`` in half-ulps of the wrong ones."""
    from podscale.core.bounds import UNIT_ROUNDOFF

    off = got != value
    low = _lowered(got, value, expected)
    lowered = int(np.count_nonzero(low))
    if expected.lowered_ok and lowered:
        off &= np.logical_not(low)
    wrong = int(np.count_nonzero(off))
    finite = bool(np.isfinite(got[off]).all()) if wrong else True
    max_error = 0.0
    if wrong and finite:
        u = UNIT_ROUNDOFF.get(dtype, 2.0**-24)
        err = np.abs(got[off] - value[off])
        max_error = float(np.max(err / np.maximum(u * np.abs(value[off]),
                                                  np.finfo(np.float64).tiny)))
    fingerprint = float(np.sum(raw, dtype=np.float64))
    return Check(checked=int(got.size), wrong=wrong,
                 max_error=max_error if finite else math.inf,
                 result=fingerprint if math.isfinite(fingerprint) else float("nan"),
                 exact=int(got.size), unsampled=total - int(got.size), lowered=lowered)
