"""The timing core: no I/O, no JAX. Clock, barrier and step are passed in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple


class Timing(NamedTuple):
    phase: str  # "warmup" | "timed" | "traced"
    iteration: int
    seconds: float


def time_once(step: Callable[[], Any], clock: Callable[[], float]) -> float:
    """Seconds for one call of ``step`` (which must block until its result is ready)."""
    start = clock()
    step()
    return clock() - start


def measure(
    step: Callable[[], Any],
    *,
    clock: Callable[[], float],
    barrier: Callable[[], None],
    warmup: int,
    iters: int,
    phase: str = "timed",
    sync_each: bool = True,
    around: Callable[[int], Any] | None = None,
) -> Iterator[Timing]:
    """Yield ``warmup`` warm-up timings then ``iters`` timings of ``phase``.

    All processes meet at ``barrier`` before the first timed iteration and, with
    ``sync_each``, before every one, so per-iteration times are comparable across
    processes. ``around(i)`` may return a context manager wrapped around iteration
    ``i`` (for example a profiler step annotation); it is entered outside the clock.
    """
    for i in range(warmup):
        yield Timing("warmup", i, time_once(step, clock))
    barrier()
    for i in range(iters):
        if sync_each and i:
            barrier()
        if around is None:
            yield Timing(phase, i, time_once(step, clock))
        else:
            with around(i):
                seconds = time_once(step, clock)
            yield Timing(phase, i, seconds)
