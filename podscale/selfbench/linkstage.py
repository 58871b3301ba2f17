"""bench-self's links stage: how the wall time of finding bad hosts and links grows with P.

``podscale run links`` (P-1 ring shifts) at 8, 16 and 32 processes, and ``podscale run
pairs`` (one case per ordered pair, P(P-1)) at 8, side by side, through the CLI as a user
runs them: wall time and cases of each.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from podscale.core.errors import PodscaleError
from podscale.selfbench import Log

GRID = ["--devices-per-host", "1", "--sizes", "1K", "--iters", "3", "--warmup", "1",
        "--rounds", "1"]


def _wall(workload: str, p: int, out: Path) -> float:
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "podscale", "run", workload, "--hosts",
                          str(p), *GRID, "--platform", "cpu", "--out",
                          str(out / f"{workload}-{p}")], capture_output=True, text=True)
    if res.returncode:
        raise PodscaleError(f"{workload} on {p} processes failed: {res.stderr[-300:]}")
    return time.monotonic() - start


def links_scale(out: Path, counts: tuple[int, ...] = (8, 16, 32), pairs_at: int = 8,
                log: Log = print) -> dict:
    rows = []
    for p in counts:
        rows.append({"workload": "links", "processes": p, "cases": p - 1,
                     "wall_s": _wall("links", p, out)})
        log(f"  links, {p} processes: {p - 1} cases in {rows[-1]['wall_s']:.0f}s")
    rows.append({"workload": "pairs", "processes": pairs_at, "cases": pairs_at * (pairs_at - 1),
                 "wall_s": _wall("pairs", pairs_at, out)})
    log(f"  pairs, {pairs_at} processes: {rows[-1]['cases']} cases in {rows[-1]['wall_s']:.0f}s")
    return {"rows": rows}
