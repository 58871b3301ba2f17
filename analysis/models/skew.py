"""Per-process views that scale to pods: each process's median time in each multi-host
case relative to that case's median over processes (a processes x cases matrix), and the
processes that are slowest across cases, named.

Cost grows with the number of samples (one groupby), not with processes x cases drawn as
markers: at 256 processes x 48 cases the matrix is one image.

:func:`late_arrivals` reads device time the other way round: in a collective across
processes, each device's execution holds the wait for the last participant, so the process
the others wait for is the one with the *shortest* device time, and the others' excess is
what it costs them.
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


#: a late arrival is named where the others' median device time exceeds its own by this
#: share of theirs (and by LATE_FLOOR_S): the rest is the collective's own spread
LATE_SHARE = 0.25
LATE_FLOOR_S = 50e-6
LATE_COLUMNS = ["case_id", "process", "its_device_s", "others_device_s", "others_wait_s"]


def late_arrivals(samples: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per collective case across processes with device samples: the process the others
    waited for (the shortest median device time, by :data:`LATE_SHARE` of the others'
    median and at least :data:`LATE_FLOOR_S`), its median, the others' and what they
    waited (the difference)."""
    coll = summary[summary["collective"].notna() & (summary["hosts"] > 1)]
    if coll.empty or not (samples["phase"] == "device").any():
        return pd.DataFrame(columns=LATE_COLUMNS)
    dev = samples[(samples["phase"] == "device") & samples["case_id"].isin(coll["case_id"])]
    med = dev.groupby(["case_id", "process"], observed=True)["seconds"].median()
    rows = []
    for case_id, g in med.groupby(level="case_id", observed=True):
        g = g.droplevel("case_id")
        if len(g) < 2:
            continue
        last = int(g.idxmin())
        others = float(g.drop(last).median())
        wait = others - float(g[last])
        if wait >= max(LATE_SHARE * others, LATE_FLOOR_S):
            rows.append({"case_id": str(case_id), "process": last,
                         "its_device_s": float(g[last]), "others_device_s": others,
                         "others_wait_s": wait})
    return pd.DataFrame(rows, columns=LATE_COLUMNS)
