"""Where a worker's wall time goes, per launch: the interpreter starting, imports, joining
the job (and waiting there for the slowest process), then per case preparing inputs and
the reference, compiling, warm-up, waiting at barriers, timed iterations, checking,
writing (and gathering) records. Absolute timestamps mark the launch's boundaries, so the
analysis can tell who joined last; durations accumulate per phase. One
:class:`~podscale.core.records.LedgerRecord` per process and layout of a launch."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

_marks: dict[str, float] = {}
_phases: dict[str, float] = defaultdict(float)


def process_start() -> float | None:
    """When this process started (seconds since the epoch), from /proc on Linux."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def mark(name: str) -> None:
    """A boundary of the launch, as wall-clock time (``worker``, ``imported``,
    ``init_start``, ``joined``)."""
    _marks.setdefault(name, time.time())


def add(phase: str, seconds: float) -> None:
    _phases[phase] += seconds


@contextmanager
def phase(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        _phases[name] += time.perf_counter() - start


def take(first: bool) -> tuple[dict[str, float], dict[str, float]]:
    """(marks, phase seconds) since the last take; the launch's own phases (interpreter,
    import, join) and marks go with the first layout only."""
    marks = dict(_marks) if first else {}
    if first:
        started = process_start()
        if started is not None:
            marks["process_start"] = started
        if "worker" in marks and started is not None:
            add("interpreter", max(marks["worker"] - started, 0.0))
        if {"worker", "imported"} <= set(marks):
            add("import", marks["imported"] - marks["worker"])
        if {"init_start", "joined"} <= set(marks):
            add("join", marks["joined"] - marks["init_start"])
    phases = {k: round(v, 6) for k, v in _phases.items() if v}
    _phases.clear()
    return marks, phases
