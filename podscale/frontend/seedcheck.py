"""Print the reference program's output per process and check its sums in float64."""

from __future__ import annotations

import json
from pathlib import Path

from podscale.core import runfolder as rf
from podscale.core.bounds import sum_bound
from podscale.core.errors import WrongResults
from podscale.launch.cluster import split_by_rank
from podscale.launch.exits import NOISE


def echo_outputs(run_dir: Path, headed: bool = False) -> int:
    """Print every process's output, process by process (launcher noise left out), each
    under a ``# process N's output`` heading where ``headed`` and there are several; the
    number of processes that left output."""
    layout = sorted((run_dir / rf.LOGS).iterdir())[0]
    by_rank: dict[int, list[str]] = {}
    for log in layout.glob("*.log"):
        text = log.read_text(encoding="utf-8", errors="replace")
        if (rank := rf.process_of(log)) is not None:
            by_rank[rank] = [
                line for line in text.splitlines() if line.strip() and not line.startswith(NOISE)
            ]
        else:  # mpirun.log / srun.log: rank-tagged
            by_rank.update(split_by_rank(text, log.stem))
    for rank in sorted(by_rank):
        if headed and len(by_rank) > 1 and by_rank[rank]:
            print(f"# process {rank}'s output")
        print("\n".join(by_rank[rank]))
    return len(by_rank)


def report(run_dir: Path) -> int:
    """Echo every process's listing lines; 0 if every dot product and global sum is
    within its bound, else :class:`WrongResults` (exit 4)."""
    processes = echo_outputs(run_dir)
    results = [json.loads(p.read_text()) for p in sorted((run_dir / rf.SEED).glob("*.json"))]
    if len(results) != processes or not results:
        raise WrongResults(f"{len(results)} of {processes} workers wrote their check; "
                           f"run: {run_dir}")
    # the global sum (a float32 psum of per-device float32 sums of float32 dot products)
    # against the exact float64 total: the dots' own bounds plus the summation's
    total = sum(r["sum64"] for r in results)
    terms = sum(r["dots"] for r in results)
    slack = sum(r["dots_bound"] for r in results)
    tol = float(sum_bound(terms, "float32", sum(r["abs_sum64"] for r in results) + slack,
                          total)) + slack
    bad = []
    for r in results:
        worst = max(abs(g - total) for g in r["global_sum"])
        exact = all(g == r["exact_expected"] for g in r["exact_global_sum"])
        fine = worst <= tol and r["dots_wrong"] == 0 and exact
        if not fine:
            bad.append(r["process"])
        print(f"## check worker {r['process']}: {r['dots_wrong']} wrong of {r['dots']} dot "
              f"products (max {r['dots_max_error']:.3g} x bound); global sum "
              f"{r['global_sum'][0]!r} vs the exact float64 total {total!r}: "
              f"|diff| {worst:.3g} <= {tol:.3g} (worst-case bound); exact global sum "
              f"{r['exact_global_sum'][0]:.0f} vs {r['exact_expected']:.0f}: "
              f"{'OK' if fine else 'MISMATCH'}")
    print(f"## seed check {'FAILED' if bad else 'passed'}; run: {run_dir}")
    if bad:
        raise WrongResults(f"seed check failed on process(es) {', '.join(map(str, bad))}; "
                           f"run: {run_dir}")
    return 0
