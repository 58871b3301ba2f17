"""bench-self's report stage: do reports scale to pods?

Synthetic runs written with podscale's own record types (:mod:`podscale.frontend.
synthetic`) of P processes x 48 cases (dot and psum x 2 variants x 12 sizes) x 50 timed
iterations — 626,688 samples (106 MB of JSON Lines) at 256 processes — then ``podscale
report`` through the CLI as a user runs it, ``repeats`` times each: the first without the
columnar cache (``analysis/cache.py``: it is written then), the rest with it. Target: the
report of the 256-process run in <= 10 s, growing no faster than the number of samples.
Loading is timed on its own too (JSON Lines vs cache).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from podscale.core.errors import PodscaleError

SIZES = tuple(1024 * 2**i for i in range(12))
ITERS = 50
TARGET_S = 10.0


def _seconds(argv: list[str]) -> float:
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode:
        raise PodscaleError(f"{' '.join(argv[2:4])} failed: {res.stderr.strip()[-300:]}")
    return time.monotonic() - start


def _load_seconds(run: Path, cached: bool) -> float:
    """``analysis.load_run`` alone in a fresh process (without or with the cache)."""
    if not cached:
        shutil.rmtree(run / "cache", ignore_errors=True)
    code = ("import sys, time; from podscale.analysis import load_run; t = time.perf_counter(); "
            f"load_run({str(run)!r}); print(time.perf_counter() - t)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        raise PodscaleError(f"load_run failed: {res.stderr.strip()[-300:]}")
    return float(res.stdout.strip())


def report_scale(out: Path, processes=(64, 256), repeats: int = 3, log=print) -> dict:
    from podscale.selfbench.synthetic import make_run

    rows = []
    for p in processes:
        t0 = time.monotonic()
        run = make_run(out / f"synthetic-{p}", sizes=SIZES, hosts=(p,), dph=(1,),
                       iters=ITERS, rounds=1)
        samples = p * 2 * 2 * len(SIZES) * (ITERS + 1)
        size = sum(f.stat().st_size for f in run.glob("records/*/*.jsonl"))
        log(f"  {p} processes: {samples:,} samples, {size / 1e6:.0f} MB of JSON Lines, "
            f"written in {time.monotonic() - t0:.0f}s")
        load_cold = [_load_seconds(run, cached=False) for _ in range(repeats)]
        load_warm = [_load_seconds(run, cached=True) for _ in range(repeats)]
        report = [_seconds([sys.executable, "-m", "podscale", "report", str(run), "--out",
                            str(out / f"report-{p}")]) for _ in range(repeats)]
        shutil.rmtree(run / "cache", ignore_errors=True)
        cold = _seconds([sys.executable, "-m", "podscale", "report", str(run), "--out",
                         str(out / f"report-{p}")])
        rows.append({"processes": p, "samples": samples, "jsonl_mb": size / 1e6,
                     "load_jsonl_s": statistics.median(load_cold), "load_jsonl_all_s": load_cold,
                     "load_cache_s": statistics.median(load_warm), "load_cache_all_s": load_warm,
                     "report_s": statistics.median(report), "report_all_s": report,
                     "report_cold_s": cold})
        log(f"    load: JSON Lines {rows[-1]['load_jsonl_s']:.2f}s, cache "
            f"{rows[-1]['load_cache_s']:.2f}s; podscale report {rows[-1]['report_s']:.1f}s "
            f"(runs {', '.join(f'{x:.1f}' for x in report)}; without cache {cold:.1f}s)")
        shutil.rmtree(run)
    first, last = rows[0], rows[-1]
    growth = last["report_s"] / first["report_s"]
    return {"rows": rows, "growth": growth, "samples_growth": last["samples"] / first["samples"],
            "target_s": TARGET_S}


def summary_lines(r: dict) -> list[str]:
    last = r["rows"][-1]
    return [f"  report of {last['processes']} processes ({last['samples']:,} samples): "
            f"{last['report_s']:.1f}s median (target <= {r['target_s']:.0f}s), "
            f"{last['report_cold_s']:.1f}s the first time (no cache yet); from "
            f"{r['rows'][0]['processes']} to {last['processes']} processes the report grows "
            f"{r['growth']:.2f}x for {r['samples_growth']:.0f}x the samples"]
