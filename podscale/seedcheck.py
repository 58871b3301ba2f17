"""Print the reference program's output per process and check its sums in float64."""

from __future__ import annotations

import json
from pathlib import Path

from podscale.launch import NOISE


def report(run_dir: Path) -> int:
    """Echo every process's listing lines; 0 if every global sum matches, else 1."""
    layout = sorted((run_dir / "logs").iterdir())[0]
    for log in sorted(layout.glob("process-*.log"), key=lambda p: int(p.stem.split("-")[1])):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.strip() and not line.startswith(NOISE):
                print(line)
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
