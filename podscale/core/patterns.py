"""Inputs whose every expected output is known in closed form, so an exact check costs
O(S) per process and no communication, at any number of processes.

- :func:`exact_pattern` (reductions): in a group of ``n`` ranks, element ``j`` is non-zero
  on the ranks ``r = r0 + t*K`` (``r0 = -j mod K``, ``t = 0, 1, ...``), as
  ``sign(j) * (1 + (t + h(j)) mod V) * scale(j)``: a signed integer magnitude that differs
  between consecutive contributors, times a per-element power of two (1, 2**-7, 2**-13
  and, where the exponent range allows, 2**-100), ``h``, the sign and the scale hashed
  from ``j``. ``K`` and ``V`` keep every partial sum, in any order, an exact multiple of
  that power in the dtype, so sums, maxima and minima are exact; negative and small
  results make sign- and magnitude-dependent errors visible.
- :func:`reduce_pattern`: the sum, max or min over the group at chosen positions in
  closed form (O(1) per element: the magnitudes of one element are a run of consecutive
  residues mod V).
- :func:`dense_pattern` (data movement): a value at every (rank, position), hashed from
  both (32 bits), signed and of mixed magnitude, exact in every dtype; an output that
  moved data is checked against the sources' values computed where they are needed.
"""

from __future__ import annotations

import numpy as np

from podscale.core.bounds import exact_limit

#: per-element scales 2**-e (the last only where the dtype's normal range reaches it)
SCALES = {"float32": (0, 7, 13, 100), "bfloat16": (0, 7, 13, 100), "float16": (0, 4, 9)}
BLOCK = 1 << 18  # positions per block of the patterns' temporaries


#: (shift, multiplier) rounds and the last shift of two xorshift-multiply finalizers
SPLITMIX64 = (((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)), 31)
LOWBIAS32 = (((16, 0x7FEB352D), (15, 0x846CA68B)), 16)


