"""Report tables: one workload's cases, fits, held-out checks, predictions and ceilings,
formatted for people (human units, 3 significant figures, never scientific notation,
N/A where a value does not apply), and Markdown rendering."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.units import bytes_h, cell, gbps_h, time_h
from podscale.core.case import key_of

HEAD_COLUMNS = {"version": "version", "variant": "variant", "dtype": "dtype"}
TABLE_COLUMNS = {
    "hosts": "hosts", "devices_per_host": "dev/host", "mesh": "mesh", "iters": "iters",
    "sync": "sync", "method": "method", "time_s": "time (us)", "host_s": "host (us)",
    "iqr_s": "IQR (us)",
    "p90_s": "p90 (us)", "cv": "CV", "rank_min_s": "rank min (us)", "rank_avg_s": "rank avg (us)",
    "rank_max_s": "rank max (us)", "gbps": "GB/s", "gflops": "GFLOP/s", "algbw": "algbw",
    "busbw": "busbw", "pct_ceiling": "% of ceiling", "pct_flops": "% of FLOP ceiling",
    "compile_s": "compile (ms)",
    "wrong": "#wrong",
}
_US = ("time_s", "host_s", "each_s", "iqr_s", "p90_s", "rank_min_s", "rank_avg_s", "rank_max_s")


def workload_table(table: Summary) -> pd.DataFrame:
    """One workload's rows: its own parameters after the head, only columns it has."""
    summary = table.frame
    params = [c for c in table.param_columns if summary[c].notna().any()]
    names = {**HEAD_COLUMNS, **{p: p for p in params}, **TABLE_COLUMNS}
    if table.simulated:  # each - device is no host cost on the CPU
        names = {("each_s" if k == "host_s" else k): ("each (us)" if k == "host_s" else v)
                 for k, v in names.items()}
    df = summary[[c for c in names if c in summary.columns]].copy()
    for c in _US:
        if c in df:
            df[c] = df[c] * 1e6
    df["compile_s"] = df["compile_s"] * 1e3
    df = df.rename(columns=names)

    return df.map(cell)


def fits_table(table: pd.DataFrame) -> pd.DataFrame:
    rows = [{"workload": r.workload, "variant": r.variant, "dtype": r.dtype,
             "axes": cell(r.axes),
             "layout": key_of(r.hosts, r.devices_per_host, getattr(r, "slices", 1)), "n": r.n,
             "alpha": f"{time_h(r.alpha_us / 1e6)} ({time_h(r.alpha_lo / 1e6)} to "
                      f"{time_h(r.alpha_hi / 1e6)})",
             "beta": f"{gbps_h(r.beta_gbps)} ({gbps_h(r.beta_lo)} to {gbps_h(r.beta_hi)})",
             "basis": r.basis, "method": getattr(r, "method", "each"),
             "host": _us(getattr(r, "host_us", float("nan"))),
             "S_half": bytes_h(r.s_half_bytes),
             "n½ (peak)": _half(getattr(r, "n_half_peak_bytes", float("nan"))),
             "r2": f"{r.r2:.2f}"}
            for r in table.itertuples()]
    return pd.DataFrame(rows)


def _us(v: float) -> str:
    return "N/A" if pd.isna(v) else time_h(v / 1e6)


def _half(v: float) -> str:
    """n½ against a peak: a size, ``never`` (the fitted bandwidth stays under half of it)
    or N/A (no peak)."""
    if pd.isna(v):
        return "N/A"
    return "never" if v == float("inf") else bytes_h(v)


def _key_cols(df: pd.DataFrame) -> list[str]:
    return [c for c in ("workload", "variant", "dtype", "axes", "op", "algorithm",
                        "devices_per_host", "regime") if c in df.columns]


def heldout_table(held: pd.DataFrame) -> pd.DataFrame:
    out = held[_key_cols(held) + ["fitted_on_n", "n"]].map(cell)
    out["size"] = held["size"].map(bytes_h)
    out["measured"] = (held["measured_us"] / 1e6).map(time_h)
    out["predicted (95%)"] = [f"{time_h(p / 1e6)} ({time_h(lo / 1e6)} to {time_h(hi / 1e6)})"
                              for p, lo, hi in zip(held.predicted_us, held.lo_us, held.hi_us)]
    out["error"] = [f"{e:+.0%}" for e in held["error"]]
    out["inside"] = held["within_interval"].map({True: "yes", False: "no"})
    return out


def predictions_table(pred: pd.DataFrame) -> pd.DataFrame:
    out = pred[_key_cols(pred) + ["n"]].map(cell)
    out["size"] = pred["size"].map(bytes_h)
    out["predicted (95%)"] = [f"{time_h(p / 1e6)} ({time_h(lo / 1e6)} to {time_h(hi / 1e6)})"
                              for p, lo, hi in zip(pred.predicted_us, pred.lo_us, pred.hi_us)]
    out["busbw"] = pred["busbw_gbps"].map(gbps_h)
    out["label"] = pred["label"]
    return out


def ceiling_table(summary: pd.DataFrame) -> pd.DataFrame:
    cols = ["workload", "variant", "dtype", "size", "op", "hosts", "devices_per_host",
            "method", "busbw", "gbps", "ceiling_gbps", "pct_ceiling", "ceiling", "gflops",
            "flops_ceiling_gflops", "pct_flops", "flops_ceiling"]
    return summary[[c for c in cols if c in summary.columns]].map(cell)


def readable(v: object) -> object:
    """A table cell as people read it: a whole float as an integer (a count pandas made a
    float beside a missing value), a missing one empty, others to 4 significant digits;
    anything else as it is."""
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f:
            return ""
        return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.4g}"
    return v


def markdown_table(df: pd.DataFrame) -> str:
    cells = [[str(c) for c in df.columns]] + [[str(v) for v in row] for row in df.to_numpy()]
    esc = [[c.replace("|", "\\|") for c in row] for row in cells]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(esc[0])]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in esc[1:]])
