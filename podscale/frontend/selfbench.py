"""``podscale bench-self``: measure podscale itself, side by side in one run.

- harness overhead: podscale's per-iteration time of a small jitted op vs a bare
  ``f(x).block_until_ready()`` loop timed with ``time.perf_counter`` (target <= 1.02);
- sweep turnaround: a standard sweep's wall time vs one process start per host count plus
  the measured time (target <= 1.5x), and vs one launch per case (target >= 5x faster);
- scale: the largest simulated psum job that completes (target 32 processes), with startup
  and psum latency per process count;
- the dot product's achieved bandwidth vs a numpy-copy memory ceiling measured in the run;
- comparison verdicts: A/A false alarms and a planted 1.5x slowdown's detection
  (:mod:`podscale.frontend.verdictbench`).

``--only STAGE,...`` runs some of them (harness, turnaround, scale, verdicts).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from podscale.core.case import Layout, Settings
from podscale.core.errors import PodscaleError
from podscale.core.grid import Grid, expand
from podscale.core.plan import Plan
from podscale.core.timing import measure
from podscale.launch.local import run_local
from podscale.launch.runner import execute

SWEEP = Grid(workloads=("dot", "psum"), params=(("size", (4096, 16384, 65536, 262144)),),
             hosts=(1, 2, 4), devices_per_host=(1, 2, 4), variants=("shard_map",),
             settings=Settings(iters=10, warmup=2))


def _one(workload: str, size: int, hosts: int, devices: int, iters: int = 10,
         warmup: int = 2) -> list:
    return expand(Grid(workloads=(workload,), params=(("size", (size,)),), hosts=(hosts,),
                       devices_per_host=(devices,), variants=("shard_map",),
                       settings=Settings(iters=iters, warmup=warmup)))


def harness_overhead(rounds: int = 9, iters: int = 300) -> dict:
    """Ratio of medians: podscale's timing core vs a bare loop, interleaved in rounds."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x * 2.0 + 1.0)
    x = jnp.ones(1024)
    f(x).block_until_ready()

    def step():
        return f(x).block_until_ready()

    bare, harness = [], []
    for _ in range(rounds):
        for _ in range(iters):
            start = time.perf_counter()
            f(x).block_until_ready()
            bare.append(time.perf_counter() - start)
        harness += [t.seconds for t in measure(step, clock=time.perf_counter,
                                               barrier=lambda: None, warmup=0, iters=iters)]
    b, h = statistics.median(bare), statistics.median(harness)
    return {"bare_us": b * 1e6, "podscale_us": h * 1e6, "ratio": h / b, "target": 1.02}


def startup_seconds(hosts: int, out: Path) -> float:
    """Wall time to start ``hosts`` processes that join the job and leave (no case)."""
    run_dir = out / f"startup-h{hosts}"
    run_dir.mkdir(parents=True)
    layout = Layout(hosts, 1)
    plan = Plan(str(run_dir), layout).write(run_dir / "plans" / "startup.json")
    start = time.monotonic()
    run_local(layout, plan, run_dir / "logs", case_timeout=300)
    return time.monotonic() - start


def measured_seconds(run_dir: Path) -> float:
    """Sum over cases of the slowest process's total sample time (compile, warmup, timed)."""
    from analysis import load_run

    _, samples, _, _ = load_run(run_dir)
    per = samples.groupby(["case_id", "process"])["seconds"].sum()
    return float(per.groupby("case_id").max().sum())


def turnaround(out: Path, per_case_samples: int = 1, log=None) -> dict:
    start = time.monotonic()
    cases = expand(SWEEP)
    run = execute(cases, out, "sweep", progress=log)  # cases done / total, ETA
    sweep = time.monotonic() - start
    starts = {h: startup_seconds(h, out) for h in SWEEP.hosts}
    measured = measured_seconds(run)
    # one launch per case, as a seed-style script would: sampled, then extrapolated
    per_case: dict[int, list[float]] = {h: [] for h in SWEEP.hosts}
    for h in SWEEP.hosts:
        for _ in range(per_case_samples):
            one = _one("psum", 4096, h, 4, SWEEP.settings.iters, SWEEP.settings.warmup)
            t0 = time.monotonic()
            execute(one, out, f"case-h{h}", progress=None)
            per_case[h].append(time.monotonic() - t0)
    n_cases = {h: sum(c.hosts == h for c in cases) for h in SWEEP.hosts}
    per_case_total = sum(statistics.mean(per_case[h]) * n_cases[h] for h in SWEEP.hosts)
    floor = sum(starts.values()) + measured
    return {"cases": sum(n_cases.values()), "sweep_s": sweep, "startup_s": starts,
            "measured_s": measured, "floor_s": floor, "vs_floor": sweep / floor,
            "per_case_launch_s": per_case_total, "speedup_vs_per_case": per_case_total / sweep,
            "targets": {"vs_floor": 1.5, "speedup_vs_per_case": 5.0}, "run": str(run)}


#: resident memory of one simulated host (a JAX CPU process), for the scale guard
PROCESS_MB = 350


