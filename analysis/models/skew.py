"""Per-process views that scale to pods: each process's median time in each multi-host
case relative to that case's median over processes (a processes x cases matrix), and the
processes that are slowest across cases, named.

Cost grows with the number of samples (one groupby), not with processes x cases drawn as
markers: at 256 processes x 48 cases the matrix is one image.
"""

from __future__ import annotations

import pandas as pd


def relative(samples: pd.DataFrame, summary: pd.DataFrame,
             medians: pd.Series | None = None) -> pd.DataFrame:
    """Rows: process; columns: multi-host case ids (in summary order; not pair cases,
    where the other processes idle); values: the
    process's median timed iteration / the median of those medians over the case's
    processes (1 = typical, 1.2 = 20% slower than the case's typical process)."""
    multi = summary["hosts"] > 1
    if {"src", "dst"} <= set(summary.columns):  # pair cases: only 2 processes take part
        multi &= summary["src"].isna()  # (analysis/models/pairs.py has their own matrix)
    multi = summary.loc[multi, "case_id"]
    if multi.empty:
        return pd.DataFrame()
    if medians is None:
        from podscale.analysis.models.stats import process_medians

        medians = process_medians(samples)
    med = medians[medians.index.get_level_values("case_id").isin(multi)]
    rel = med / med.groupby(level="case_id", observed=True).transform("median")
    matrix = rel.unstack("case_id")
    matrix.columns = matrix.columns.astype(object)
    return matrix[[c for c in multi if c in matrix.columns]]


def slowest(matrix: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """The k processes whose median relative time over their cases is highest, with how
    many cases they were the slowest process in and their worst case."""
    if matrix.empty:
        return pd.DataFrame(columns=["process", "median_relative", "slowest_in", "cases",
                                     "worst_case", "worst_relative"])
    typical = matrix.median(axis=1)
    last = matrix.idxmax(axis=0).value_counts()
    rows = []
    for p in typical.sort_values(ascending=False).index[:k]:
        row = matrix.loc[p].dropna()
        rows.append({"process": int(p), "median_relative": float(typical[p]),
                     "slowest_in": int(last.get(p, 0)), "cases": len(row),
                     "worst_case": row.idxmax(), "worst_relative": float(row.max())})
    return pd.DataFrame(rows)
