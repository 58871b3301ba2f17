"""Admission: before any process starts, will the run fit on this machine?

A starting worker holds about ``PROCESS_MB`` of memory (measured by bench-self's scale
stage: the kernel's out-of-memory killer stopped one of 128 workers at 203 MB of
anonymous memory); each case adds its buffers: the inputs and outputs, the exact pass's
and the comparison's arrays, none of which grows with the number of processes. The
estimate of the largest launch (the processes of one host count run together) is held
against the memory this machine has available; a run that does not fit is refused in one
line naming the numbers (exit 2), unless ``--force``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from podscale.core.case import Case
from podscale.core.errors import UsageError

#: memory of a starting worker process, MB (JAX on CPU with gloo; measured)
PROCESS_MB = 210


def available_mb() -> float:
    """MemAvailable of /proc/meminfo, MB (infinite where it cannot be read)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


#: a case's peak memory per byte of its per-process buffer: inputs and outputs, their
#: placed copies, the exact pass's inputs and closed-form outputs, and the float64 arrays
#: of the comparison (measured: all_reduce of 16 MiB per device raised a worker's peak by
#: 49 MB in prepare and 271-287 MB in check at 2 and 8 processes alike)
BUFFER_FACTOR = 20


def case_mb(case: Case) -> float:
    """One process's buffers for one case, MB: ``BUFFER_FACTOR`` x its bytes per process,
    whatever the number of processes (the checks gather O(k) elements per device)."""
    from podscale.core.registry import resolve

    work = resolve(case.source).workload.work(case)
    return work.bytes_per_process * BUFFER_FACTOR / 2**20


def estimate_mb(cases: Sequence[Case], processes: int | None = None) -> tuple[int, float]:
    """(processes of the largest launch, its estimated memory in MB)."""
    most = processes or max(c.hosts for c in cases)
    buffers = max((case_mb(c) for c in cases if c.hosts == most), default=0.0)
    return most, most * (PROCESS_MB + buffers)


def admit(cases: Sequence[Case], *, force: bool = False, processes: int | None = None,
          have_mb: float | None = None) -> None:
    """Refuse (UsageError) a run whose largest launch would not fit in memory."""
    most, need = estimate_mb(cases, processes)
    admit_processes(most, need, force=force, have_mb=have_mb)


def admit_processes(most: int, need_mb: float, *, force: bool = False,
                    have_mb: float | None = None,
                    basis: str = f"{PROCESS_MB} MB per process plus the largest case's "
                                 "buffers") -> None:
    """Refuse ``most`` processes needing ``need_mb`` in all if they do not fit; ``basis``:
    how the estimate was made."""
    have = available_mb() if have_mb is None else have_mb
    if need_mb > have and not force:
        raise UsageError(
            f"{most} processes would need about {need_mb / 1024:.1f} GiB ({basis}) and this "
            f"machine has {have / 1024:.1f} GiB available: nothing was started (use fewer "
            "--hosts or smaller --sizes, or --force)")
