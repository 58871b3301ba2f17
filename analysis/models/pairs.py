"""Pair matrices: transfer time between every pair of processes, and the outlier.

Generic over workloads whose cases carry ``src`` and ``dst`` parameters (``pairs``): one
matrix per workload, mode, size and layout, in microseconds (rows: source, columns:
destination); a pair's time is the median over iterations (of the method of the table's
``time_s``) of the max over its two participants only (the other processes run no
transfer). A process is named an outlier when the median time of the pairs it takes part
in is ``threshold`` times the median of the other processes' medians, or more.
"""

from __future__ import annotations

import pandas as pd

from podscale.analysis.models.stats import of_method

KEYS = ["workload", "mode", "size", "hosts", "slices", "devices_per_host", "variant",
        "dtype"]


def _pair_rows(summary: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    if not {"src", "dst"} <= set(summary.columns):
        return summary.iloc[0:0]
    df = summary.dropna(subset=["src", "dst"]).copy()
    df["src"], df["dst"] = df["src"].astype(int), df["dst"].astype(int)
    methods = df.set_index("case_id")["method"] if "method" in df else None
    timed = of_method(samples, methods)
    timed = timed[timed["case_id"].isin(df["case_id"])]
    ends = df.set_index("case_id")[["src", "dst"]]
    timed = timed.assign(case_id=timed["case_id"].astype(object)).join(ends, on="case_id")
    timed = timed[(timed["process"] == timed["src"]) | (timed["process"] == timed["dst"])]
    per_step = timed.groupby(["case_id", "round", "iteration"])["seconds"].max()
    pair = per_step.groupby("case_id").median()
    df["time_s"] = df["case_id"].map(pair)
    return df


def matrices(summary: pd.DataFrame, samples: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    df = _pair_rows(summary, samples)
    keys = [k for k in KEYS if k in df.columns]
    out = []
    for key, g in df.groupby(keys, sort=False):
        m = g.pivot_table(index="src", columns="dst", values="time_s", aggfunc="first") * 1e6
        out.append((dict(zip(keys, key)), m.round(1)))
    return out


def pair_table(m: pd.DataFrame) -> pd.DataFrame:
    """A matrix for reading: rows "from P", columns "to P", microseconds to 3 figures,
    "-" where no transfer runs (a process to itself)."""
    from podscale.analysis.units import sig

    out = m.map(lambda v: "-" if pd.isna(v) else sig(float(v)))
    out.index = [f"from {int(p)}" for p in m.index]
    out.columns = [f"to {int(p)}" for p in m.columns]
    return out.rename_axis("time (us)").reset_index()


def outliers(summary: pd.DataFrame, samples: pd.DataFrame,
             threshold: float = 1.3) -> pd.DataFrame:
    """Per matrix: each process's median pair time, and which one stands out (if any)."""
    rows = []
    for key, m in matrices(summary, samples):
        procs = sorted(set(m.index) | set(m.columns))
        med = {p: pd.concat([m.loc[p] if p in m.index else pd.Series(dtype=float),
                             m[p] if p in m.columns else pd.Series(dtype=float)]).median()
               for p in procs}
        worst = max(med, key=lambda p: med[p])
        rest = pd.Series([v for p, v in med.items() if p != worst]).median()
        ratio = med[worst] / rest if rest > 0 else float("nan")
        rows.append({**key, "slowest_process": worst, "its_median_us": round(med[worst], 1),
                     "others_median_us": round(rest, 1), "ratio": round(ratio, 2),
                     "outlier": worst if ratio >= threshold else None})
    return pd.DataFrame(rows)
