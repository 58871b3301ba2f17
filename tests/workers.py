"""How many pytest-xdist workers ``make test`` starts: two where the machine's cores are
idle, one where something else already keeps them busy (a second suite, a build): the
suite's timing assertions (a planted 1.5x, a host delay the chain hides) hold with one
worker beside such a load, not with two. Idleness is read from /proc/stat over one
second; where it cannot be read, two (the workers never exceed the cores)."""

from __future__ import annotations

import os
import time


def _busy_idle() -> tuple[int, int]:
    with open("/proc/stat") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, idle


def workers(cores: int | None = None, most: int = 2) -> int:
    cores = cores or os.cpu_count() or 1
    try:
        b0, i0 = _busy_idle()
        time.sleep(1.0)
        b1, i1 = _busy_idle()
    except (OSError, ValueError, IndexError):
        return min(most, cores)
    busy = (b1 - b0) / max(1, (b1 - b0) + (i1 - i0))  # share of all cores' time
    free = cores * (1 - busy)
    return max(1, min(most, cores, int(free + 0.25)))


if __name__ == "__main__":
    print(workers())
