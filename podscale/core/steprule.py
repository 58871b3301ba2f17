"""Which computation is a profiled program's step, where the program does not say: the one
with the most repeated work, (calls - 1) x its compiled program's flops + bytes accessed.
A computation run once (an initialisation) repeats nothing, and two computations of a few
microseconds each are told apart by their work, not by a machine's load. One rule for the
capture windows a process opens as it runs (:mod:`podscale.attach.windows`) and the
analysis afterwards (:mod:`podscale.analysis.profile.steps`)."""

from __future__ import annotations


def weight(flops: object, bytes_accessed: object) -> float:
    """A program's weight: its flops + bytes accessed, at least 1 (1 where XLA said
    nothing: None or NaN)."""
    return max(1.0, _number(flops) + _number(bytes_accessed))


def repeated_work(calls: int, weight: float) -> float:
    """The work a computation repeated: every call after its first, times its weight."""
    return max(calls - 1, 0) * weight


def _number(value: object) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return x if x == x else 0.0
