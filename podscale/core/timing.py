"""The timing core: no I/O, no JAX. Clock, barrier, step and waiting are passed in.

Three methods time a case (:data:`METHODS`), each a phase of its raw samples:

- ``each`` (phase ``timed``): one call, waited on — the latency a program that waits on
  every step sees, host round trip included;
- ``chain`` (phase ``chain``): nccl-tests' method — all processes meet at the barrier,
  launch a chain of calls back to back, wait once; a sample is the chain's time over its
  length (the host's dispatch hides behind the device's work where it is shorter);
- ``device`` (phase ``device``): each execution's time on the device, read from a profiler
  trace of back-to-back calls (:mod:`podscale.worker.devicetime`) — the hardware's figure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

#: the timing methods, in the order a case runs them, and the phase each one's samples have
METHODS = ("each", "chain", "device")
PHASE_OF = {"each": "timed", "chain": "chain", "device": "device"}
#: which method's time a table's headline ``time_s`` takes, best first
HEADLINE = ("device", "chain", "each")
#: chains per case and round (``chain``): each a sample, ``iters`` calls long
CHAINS = 3
#: a chain keeps at most this much of its calls' traffic in flight (:func:`depth_for`):
#: past it, it waits on the oldest call while the device works through the rest, so a
#: chain of 512 MiB copies does not hold every output at once
IN_FLIGHT_BYTES = 4 << 30


def depth_for(bytes_per_call: int) -> int:
    """How many calls a chain keeps in flight, for calls that each move ``bytes_per_call``
    on a device: as many as :data:`IN_FLIGHT_BYTES` holds, at least 2. (Waiting on the
    oldest costs the host a little: a 650 µs CPU matmul's chain ran 3% slower kept to 8 in
    flight than left unbounded.)"""
    return max(2, IN_FLIGHT_BYTES // max(int(bytes_per_call), 1))


class Timing(NamedTuple):
    phase: str  # "warmup" | "timed" | "chain" | "traced"
    iteration: int
    seconds: float


def parse_methods(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``each,chain,device`` (any subset, any order) as a tuple in :data:`METHODS` order;
    ValueError naming the unknown or missing ones."""
    names = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    bad = [n for n in names if n not in METHODS]
    if bad or not names:
        raise ValueError(f"bad timing {','.join(names) or text!r}: name one or more of "
                         f"{', '.join(METHODS)}")
    return tuple(m for m in METHODS if m in names)


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
    """Yield ``warmup`` warm-up timings then ``iters`` timings of ``phase`` (the ``each``
    method: every call waited on).

    All processes meet at ``barrier`` before the first timed iteration and, with
    ``sync_each``, before every one, so per-iteration times are comparable across
    processes. ``around(i)`` may return a context manager wrapped around iteration
    ``i`` (for example a profiler step annotation); it is entered outside the clock.
    """
    for i in range(warmup):
        yield Timing("warmup", i, time_once(step, clock))
    if not iters:
        return
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


def chain(
    launch: Callable[[], Any],
    wait: Callable[[Any], Any],
    *,
    clock: Callable[[], float],
    barrier: Callable[[], None],
    length: int,
    chains: int = CHAINS,
    depth: int | None = None,
) -> Iterator[Timing]:
    """The ``chain`` method: ``chains`` times, meet at ``barrier``, then ``launch`` (which
    dispatches one call and returns its result without waiting) ``length`` times back to
    back and ``wait`` on the last result; yield the chain's seconds over ``length``
    (:func:`back_to_back`, at most ``depth`` in flight; None: no limit)."""
    if length < 1:
        raise ValueError(f"a chain needs at least one call, got {length}")
    for c in range(chains):
        barrier()
        start = clock()
        back_to_back(launch, wait, length, depth)
        yield Timing("chain", c, (clock() - start) / length)


def back_to_back(launch: Callable[[], Any], wait: Callable[[Any], Any], length: int,
                 depth: int | None = None) -> Any:
    """``launch`` ``length`` times without waiting between calls, at most ``depth`` in
    flight (past that, wait on the oldest: the device keeps the others queued), then wait
    on the last; its result."""
    flight: deque[Any] = deque()
    for _ in range(length):
        flight.append(launch())
        if depth is not None and len(flight) > depth:
            wait(flight.popleft())
    while len(flight) > 1:
        flight.popleft()
    return wait(flight.pop()) if flight else None
