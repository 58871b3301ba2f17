"""Where a worker's wall time goes, per launch: the interpreter starting, imports, joining
the job (and waiting there for the slowest process), then per case preparing inputs and
the reference, compiling, warm-up, waiting at barriers, timed iterations, checking,
writing (and gathering) records. Absolute timestamps mark the launch's boundaries, so the
analysis can tell who joined last; durations accumulate per phase, and so does how much
each phase raised the process's peak resident memory (``ru_maxrss``, read at each phase's
end: a system call, outside every timed region), so podscale's own footprint is named by
phase, and the CPU seconds each phase used (``process_time``: the work, apart from waiting
for cores other processes share). One :class:`~podscale.core.records.LedgerRecord` per
process and layout of a launch."""

from __future__ import annotations

import os
import resource
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

_marks: dict[str, float] = {}
_phases: dict[str, float] = defaultdict(float)
_grew: dict[str, float] = defaultdict(float)  # MB the peak RSS rose during each phase
_cpu: dict[str, float] = defaultdict(float)  # CPU seconds (all threads) in each phase


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (VmHWM), MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def process_start() -> float | None:
    """When this process started (seconds since the epoch), from /proc on Linux: its start
    in clock ticks since boot, against the seconds since boot now (``/proc/uptime``, to
    10 ms). Not against ``/proc/stat``'s ``btime``, the boot in whole seconds: it put every
    start up to 1 s early (0.96 s on this machine, all of it in the ``interpreter`` phase)."""
    try:
        with open("/proc/self/stat") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            up = float(fh.read().split()[0])
        return time.time() - up + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def mark(name: str) -> None:
    """A boundary of the launch, as wall-clock time (``worker``, ``imported``,
    ``init_start``, ``joined``)."""
    _marks.setdefault(name, time.time())


def add(phase: str, seconds: float) -> None:
    _phases[phase] += seconds


@contextmanager
def phase(name: str) -> Iterator[None]:
    start, cpu, peak = time.perf_counter(), time.process_time(), peak_rss_mb()
    try:
        yield
    finally:
        _phases[name] += time.perf_counter() - start
        _cpu[name] += time.process_time() - cpu
        _grew[name] += peak_rss_mb() - peak


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


def take_memory() -> dict[str, float]:
    """MB each phase raised the peak RSS by since the last take, and ``peak``: the peak
    so far."""
    grew = {k: round(v, 3) for k, v in _grew.items() if v > 0}
    _grew.clear()
    return {**grew, "peak": round(peak_rss_mb(), 3)}


def take_cpu() -> dict[str, float]:
    """CPU seconds (every thread of the process) each phase used since the last take: the
    work a phase costs whatever else shares the cores, where wall seconds also count the
    waiting."""
    used = {k: round(v, 6) for k, v in _cpu.items() if v > 0}
    _cpu.clear()
    return used
