"""bench-self: what podscale's own work costs beside the timed iterations.

- :func:`footprint`: all_reduce with 16 MiB per device, one device per process, at 2, 8 and
  16 processes: each worker's peak RSS (targets: at 8 within 1.25x of that at 2) and the
  CPU seconds preparing and checking cost per process (target: at 16 no more than 2x that
  at 2). CPU seconds, not wall seconds: 16 processes share this machine's cores, and wall
  time would count the waiting.
- :func:`study_ledger`: ``podscale study`` as ``make study`` runs it, through the CLI, and
  its wall-time ledger: prepare + check against the timed iterations (target <=).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from podscale.core.errors import PodscaleError
from podscale.launch.admission import available_mb, estimate_mb
from podscale.selfbench import Log

SIZE = 16 << 20  # bytes per device
WORK = ("prepare", "check")  # podscale's own per-case phases outside the timed region


def _per_process(run_dir: Path) -> dict:
    from podscale.analysis import load_run

    ledger = load_run(run_dir).ledger

    def total(prefix: str) -> list[float]:
        cols = [c for c in (f"{prefix}.{p}" for p in WORK) if c in ledger]
        return [float(v) for v in ledger[cols].fillna(0.0).sum(axis=1)]

    return {"peak_rss_mb": [float(v) for v in ledger["rss.peak"]],
            "work_cpu_s": total("cpu"), "work_wall_s": total("phase")}


def footprint(out: Path, counts: tuple[int, ...] = (2, 8, 16),
              log: Log = print) -> dict:
    """Peak RSS and prepare + check CPU seconds per process, at each process count that
    fits in memory (skipped ones say why)."""
    from podscale.launch.options import LaunchOptions
    from podscale.launch.runner import execute
    from podscale.selfbench.baseline import one_case

    rows = []
    for n in counts:
        cases = one_case("all_reduce", SIZE, n, 1, iters=3, warmup=1)
        (_, need), have = estimate_mb(cases), available_mb()  # admission's own estimate
        if need > 0.8 * have:
            rows.append({"processes": n,
                         "skipped": f"~{need:.0f} MB needed, {have:.0f} MB free"})
            continue
        try:
            run = execute(cases, out, f"footprint-h{n}", LaunchOptions(case_timeout=600),
                          progress=None)
        except PodscaleError as exc:
            rows.append({"processes": n, "error": str(exc)[:200]})
            continue
        got = _per_process(run)
        rows.append({"processes": n, "peak_rss_mb": max(got["peak_rss_mb"]),
                     "work_cpu_s": _median(got["work_cpu_s"]),
                     "work_wall_s": _median(got["work_wall_s"]), "per_process": got})
        log(f"  {n} processes: peak RSS {rows[-1]['peak_rss_mb']:.0f} MB (largest), prepare"
            f"+check {rows[-1]['work_cpu_s']:.2f} CPU s per process (median)")
    return {"size_bytes": SIZE, "rows": rows, **_ratios(rows),
            "targets": {"rss_8_vs_2": 1.25, "work_16_vs_2": 2.0}}


def _median(values: list[float]) -> float:
    import statistics

    return float(statistics.median(values)) if values else float("nan")


def _ratios(rows: list[dict]) -> dict:
    by = {r["processes"]: r for r in rows if "peak_rss_mb" in r}
    out = {}
    if 2 in by and 8 in by:
        out["rss_8_vs_2"] = by[8]["peak_rss_mb"] / by[2]["peak_rss_mb"]
    if 2 in by and 16 in by:
        out["work_16_vs_2"] = by[16]["work_cpu_s"] / by[2]["work_cpu_s"]
    return out


def study_ledger(out: Path, log: Log = print, platform: str = "cpu") -> dict:
    """Run the default study through the CLI on ``platform`` (cpu: simulated hosts; tpu,
    gpu: this machine's chips) and say where its wall time went."""
    from podscale.analysis import load_run
    from podscale.analysis.models.ledger import launches, phase_totals

    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "podscale", "study", "--out", str(out),
                           "--name", "study", "--platform", platform],
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        return {"error": f"podscale study exited {done.returncode}: {' '.join(tail)}"}
    runs = sorted(out.glob("*-study"))  # the run directory: <stamp>-<name>
    if not runs:
        return {"error": f"podscale study left no run under {out}"}
    ledger = load_run(runs[-1]).ledger
    seconds = phase_totals(ledger)
    by_launch = launches(ledger).pivot_table(index="launch", columns="phase", values="max_s")
    cpu = {p: float(ledger[f"cpu.{p}"].sum()) for p in WORK if f"cpu.{p}" in ledger}
    share = (seconds / seconds.sum()).round(4).to_dict()
    work = sum(share.get(p, 0.0) for p in WORK)
    log(f"  study in {wall:.0f}s; ledger (slowest process per phase, summed over launches): "
        + ", ".join(f"{p} {s:.0%}" for p, s in sorted(share.items(), key=lambda kv: -kv[1])))
    log(f"  prepare + check {work:.0%} of the wall time vs timed iterations "
        f"{share.get('timed', 0.0):.0%} (target <=)")
    return {"wall_s": wall, "seconds": seconds.round(3).to_dict(), "share": share,
            "prepare_check_share": work, "timed_share": share.get("timed", 0.0),
            "cpu_s_all_processes": cpu, "per_launch_s": by_launch.round(3).to_dict("index"),
            "target": "prepare + check <= timed"}
