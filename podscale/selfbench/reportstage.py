"""bench-self's report stage: do loading and reports scale to pods?

Synthetic runs written with podscale's own record types (:mod:`podscale.selfbench.
synthetic`) of P processes x 48 cases (dot and psum x 2 variants x 12 sizes) x 50 timed
iterations — 9.8 million samples at 4096 processes — then ``podscale report`` through the
CLI as a user runs it: once without the columnar cache (cold: the JSON Lines are parsed
and the cache written) and ``repeats`` times with it (warm). Targets at 4096 processes:
<= 10 s warm, <= 30 s cold, growing no faster than the samples. The record format is
chosen by measurement: the same 256-process run written one JSON line per sample (schema
podscale.run/2) and one line per sample block (podscale.run/3), loaded cold side by side.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from podscale.core import runfolder as rf
from podscale.core.errors import PodscaleError
from podscale.selfbench import Log

SIZES = tuple(1024 * 2**i for i in range(12))
ITERS = 50
TARGET_WARM_S, TARGET_COLD_S = 10.0, 30.0


def _seconds(argv: list[str]) -> float:
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode:
        raise PodscaleError(f"{' '.join(argv[2:4])} failed: {res.stderr.strip()[-300:]}")
    return time.monotonic() - start


def _load_seconds(run: Path, cached: bool) -> float:
    """``load_run`` alone in a fresh process (without or with the cache)."""
    if not cached:
        shutil.rmtree(run / "cache", ignore_errors=True)
    code = ("import sys, time; from podscale.analysis import load_run; t = time.perf_counter(); "
            f"load_run({str(run)!r}); print(time.perf_counter() - t)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        raise PodscaleError(f"load_run failed: {res.stderr.strip()[-300:]}")
    return float(res.stdout.strip())


def _make(out: Path, p: int, per_sample: bool = False) -> tuple[Path, float, float]:
    from podscale.selfbench.synthetic import make_run

    t0 = time.monotonic()
    run = make_run(out / f"synthetic-{p}{'-per-sample' if per_sample else ''}", sizes=SIZES,
                   hosts=(p,), dph=(1,), iters=ITERS, rounds=1, per_sample=per_sample)
    size = sum(f.stat().st_size for f in run.glob(rf.records_glob()))
    return run, size / 1e6, time.monotonic() - t0


def formats(out: Path, p: int = 256, repeats: int = 3) -> dict:
    """Cold load of one run in both record formats, interleaved."""
    rows = {}
    runs = {"per sample (run/2)": _make(out, p, per_sample=True), "blocks (run/3)": _make(out, p)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(repeats):
        for name, (run, _, _) in runs.items():
            times[name].append(_load_seconds(run, cached=False))
    for name, (run, mb, _) in runs.items():
        rows[name] = {"jsonl_mb": mb, "load_s": statistics.median(times[name]),
                      "load_all_s": times[name]}
        shutil.rmtree(run)
    return {"processes": p, "formats": rows}


def report_scale(out: Path, processes: tuple[int, ...] = (256, 1024, 4096), repeats: int = 3,
                 log: Log = print) -> dict:
    rows: list[dict[str, Any]] = []
    for p in processes:
        run, mb, written = _make(out, p)
        samples = p * 2 * 2 * len(SIZES) * (ITERS + 1)
        log(f"  {p} processes: {samples:,} samples, {mb:.0f} MB of JSON Lines, written in "
            f"{written:.0f}s")
        report = [str(sys.executable), "-m", "podscale", "report", str(run), "--out",
                  str(out / f"report-{p}")]
        shutil.rmtree(run / "cache", ignore_errors=True)
        cold = _seconds(report)
        warm = [_seconds(report) for _ in range(repeats)]
        load_warm = [_load_seconds(run, cached=True) for _ in range(repeats)]
        rows.append({"processes": p, "samples": samples, "jsonl_mb": mb,
                     "report_cold_s": cold, "report_s": statistics.median(warm),
                     "report_all_s": warm, "load_cache_s": statistics.median(load_warm)})
        log(f"    podscale report: {cold:.1f}s cold (JSON Lines parsed, cache written), warm "
            f"{rows[-1]['report_s']:.1f}s median (runs {', '.join(f'{x:.1f}' for x in warm)}); "
            f"load from the cache {rows[-1]['load_cache_s']:.2f}s")
        shutil.rmtree(run)
    first, last = rows[0], rows[-1]
    return {"rows": rows, "growth": last["report_s"] / first["report_s"],
            "cold_growth": last["report_cold_s"] / first["report_cold_s"],
            "samples_growth": last["samples"] / first["samples"],
            "target_warm_s": TARGET_WARM_S, "target_cold_s": TARGET_COLD_S,
            "formats": formats(out)}


def summary_lines(r: dict) -> list[str]:
    last = r["rows"][-1]
    lines = [f"  report of {last['processes']} processes ({last['samples']:,} samples): "
             f"{last['report_s']:.1f}s warm (target <= {r['target_warm_s']:.0f}s), "
             f"{last['report_cold_s']:.1f}s cold (target <= {r['target_cold_s']:.0f}s); from "
             f"{r['rows'][0]['processes']} to {last['processes']} processes warm grows "
             f"{r['growth']:.2f}x and cold {r['cold_growth']:.2f}x for "
             f"{r['samples_growth']:.0f}x the samples"]
    f = r["formats"]
    for name, row in f["formats"].items():
        lines.append(f"  record format {name}, {f['processes']} processes: {row['jsonl_mb']:.0f} "
                     f"MB, cold load {row['load_s']:.2f}s median")
    return lines
