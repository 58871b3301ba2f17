"""Bandwidth formulas, as in nccl-tests (doc/PERFORMANCE.md), in one table.

``algbw = S / t`` with ``S`` the bytes each rank contributes (here: per device) and
``t`` the operation time; ``busbw = algbw * factor(n)`` for ``n`` ranks (devices),
the factor making busbw comparable with the hardware's peak link bandwidth.

Which buffer S is, per collective workload (``size`` = the per-device send buffer; each
workload's ``work()`` reports S as ``bytes_per_device``, checked in tests/test_collectives.py):

=================  ==============  =========================  ============
workload           collective      S (per rank)               bus factor
=================  ==============  =========================  ============
all_reduce         all_reduce      send = receive buffer      2(n-1)/n
all_gather         all_gather      receive buffer (n x send)  (n-1)/n
reduce_scatter     reduce_scatter  send buffer (n x recv)     (n-1)/n
all_to_all         all_to_all      send = receive buffer      (n-1)/n
ragged_all_to_all  all_to_all      bytes sent (uneven)        (n-1)/n
ppermute           sendrecv        send = receive buffer      1
broadcast          broadcast       the buffer                 1
psum               all_reduce      per-device share           2(n-1)/n
=================  ==============  =========================  ============
"""

from __future__ import annotations

from collections.abc import Callable

#: collective -> bus-bandwidth factor as a function of the number of ranks
BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def algbw(nbytes: float, seconds: float) -> float:
    """Algorithm bandwidth in bytes/s."""
    return nbytes / seconds if seconds > 0 else float("nan")


def busbw(collective: str, nbytes: float, seconds: float, ranks: int) -> float:
    """Bus bandwidth in bytes/s of ``collective`` over ``ranks`` ranks."""
    return algbw(nbytes, seconds) * BUS_FACTOR[collective](ranks)


def bus_factor(collective: str | None, ranks: int) -> float | None:
    """busbw/algbw of a workload's collective over ``ranks`` participants, or None when
    it is not a collective (or one this table does not know)."""
    if not isinstance(collective, str) or collective not in BUS_FACTOR:
        return None
    return BUS_FACTOR[collective](int(ranks))
