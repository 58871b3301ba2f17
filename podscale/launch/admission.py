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
#: a profiled process's memory before the program's own arrays: JAX, the CPU client,
#: podscale's recorder (a worker's measured footprint, less the checks' buffers)
PROFILED_MB = 350


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
#: the same on a machine's own chips, where the placed copies live on the devices: the
#: host keeps the inputs it made, the exact pass's and the sampled comparison's arrays
CHIP_BUFFER_FACTOR = 4


def case_mb(case: Case, factor: float = BUFFER_FACTOR) -> float:
    """One process's buffers for one case, MB: ``factor`` x its bytes per process,
    whatever the number of processes (the checks gather O(k) elements per device)."""
    from podscale.core.registry import resolve

    work = resolve(case.source).workload.work(case)
    return work.bytes_per_process * factor / 2**20


def estimate_mb(cases: Sequence[Case], processes: int | None = None,
                factor: float = BUFFER_FACTOR) -> tuple[int, float]:
    """(processes of the largest launch, its estimated memory in MB)."""
    most = processes or max(c.processes for c in cases)
    buffers = max((case_mb(c, factor) for c in cases if c.processes == most), default=0.0)
    return most, most * (PROCESS_MB + buffers)


def admit(cases: Sequence[Case], *, force: bool = False, processes: int | None = None,
          have_mb: float | None = None, on_chips: bool = False) -> None:
    """Refuse (UsageError) a run whose largest launch would not fit in memory
    (``on_chips``: its buffers placed on this machine's chips, not in its memory)."""
    most, need = estimate_mb(cases, processes,
                             CHIP_BUFFER_FACTOR if on_chips else BUFFER_FACTOR)
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


#: a case's device memory per byte it moves on a device: its timed buffers and the exact
#: pass's own inputs and outputs, resident together
DEVICE_FACTOR = 2
#: the share of a chip's memory a case may plan to hold (the runtime keeps the rest)
DEVICE_SHARE = 0.8


def admit_device(cases: Sequence[Case], memory: int, kind: str) -> None:
    """Refuse (UsageError) the cases whose buffers would not fit in one chip's ``memory``
    (bytes; 0: unknown, nothing refused), naming the largest that fits: never an
    out-of-memory error mid-run."""
    from podscale.core.registry import resolve

    if memory <= 0:
        return
    room = memory * DEVICE_SHARE
    for case in cases:
        work = resolve(case.source).workload.work(case)
        need = DEVICE_FACTOR * work.bytes_per_process / case.devices_per_host
        if need > room:
            raise UsageError(
                f"case {case.id} would hold about {need / 2**30:.1f} GiB on each {kind} "
                f"(of its {memory / 2**30:.1f} GiB; {DEVICE_SHARE:.0%} may be planned): "
                "nothing was started (use smaller --sizes)")
