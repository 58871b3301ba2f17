"""The exact check of a collective in closed form: the integer (or dense) inputs of each
rank and the output each rank must hold, computed where it is needed, with no
communication and O(output) memory, at any number of ranks.

A collective declares its rule (``Collective.exact_rule``):

========================  ===================================================  ===========
rule                      rank ``r``'s output (``m`` elements in, ``c = m/n``)  inputs
========================  ===================================================  ===========
``sum``, ``max``, ``min`` the op over the group at every position               sparse
``reduce_scatter``        the group's sum at positions ``r*c .. r*c + c - 1``    sparse
``all_gather``            every rank's buffer, in rank order                     dense
``all_to_all``            chunk ``r`` of every rank, in rank order               dense
``permute``               the buffer of the rank that sends to ``r``, else 0     dense
``broadcast``             rank 0's buffer                                        dense
========================  ===================================================  ===========

Sparse inputs are :func:`~podscale.core.patterns.exact_pattern` (a few signed
contributors per element, every partial sum exact), dense ones
:func:`~podscale.core.patterns.dense_pattern` (a value at every rank and position).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from podscale.core.patterns import dense_pattern, dense_rows, exact_pattern, reduce_pattern

REDUCTIONS = ("sum", "max", "min", "reduce_scatter")
MOVEMENTS = ("all_gather", "all_to_all", "permute", "broadcast")
RULES = REDUCTIONS + MOVEMENTS


def rule_inputs(rule: str, ranks: np.ndarray, n: int, m: int, dtype: str) -> np.ndarray:
    """Inputs (float64, exact in ``dtype``) of shape (len(ranks), m) for ``ranks`` of a
    group of ``n``."""
    if rule in REDUCTIONS:
        return exact_pattern(ranks, m, n, dtype)
    return dense_pattern(np.asarray(ranks)[:, None], np.arange(m)[None, :], dtype)


def rule_output(rule: str, rank: int, n: int, m: int, dtype: str,
                perm: Sequence[tuple[int, int]] = ()) -> np.ndarray:
    """The output rank ``rank`` of a group of ``n`` must hold (float64)."""
    if rule in ("sum", "max", "min"):
        return reduce_pattern(rule, np.arange(m), n, dtype)
    c = m // n
    if rule == "reduce_scatter":
        return reduce_pattern("sum", rank * c + np.arange(c), n, dtype)
    if rule == "all_gather":
        return dense_rows(n, m, dtype).reshape(-1)
    if rule == "all_to_all":
        return dense_pattern(np.arange(n)[:, None], rank * c + np.arange(c)[None, :],
                             dtype).reshape(-1)
    if rule == "broadcast":
        return dense_pattern(np.zeros(m, np.int64), np.arange(m), dtype)
    if rule == "permute":
        source = [s for s, t in perm if t == rank]
        if not source:
            return np.zeros(m)
        return dense_pattern(np.full(m, source[0]), np.arange(m), dtype)
    raise ValueError(f"unknown exact rule {rule!r} (known: {', '.join(RULES)})")


def rule_outputs(rule: str, ranks: np.ndarray, n: int, m: int, dtype: str,
                 perm: Sequence[tuple[int, int]] = ()) -> np.ndarray:
    """:func:`rule_output` of each of ``ranks``, stacked (one rank's output is computed
    once however many of ``ranks`` share it, and one output every rank shares is a
    read-only broadcast view, not copies)."""
    cache: dict[int, np.ndarray] = {}
    rows = []
    for r in (int(r) for r in ranks):
        key = r if rule in ("reduce_scatter", "all_to_all", "permute") else -1
        if key not in cache:
            cache[key] = rule_output(rule, r, n, m, dtype, perm)
        rows.append(cache[key])
    if len(cache) == 1:
        return np.broadcast_to(rows[0], (len(rows), *rows[0].shape))
    return np.stack(rows)