def available_mb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


def scale(out: Path, counts=(1, 2, 4, 8, 16, 32, 64, 128)) -> dict:
    """psum on 1, 2, 4, ... single-device processes until one fails, the next would not
    fit in memory, or the last count completes: startup and latency per count, and why
    it stopped."""
    from analysis import load_run, summarize

    curve, largest = [], 0
    stopped = f"reached {counts[-1]} processes"
    for n in counts:
        need, have = n * PROCESS_MB, available_mb()
        if need > 0.8 * have:
            stopped = (f"{n} processes would need ~{need / 1024:.1f} GiB "
                       f"({PROCESS_MB} MB each), {have / 1024:.1f} GiB available")
            break
        t0 = time.monotonic()
        try:
            run = execute(_one("psum", 1024, n, 1), out, f"scale-h{n}", progress=None,
                          case_timeout=300)
        except PodscaleError as exc:
            curve.append({"processes": n, "error": str(exc)})
            stopped = f"{n} processes failed: {str(exc)[:200]}"
            break
        wall = time.monotonic() - t0
        _, samples, cases, _ = load_run(run)
        t = summarize(samples, cases)["time_s"].iloc[0]
        curve.append({"processes": n, "wall_s": wall,
                      "startup_s": wall - measured_seconds(run), "psum_us": t * 1e6})
        largest = n
    return {"largest": largest, "target": 32, "curve": curve, "stopped": stopped}


def dot_vs_memory(run: Path) -> dict:
    """Dot GB/s per process vs the numpy-copy ceiling the workers measured in that run."""
    from analysis import load_run, summarize

    _, samples, cases, envs = load_run(run)
    table = summarize(samples, cases)
    dot = table[table.workload == "dot"]
    ceiling = float(envs["extra"].map(lambda e: e.get("memcpy_gbps", float("nan"))).median())
    best = dot.loc[dot["gbps"].idxmax()]
    return {"memcpy_gbps": ceiling, "best_dot_gbps": float(best.gbps),
            "best_case": best.case_id, "fraction": float(best.gbps) / ceiling}


STAGES = ("harness", "turnaround", "scale", "verdicts")


def run_all(out: Path | None, log: Callable[[str], None] = print, max_processes: int = 32,
            only: tuple[str, ...] = STAGES) -> dict:
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.monotonic()
        chosen = [s for s in STAGES if s in only]

        def stage(name: str, what: str) -> None:
            done = time.monotonic() - started
            log(f"# [stage {chosen.index(name) + 1}/{len(chosen)}, elapsed {done:.0f}s] "
                f"{what} ...")

        if "harness" in chosen:
            stage("harness", "harness overhead")
            h = result["harness"] = harness_overhead()
            log(f"  podscale {h['podscale_us']:.1f} us vs bare {h['bare_us']:.1f} us: ratio "
                f"{h['ratio']:.3f} (target <= 1.02)")
        if "turnaround" in chosen:
            stage("turnaround", "sweep turnaround (dot+psum, 4 sizes x devices 1,2,4 x "
                                "hosts 1,2,4)")
            t = result["turnaround"] = turnaround(work, log=log)
            log(f"  {t['cases']} cases in {t['sweep_s']:.1f}s; floor (process starts "
                f"{sum(t['startup_s'].values()):.1f}s + measured {t['measured_s']:.1f}s) = "
                f"{t['floor_s']:.1f}s: {t['vs_floor']:.2f}x (target <= 1.5)")
            log(f"  one launch per case (extrapolated): {t['per_case_launch_s']:.0f}s: sweep "
                f"is {t['speedup_vs_per_case']:.1f}x faster (target >= 5)")
            d = result["dot_vs_memory"] = dot_vs_memory(Path(t.pop("run")))
            log(f"# dot bandwidth: best {d['best_dot_gbps']:.2f} GB/s per process "
                f"({d['best_case']}) = {d['fraction']:.0%} of numpy-copy "
                f"{d['memcpy_gbps']:.2f} GB/s")
        if "scale" in chosen:
            stage("scale", f"scale: psum over 1..{max_processes} simulated processes")
            counts = tuple(n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n <= max_processes)
            s = result["scale"] = scale(work, counts)
            log("  processes  wall(s)  startup(s)  psum(us)")
            for row in s["curve"]:
                if "error" in row:
                    log(f"  {row['processes']:9d}  failed: {row['error'][:100]}")
                else:
                    log(f"  {row['processes']:9d}  {row['wall_s']:7.1f}  "
                        f"{row['startup_s']:10.1f}  {row['psum_us']:8.0f}")
            log(f"  largest completed: {s['largest']} processes (target 32); stopped: "
                f"{s['stopped']}")
        if "verdicts" in chosen:
            from podscale.frontend.verdictbench import summary_lines, verdicts

            stage("verdicts", "compare verdicts: A, B (psum stretched 1.5x), A' with the "
                              "defaults (3 rounds each)")
            v = result["verdicts"] = verdicts(work, log)
            for line in summary_lines(v):
                log(line)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))
        log(f"# written: {out}")
    return result
