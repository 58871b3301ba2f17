"""``podscale history`` at scale: synthetic run folders holding what a finished run keeps
for history (its manifest and compact summary store), with a planted change of one case
and a planted drift of every case; the history command timed through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from podscale.core.records import Manifest, write_manifest
from podscale.selfbench import Log


def make_history(root: Path, runs: int = 60, cases: int = 200, *, slow_case: int | None = None,
                 slow_from: int = 30, drift_from: int | None = None, factor: float = 1.5,
                 noise: float = 0.03, seed: int = 0, hardware: str = "cpu:cpu") -> list[Path]:
    """``runs`` run directories under ``root``: case i takes (1 + i) x 10 us with
    log-normal noise; case ``slow_case`` takes ``factor`` x as long from run
    ``slow_from``; every case does from run ``drift_from``."""
    from podscale.analysis.data import cache
    from podscale.analysis.verdicts.history import FORM, KEEP, STORE

    rng = np.random.default_rng(seed)
    ids = [f"psum@1/shard_map/float32/size={1024 * (i + 1)}/h2xd4" for i in range(cases)]
    base = 1e-5 * (1 + np.arange(cases))
    out = []
    for r in range(runs):
        path = root / f"20260101-{r:06d}-nightly"
        (path / cache.NAME).mkdir(parents=True)
        created = f"2026-01-{1 + r // 24:02d}T{r % 24:02d}:00:00"
        write_manifest(path, Manifest(path.name, created, ["podscale"], {}, ["h2xd4"],
                                      {"hostname": "node"}, status="complete"))
        t = base * np.exp(noise * rng.normal(size=cases))
        if slow_case is not None and r >= slow_from:
            t[slow_case] *= factor
        if drift_from is not None and r >= drift_from:
            t *= factor
        rows = [[c, "psum", "shard_map", "float32", "h2xd4", float(x), 0.02, 3, 1.0, 20, 3,
                 "each", "chain", None, float(x), None] for c, x in zip(ids, t)]
        payload = {"key": cache.key([], path), "columns": KEEP, "rows": rows, "form": FORM,
                   "meta": {"run_id": path.name, "created": created, "hardware": hardware,
                            "host": "node", "status": "complete"}}
        (path / cache.NAME / STORE).write_text(json.dumps(payload))
        out.append(path)
    return out


def history_stage(work: Path, log: Log, runs: int = 1000, cases: int = 200) -> dict:
    """``podscale history`` over ``runs`` x ``cases`` (one planted change), 3 timings."""
    root = work / "history"
    make_history(root, runs, cases, slow_case=7, slow_from=runs // 2)
    walls = []
    for _ in range(3):
        start = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "podscale", "history", str(root),
                              "--out", str(work / "history-out")],
                             capture_output=True, text=True)
        walls.append(time.monotonic() - start)
        if res.returncode:
            raise RuntimeError(res.stderr[-2000:])
    found = "from run" in res.stdout and f"size={1024 * 8}/" in res.stdout
    log(f"  podscale history over {runs} runs x {cases} cases: "
        f"{', '.join(f'{w:.1f}' for w in walls)} s (target <= 5); planted change found: "
        f"{found}")
    return {"runs": runs, "cases": cases, "wall_s": walls, "median_s": float(np.median(walls)),
            "found": found, "target_s": 5.0}
