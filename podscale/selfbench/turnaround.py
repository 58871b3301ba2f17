"""bench-self's turnaround stage: a standard sweep's wall time against one process start
per host count plus the measured time (the floor), and against one minimal-script launch
per case, with where the sweep's wall time went."""

from __future__ import annotations

import time
from pathlib import Path

from podscale.core import runfolder as rf
from podscale.core.case import Layout, Settings
from podscale.core.grid import Grid, expand
from podscale.core.plan import Plan
from podscale.launch.local import run_local
from podscale.launch.runner import execute
from podscale.selfbench import Log
from podscale.selfbench.baseline import per_case_launches

SWEEP = Grid(workloads=("dot", "psum"), params=(("size", (4096, 16384, 65536, 262144)),),
             hosts=(1, 2, 4), devices_per_host=(1, 2, 4), variants=("shard_map",),
             settings=Settings(iters=10, warmup=2))


def startup_seconds(hosts: int, out: Path) -> float:
    """Wall time to start ``hosts`` processes that join the job and leave (no case)."""
    run_dir = out / f"startup-h{hosts}"
    run_dir.mkdir(parents=True)
    layout = Layout(hosts, 1)
    plan = Plan(str(run_dir), layout).write(run_dir / "plans" / "startup.json")
    start = time.monotonic()
    run_local(layout, plan, run_dir / rf.LOGS, case_timeout=300)
    return time.monotonic() - start


def measured_seconds(run_dir: Path) -> float:
    """Sum over cases of the slowest process's total sample time (compile, warmup, timed)."""
    from podscale.analysis import load_run

    run = load_run(run_dir)
    samples = run.samples
    per = samples.groupby(["case_id", "process"])["seconds"].sum()
    return float(per.groupby("case_id").max().sum())


def turnaround(out: Path, log: Log | None = None) -> dict:
    """The sweep (:data:`SWEEP`) as one run, against its floor (process starts plus the
    measured time; target <= 1.5x) and against one launch per case (target >= 5x faster),
    with its wall-time ledger."""
    start = time.monotonic()
    cases = expand(SWEEP)
    run = execute(cases, out, "sweep", progress=log)  # cases done / total, ETA
    sweep = time.monotonic() - start
    starts = {h: startup_seconds(h, out) for h in SWEEP.hosts}
    measured = measured_seconds(run)
    # one launch per case, as a seed-style script does: measured with the minimal script
    # on several cases per host count, extrapolated to the sweep's cases

    per_case = per_case_launches(hosts=SWEEP.hosts, devices=max(SWEEP.devices_per_host),
                                 iters=SWEEP.settings.iters, warmup=SWEEP.settings.warmup)
    n_cases = {h: sum(c.processes == h for c in cases) for h in SWEEP.hosts}
    est = {q: sum(per_case[h][q] * n_cases[h] for h in SWEEP.hosts) for q in ("q1", "median",
                                                                               "q3")}
    per_case_total = est["median"]
    floor = sum(starts.values()) + measured
    from podscale.analysis import load_run
    from podscale.analysis.models.ledger import phase_totals

    # where the sweep's wall time went, per phase
    ledger = phase_totals(load_run(run).ledger).round(3).to_dict()
    return {"cases": sum(n_cases.values()), "sweep_s": sweep, "startup_s": starts,
            "ledger_s": ledger,
            "measured_s": measured, "floor_s": floor, "vs_floor": sweep / floor,
            "per_case_launch_s": per_case_total, "per_case_launch_iqr_s": (est["q1"], est["q3"]),
            "per_case_launch_wall_s": per_case, "speedup_vs_per_case": per_case_total / sweep,
            "targets": {"vs_floor": 1.5, "speedup_vs_per_case": 5.0}, "run": str(run)}
