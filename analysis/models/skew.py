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


def slowest_slice(matrix: pd.DataFrame, summary: pd.DataFrame) -> dict | None:
    """Over the multi-slice cases: each slice's median relative time (over its processes
    and the cases), and the slowest slice against the others' median; None without
    such cases."""
    if matrix.empty or "slices" not in summary:
        return None
    multi = summary[(summary["slices"] > 1) & summary["case_id"].isin(matrix.columns)]
    rows = [(int(p) // (int(r.hosts) // int(r.slices)), int(p), float(v))
            for r in multi.itertuples() for p, v in matrix[r.case_id].dropna().items()]
    if not rows:
        return None
    df = pd.DataFrame(rows, columns=["slice", "process", "relative"])
    typical = df.groupby("slice")["relative"].median()
    if len(typical) < 2:
        return None
    top = int(typical.idxmax())
    return {"slice": top, "relative": float(typical[top] / typical.drop(top).median()),
            "processes": sorted(set(df.loc[df["slice"] == top, "process"])),
            "cases": len(multi)}


#: a late arrival is named where it was the last (the shortest device time) in more of
#: the case's executions than chance makes likely (one-sided binomial test against 1/P,
#: p < LATE_P: with two processes one is always last), and the others' median device time
#: exceeds its own by LATE_SHARE of theirs and by LATE_FLOOR_S
LATE_P = 0.01
LATE_SHARE = 0.25
LATE_FLOOR_S = 50e-6
#: collectives in which every participant waits for every other: the one the others wait
#: for is the shortest (a broadcast's root or a permute's sender is short by its part)
SYMMETRIC = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
LATE_COLUMNS = ["case_id", "process", "last_in", "executions", "its_device_s",
                "others_device_s", "others_wait_s"]


def late_arrivals(samples: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per case of a symmetric collective whose groups span processes, with device
    samples (``samples``: the participants'): the process the others waited for — the
    last to arrive (the shortest device time, its devices' longest) in more executions
    than chance would make it (:data:`LATE_P`), with the others' median device time over
    its own by :data:`LATE_SHARE` of theirs and at least :data:`LATE_FLOOR_S` — how often
    it was last, its median, the others' and what they waited (the difference)."""
    spans = summary["hosts_per_group"] if "hosts_per_group" in summary else summary["hosts"]
    coll = summary[summary["collective"].isin(SYMMETRIC) & (spans > 1)]
    if coll.empty or not (samples["phase"] == "device").any():
        return pd.DataFrame(columns=LATE_COLUMNS)
    dev = samples[(samples["phase"] == "device") & samples["case_id"].isin(coll["case_id"])]
    per = dev.groupby(["case_id", "round", "iteration", "process"], observed=True)[
        "seconds"].max().reset_index()
    rows = []
    for case_id, g in per.groupby("case_id", observed=True):
        if g["process"].nunique() < 2:
            continue
        last = g.loc[g.groupby(["round", "iteration"])["seconds"].idxmin(), "process"]
        top = int(last.mode().iloc[0])
        med = g.groupby("process")["seconds"].median()
        others = float(med.drop(top).median())
        wait = others - float(med[top])
        chance = _tail(int((last == top).sum()), len(last), 1 / g["process"].nunique())
        if chance < LATE_P and wait >= max(LATE_SHARE * others, LATE_FLOOR_S):
            rows.append({"case_id": str(case_id), "process": top,
                         "last_in": int((last == top).sum()), "executions": len(last),
                         "its_device_s": float(med[top]), "others_device_s": others,
                         "others_wait_s": wait})
    return pd.DataFrame(rows, columns=LATE_COLUMNS)


def _tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    import math

    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k, n + 1))
