"""bench-self against the simplest honest baseline: :mod:`minimal_script`, a hand-written
timing script with no podscale in it, launched as a user would (one process per host).

- :func:`harness_overhead`: podscale's measured step (the prepared workload, its real
  barrier, 2 processes x 2 devices) vs the script timing the same op on the same layout,
  in interleaved rounds (order alternating); per round the ratio of medians over
  iterations of the max over processes; the median and IQR of the ratios;
- :func:`per_case_launches`: the wall time of one script launch per case, for several
  cases per host count, with its spread: what a sweep costs done the seed-script way.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from podscale.core.case import Layout
from podscale.core.errors import PodscaleError

SCRIPT = Path(__file__).with_name("minimal_script.py")


def one_case(workload: str, size: int, hosts: int, devices: int, iters: int = 10,
             warmup: int = 2) -> list:
    """The one shard_map case of ``workload`` at ``size`` on ``hosts x devices``."""
    from podscale.core.case import Settings
    from podscale.core.grid import Grid, expand

    return expand(Grid(workloads=(workload,), params=(("size", (size,)),), hosts=(hosts,),
                       devices_per_host=(devices,), variants=("shard_map",),
                       settings=Settings(iters=iters, warmup=warmup)))


def run_minimal(hosts: int, devices: int, op: str, size: int, iters: int, warmup: int,
                timeout: float = 300) -> dict:
    """Launch the script on ``hosts`` local processes: wall time and, per iteration, the
    max over processes."""
    from podscale.launch.local import free_port

    port = free_port()
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), str(i), str(hosts), str(port),
                               str(devices), op, str(size), str(iters), str(warmup)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True) for i in range(hosts)]
    try:
        outs = [p.communicate(timeout=timeout) for p in procs]
    except subprocess.TimeoutExpired:
        raise PodscaleError(f"minimal script ({op}, {hosts} processes) timed out") from None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    wall = time.monotonic() - start
    for i, (p, (_, err)) in enumerate(zip(procs, outs)):
        if p.returncode:
            raise PodscaleError(f"minimal script process {i} failed: "
                                f"{err.strip().splitlines()[-1:] or p.returncode}")
    per = [json.loads(out.strip().splitlines()[-1])["seconds"] for out, _ in outs]
    return {"wall_s": wall, "seconds": [max(t) for t in zip(*per)]}


def _quartiles(xs: list[float]) -> dict:
    q1, q2, q3 = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 \
        else (xs[0],) * 3
    return {"median": q2, "q1": q1, "q3": q3, "min": min(xs), "max": max(xs), "n": len(xs)}


def harness_overhead(out: Path, rounds: int = 5, iters: int = 50, warmup: int = 5,
                     size: int = 4096, hosts: int = 2, devices: int = 2) -> dict:
    """podscale (``podscale run`` of dot and psum, default --sync each) vs the script,
    per op, in ``rounds`` interleaved rounds."""
    from podscale.analysis import load_run
    from podscale.analysis.models.stats import per_iteration
    from podscale.launch.runner import execute

    cases = [c for op in ("dot", "psum") for c in one_case(op, size, hosts, devices, iters, warmup)]
    per_op: dict[str, dict[str, list[float]]] = {
        op: {"podscale": [], "script": [], "ratio": []} for op in ("dot", "psum")}
    for r in range(rounds):
        medians: dict[str, dict[str, float]] = {op: {} for op in per_op}
        for who in (("podscale", "script") if r % 2 == 0 else ("script", "podscale")):
            if who == "podscale":
                run = execute(cases, out, f"harness-{r}", progress=None)
                it = per_iteration(load_run(run).samples)
                for op in per_op:
                    medians[op]["podscale"] = float(
                        it.loc[it.case_id.str.startswith(f"{op}@"), "t_max"].median())
            else:
                for op in per_op:
                    t = run_minimal(hosts, devices, op, size, iters, warmup)["seconds"]
                    medians[op]["script"] = statistics.median(t)
        for op, m in medians.items():
            per_op[op]["podscale"].append(m["podscale"] * 1e6)
            per_op[op]["script"].append(m["script"] * 1e6)
            per_op[op]["ratio"].append(m["podscale"] / m["script"])
    result = {op: {k: _quartiles(v) for k, v in d.items()} for op, d in per_op.items()}
    return {"layout": Layout(hosts, devices).key, "size": size, "iters": iters, "rounds": rounds,
            **result, "target": 1.02}


def per_case_launches(cases_per_host: int = 3, hosts: tuple[int, ...] = (1, 2, 4), devices: int = 4,
                      iters: int = 10, warmup: int = 2) -> dict:
    """Wall time of one script launch per case: psum and dot at a few sizes per host
    count; per host count the median and spread of the launch wall times."""
    shapes = [("psum", 4096), ("dot", 16384), ("psum", 65536), ("dot", 262144)]
    result = {}
    for h in hosts:
        walls = [run_minimal(h, devices, op, size, iters, warmup)["wall_s"]
                 for op, size in shapes[:cases_per_host]]
        result[h] = _quartiles(walls)
    return result
