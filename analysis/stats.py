"""Statistics derived from raw samples, each labelled by how it was aggregated.

The headline time of a case is ``time_s``: the median over timed iterations of the
maximum over processes (the slowest process decides when a step is done).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.bandwidth import algbw, bus_factor
from analysis.load import CASE_COLUMNS

#: column -> how it is derived (shown in reports)
LABELS = {
    "time_s": "median over timed iterations of the max over processes",
    "time_min_s": "min over timed iterations of the max over processes",
    "time_p90_s": "90th percentile over timed iterations of the max over processes",
    "skew_s": "median over timed iterations of (max - min) over processes",
    "compile_s": "max over processes of lower+compile time",
    "gbps": "bytes per process / time_s, in GB/s (1e9 bytes/s)",
    "algbw": "bytes per device / time_s, in GB/s (nccl-tests algbw)",
    "busbw": "algbw x bus factor of the collective over all devices (nccl-tests busbw)",
    "gflops": "flops per process / time_s, in GFLOP/s",
    "wrong": "sum over processes of output elements outside tolerance",
}


def per_iteration(samples: pd.DataFrame, phase: str = "timed") -> pd.DataFrame:
    """Max, min and mean over processes of each (case, iteration) of ``phase``."""
    s = samples[samples["phase"] == phase]
    g = s.groupby(["case_id", "iteration"])["seconds"]
    return g.agg(t_max="max", t_min="min", t_mean="mean", processes="count").reset_index()


def summarize(samples: pd.DataFrame, cases: pd.DataFrame) -> pd.DataFrame:
    """One row per case with labelled statistics (see :data:`LABELS`)."""
    it = per_iteration(samples)
    it["spread"] = it["t_max"] - it["t_min"]
    g = it.groupby("case_id")
    stats = pd.DataFrame(
        {
            "time_s": g["t_max"].median(),
            "time_min_s": g["t_max"].min(),
            "time_p90_s": g["t_max"].quantile(0.9),
            "skew_s": g["spread"].median(),
            "iters": g["t_max"].count(),
            "processes": g["processes"].max(),
        }
    )
    comp = samples[samples["phase"] == "compile"].groupby("case_id")["seconds"].max()
    stats["compile_s"] = comp
    agg = cases.groupby("case_id").agg(
        **{c: (c, "first") for c in CASE_COLUMNS},
        bytes_per_process=("bytes_per_process", "first"),
        bytes_per_device=("bytes_per_device", "first"),
        flops_per_process=("flops_per_process", "first"),
        wrong=("wrong", "sum"),
        checked=("checked", "sum"),
        reported=("process", "nunique"),
    )
    out = agg.join(stats, how="left").reset_index()
    out["gbps"] = out["bytes_per_process"] / out["time_s"] / 1e9
    out["gflops"] = out["flops_per_process"] / out["time_s"] / 1e9
    out["algbw"] = [algbw(b, t) / 1e9 for b, t in zip(out["bytes_per_device"], out["time_s"])]
    factors = [
        bus_factor(s, h * d)
        for s, h, d in zip(out["suite"], out["hosts"], out["devices_per_host"])
    ]
    out["busbw"] = [a * f if f is not None else np.nan for a, f in zip(out["algbw"], factors)]
    return out.sort_values(
        ["suite", "variant", "dtype", "hosts", "devices_per_host", "size"]
    ).reset_index(drop=True)