def _finalize(h: np.ndarray, rounds: tuple, last: int) -> np.ndarray:
    """An xorshift-multiply finalizer in place, in ``h``'s unsigned dtype: one temporary,
    not one per operation (10x faster on a 16 MiB buffer)."""
    word = h.dtype.type
    t = np.empty_like(h)
    for shift, mult in rounds:
        np.right_shift(h, word(shift), out=t)
        h ^= t
        h *= word(mult)
    np.right_shift(h, word(last), out=t)
    h ^= t
    return h


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, in place (uint64 in, uint64 out)."""
    return _finalize(h, *SPLITMIX64)


def _hash(ranks: np.ndarray, positions: np.ndarray) -> np.ndarray:
    h = np.asarray(ranks, dtype=np.uint64) << np.uint64(32)
    h = h + np.asarray(positions, dtype=np.uint64)  # broadcast: a new array, ours to mix
    h += np.uint64(0x9E3779B97F4A7C15)
    return _mix(h)


def spacing(n: int, dtype: str, contributors: int | None = None) -> tuple[int, int]:
    """(K, V) of :func:`exact_pattern` for a group of ``n``: every K-th rank adds to an
    element (at most 2**p / 2 of them, or ``contributors``), with magnitudes up to V, so
    no element's |sum| exceeds 2**p units of its scale."""
    cap = int(exact_limit(dtype))
    k = max(1, -(-2 * n // cap), -(-n // contributors) if contributors else 1)
    c = -(-n // k)
    return k, max(1, min(cap // c, 97))


def _position(positions: np.ndarray, v: int, dtype: str) -> tuple[np.ndarray, ...]:
    """(h mod V, sign, scale) of each position."""
    h = _hash(np.zeros(1, np.uint64), np.asarray(positions))
    scales = np.array([2.0**-e for e in SCALES[dtype]])
    sign = np.where((h >> np.uint64(40)) & np.uint64(1), -1.0, 1.0)
    scale = scales[((h >> np.uint64(20)) % np.uint64(len(scales))).astype(np.int64)]
    return (h % np.uint64(v)).astype(np.int64), sign, scale


def exact_pattern(ranks: np.ndarray, m: int, n: int, dtype: str,
                  contributors: int | None = None) -> np.ndarray:
    """Inputs of shape (len(ranks), m) for ranks of a group of ``n`` (float64, exact in
    ``dtype``): see the module doc. Every rank is non-zero somewhere when m >= K
    (K = 2n / 2**p rounded up: 32 for 4096 ranks in bfloat16), so a missing or doubled
    rank changes some sum. Only the non-zero entries are computed (1 in K)."""
    k, v = spacing(n, dtype, contributors)
    r = np.asarray(ranks, dtype=np.int64)
    out = np.zeros((r.size, m))
    if r.size <= m:  # a few ranks, long buffers: each rank's positions j = -r mod K + tK
        for i, rank in enumerate(r):
            for lo in range(0, m, BLOCK * k):  # bounded temporaries however large
                j = np.arange(lo + (-(rank + lo)) % k, min(m, lo + BLOCK * k), k)
                out[i, j] = _value(np.full(1, rank), j, k, v, dtype)
        return out
    rem = np.remainder(r, k)
    for c in range(m):  # many ranks, few positions (a column per position)
        rows = np.flatnonzero(rem == (-c) % k)
        out[rows, c] = _value(r[rows], np.full(1, c), k, v, dtype)
    return out


def _value(ranks: np.ndarray, positions: np.ndarray, k: int, v: int,
           dtype: str) -> np.ndarray:
    """The pattern's non-zero value of contributing ``ranks`` at ``positions`` (broadcast
    together)."""
    h, sign, scale = _position(positions, v, dtype)
    t = ranks // k + h
    t %= v
    return sign * (1.0 + t) * scale


def reduce_pattern(op: str, positions: np.ndarray, n: int, dtype: str,
                   contributors: int | None = None) -> np.ndarray:
    """``op`` (sum, max, min) over the group's ``n`` ranks of :func:`exact_pattern` at
    ``positions``, float64, in closed form."""
    positions = np.asarray(positions, dtype=np.int64)
    if positions.size > BLOCK:  # bounded temporaries however large the buffer
        return np.concatenate([reduce_pattern(op, positions[lo:lo + BLOCK], n, dtype,
                                              contributors)
                               for lo in range(0, positions.size, BLOCK)])
    k, v = spacing(n, dtype, contributors)
    j = positions
    h, sign, scale = _position(j, v, dtype)
    c = -(-(n - (-j) % k) // k)  # contributors of each element
    if op == "sum":  # sum of 1 + (t + h) mod V over t < c: whole cycles, then one run
        cycles, rest = np.divmod(c, v)
        first = np.minimum(rest, v - h)  # before the run wraps past V
        run = first * (1 + h) + first * (first - 1) // 2
        after = rest - first
        total = cycles * (v * (v + 1) // 2) + run + after * (after + 1) // 2
        return sign * total * scale
    wraps = (c >= v) | (h + c > v)
    biggest = np.where(wraps, v, h + c)
    smallest = np.where(wraps, 1, 1 + h)
    if op == "max":
        out = np.where(sign > 0, biggest, -smallest) * scale
        return np.where(c < n, np.maximum(out, 0.0), out)  # ranks that add nothing hold 0
    out = np.where(sign > 0, smallest, -biggest) * scale
    return np.where(c < n, np.minimum(out, 0.0), out)


#: the signed scales of :func:`dense_pattern`'s values: +-2**-e, e = 0..9
DENSE_SCALES = np.array([sign * 2.0**-e for sign in (1.0, -1.0) for e in range(10)])


#: the key of (rank, position) is ``rank * DENSE_STRIDE + position``: an odd stride far
#: from any power of two (no chunk or block offset maps one rank onto another), small
#: enough that ranks 0..n-1 over a long buffer share one table of keys (:func:`dense_rows`)
DENSE_STRIDE = 1021


def _hash32(keys: np.ndarray) -> np.ndarray:
    """A 32-bit hash of each key: lowbias32's finalizer, in place on ``keys`` (uint32;
    3x faster than the 64-bit :func:`_hash` and its float64 arithmetic)."""
    return _finalize(np.asarray(keys, np.uint32), *LOWBIAS32)


def dense_pattern(ranks: np.ndarray, positions: np.ndarray, dtype: str) -> np.ndarray:
    """A signed value of mixed magnitude at every (rank, position) (broadcast together),
    exact in ``dtype``: inputs for data movement, whose outputs are copies. The value is
    ``m * s``: ``m`` in 1..127 from the hash's top 16 bits, ``s`` one of ``DENSE_SCALES``
    (+-2**-e, e <= 9) from its low 16, so 2,540 values, exact in every supported dtype;
    a wrong element is caught unless it lands on the same value (1 in 2,540). Computed in
    blocks of at most ``BLOCK`` values, so the temporaries stay in cache however large
    the output (an all-gather's 16 x 256K values: 6-10x faster than in one pass)."""
    del dtype  # magnitudes 1..127 times 2**-e (e <= 9): exact in every supported dtype
    r, p = np.asarray(ranks), np.asarray(positions)
    shape = np.broadcast_shapes(r.shape, p.shape)
    out = np.empty(shape)
    _fill(out, np.broadcast_to(r, shape), np.broadcast_to(p, shape))
    return out


def dense_rows(n: int, m: int, dtype: str) -> np.ndarray:
    """:func:`dense_pattern` of ranks 0..n-1 at positions 0..m-1, shape (n, m): where the
    ranks' keys overlap (``m`` beyond ``n * DENSE_STRIDE``), each row is a window of one
    table of ``(n-1) * DENSE_STRIDE + m`` values, so an all-gather's expected output costs
    about ``m`` hashes and ``n`` copies, not ``n * m`` hashes."""
    span = (n - 1) * DENSE_STRIDE + m
    if 2 * span > n * m or span >= 1 << 32:
        return dense_pattern(np.arange(n)[:, None], np.arange(m)[None, :], dtype)
    table = dense_pattern(np.zeros(1, np.int64), np.arange(span), dtype)
    out = np.empty((n, m))
    for r in range(n):
        out[r] = table[r * DENSE_STRIDE:r * DENSE_STRIDE + m]
    return out


def _fill(out: np.ndarray, ranks: np.ndarray, positions: np.ndarray) -> None:
    """:func:`dense_pattern`'s values into ``out``, a block of leading rows at a time
    (a row larger than a block is split in turn)."""
    if out.ndim == 0:  # as an array of one: numpy's scalar arithmetic warns on overflow
        out[...] = _dense(ranks.reshape(1), positions.reshape(1))[0]
        return
    if out.size <= BLOCK:
        out[...] = _dense(ranks, positions)
        return
    row = out[0].size
    if row > BLOCK:
        for i in range(out.shape[0]):
            _fill(out[i], ranks[i], positions[i])
        return
    step = BLOCK // row
    for lo in range(0, out.shape[0], step):
        out[lo:lo + step] = _dense(ranks[lo:lo + step], positions[lo:lo + step])


def _dense(ranks: np.ndarray, positions: np.ndarray) -> np.ndarray:
    keys = np.asarray(ranks).astype(np.uint32) * np.uint32(DENSE_STRIDE)  # mod 2**32
    keys += np.asarray(positions).astype(np.uint32)
    h = _hash32(keys)
    which = (h & np.uint32(0xFFFF)) * np.uint32(len(DENSE_SCALES)) >> np.uint32(16)
    h >>= np.uint32(16)
    h *= np.uint32(127)
    h >>= np.uint32(16)  # 0..126
    value = np.take(DENSE_SCALES, which)
    value *= h + 1.0
    return value


def sample_positions(m: int, k: int, seed: int, chunks: int = 1) -> np.ndarray:
    """Sorted positions of a buffer of ``m`` the float check compares: all of them where
    ``k`` is 0 or covers ``m``; else ``k`` drawn from ``seed``, the same offsets in each of
    ``chunks`` equal chunks (so chunked collectives see whole chunks' structure)."""
    if k <= 0 or k >= m:
        return np.arange(m)
    size = m // chunks
    per = max(1, min(size, -(-k // chunks)))
    offsets = np.sort(np.random.default_rng(seed).choice(size, per, replace=False))
    return (np.arange(chunks)[:, None] * size + offsets[None, :]).reshape(-1)
