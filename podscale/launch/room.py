"""Room on the disk: before a run, its records' size estimated and held against the free
space where they will land (refused in one line where it does not fit); after a failure,
whether the run's filesystem is full (named as the cause: a worker that cannot write has
no log line to say so, its log being on the same disk)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from podscale.core.case import Case
from podscale.core.errors import UsageError

#: a case's record and log lines, per process and round (about 1.7 KiB here)
CASE_BYTES = 2048
#: one sample in a record (packed columns: about 20 bytes here)
SAMPLE_BYTES = 24
#: a profiled program's record and traces per process, at the least (a floor, not a bound)
PROGRAM_BYTES = 1 << 20
#: free space under which a failed run's filesystem is called full
FULL_BYTES = 64 << 10


def records_bytes(cases: Sequence[Case], rounds: int = 1, arms: int = 1) -> int:
    """What a run of ``cases`` writes at most, about: per case and process, its record
    and every sample (each timed iteration, the chains, a device time per local device)."""
    total = 0
    for case in cases:
        s = case.settings
        samples = s.warmup + s.iters * (2 + case.layout.devices_per_host) + s.traced_iters
        total += case.layout.processes * (CASE_BYTES + SAMPLE_BYTES * samples)
    return total * rounds * arms


def _statvfs(path: Path) -> os.statvfs_result | None:
    """``path``'s filesystem (of the nearest folder above it that exists), or None."""
    where = Path(path)
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return os.statvfs(where)
    except OSError:
        return None


def free_bytes(path: Path) -> int | None:
    """Free space of ``path``'s filesystem, or None where it cannot be read or is a pseudo
    filesystem (``/proc`` has no blocks and says 0)."""
    stat = _statvfs(path)
    if stat is None:
        return None
    return stat.f_bavail * stat.f_frsize if stat.f_blocks else None


def read_only(path: Path) -> bool:
    """Whether ``path``'s filesystem is mounted read-only (no space freed would help)."""
    stat = _statvfs(path)
    return stat is not None and bool(stat.f_flag & os.ST_RDONLY)


def check_room(out: Path, needed: int, what: str) -> None:
    """UsageError where ``out`` is on a read-only filesystem, or has less free space than
    ``needed`` bytes (unknown: the run's own writes will say)."""
    if read_only(out):
        raise UsageError(f"--out {out}: its filesystem is read-only: choose another --out")
    free = free_bytes(out)
    if free is not None and free < needed:
        raise UsageError(f"--out {out}: {size(free)} free on its filesystem, and {what} "
                         f"need about {size(needed)}: free some space or choose another "
                         "--out")


def full_disk(run_dir: Path) -> str | None:
    """``run_dir``'s filesystem said full (``No space left on device (N KiB free under
    DIR)``), or None where it has room."""
    if read_only(run_dir):
        return f"read-only file system ({run_dir})"
    free = free_bytes(run_dir)
    if free is None or free >= FULL_BYTES:
        return None
    return f"no space left on device ({size(free)} free under {run_dir})"


def size(n: float) -> str:
    """Bytes in words: ``512 B``, ``2.0 MiB``, at most GiB."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
