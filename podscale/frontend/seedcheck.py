"""Print the reference program's output per process and check its sums in float64."""

from __future__ import annotations

import json
from pathlib import Path

from podscale.launch.cluster import split_by_rank
from podscale.launch.local import NOISE


def report(run_dir: Path) -> int:
    """Echo every process's listing lines; 0 if every global sum matches, else 1."""
    layout = sorted((run_dir / "logs").iterdir())[0]
    by_rank: dict[int, list[str]] = {}
    for log in layout.glob("*.log"):
        text = log.read_text(encoding="utf-8", errors="replace")
        if log.stem.startswith("process-"):
            by_rank[int(log.stem.split("-")[1])] = [
                line for line in text.splitlines() if line.strip() and not line.startswith(NOISE)
            ]
        else:  # mpirun.log / srun.log: rank-tagged
            by_rank.update(split_by_rank(text, log.stem))
    for rank in sorted(by_rank):
        print("\n".join(by_rank[rank]))
    results = [json.loads(p.read_text()) for p in sorted((run_dir / "seed").glob("*.json"))]
    total = sum(r["local_sum"] for r in results)  # float64 sum of the workers' local sums
    scale = sum(r["abs_sum"] for r in results)
    tol = 1e-6 * scale + 1e-3
    ok = True
    for r in results:
        worst = max(abs(g - total) for g in r["global_sum"])
        ok &= worst <= tol
        print(f"## check worker {r['process']}: global sum {r['global_sum'][0]!r} vs float64 sum "
              f"of local sums {total!r}: |diff| {worst:.3g} <= {tol:.3g}: "
              f"{'OK' if worst <= tol else 'MISMATCH'}")
    print(f"## seed check {'passed' if ok else 'FAILED'}; run: {run_dir}")
    return 0 if ok else 1
