"""Links between processes from ring shifts: the P x P matrix, the slowest processes and
the slowest links. Generic over workloads whose cases carry a ``shift`` parameter (a ring
shift over the ``hosts`` axis: ``links``), one matrix per workload, size and layout.

At shift k, process i sends to i+k and receives from i-k, all processes at once. The link
i -> i+k takes the faster of its two ends' medians over timed iterations at shift k: both
ends of a slow link wait on it, while an end slowed by anything else (its other link, its
own work) is slow alone. A process's figure is the median over the shifts of its own
median time: a slow host is slow at every shift, while a process that only waits for it
is slow at one; it is named when that figure is ``threshold`` times the median of the
other processes' figures or more, and a link when it is ``threshold`` times the median
link of its matrix or more.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

KEYS = ["workload", "size", "hosts", "slices", "devices_per_host", "variant",
        "dtype"]
THRESHOLD = 1.3


class Sweep(NamedTuple):
    """One links sweep: its key, the matrix in seconds (rows source, columns
    destination) and ``own``: each process's median over the shifts of its own time."""

    key: dict
    matrix: pd.DataFrame
    own: list[float]


def matrices(summary: pd.DataFrame, medians: pd.Series) -> list[Sweep]:
    """Every links sweep (:class:`Sweep`); ``medians``: each process's median timed
    iteration per case (Run.process_medians)."""
    if "shift" not in summary.columns:
        return []
    rows = summary[summary["shift"].notna()]
    med = medians.rename("t").reset_index()
    med["case_id"] = med["case_id"].astype(object)
    out = []
    keys = [k for k in KEYS if k in rows.columns]
    for key, g in rows.groupby(keys, sort=False):
        n = int(g["hosts"].iloc[0])
        m, own = np.full((n, n), np.nan), np.full((n, n), np.nan)
        for case_id, shift in zip(g["case_id"], g["shift"].astype(int)):
            t = med[med["case_id"] == case_id].set_index("process")["t"]
            for i in range(n):
                j = (i + shift) % n
                if i in t.index:
                    own[i, shift] = t[i]
                if i in t.index and j in t.index:
                    m[i, j] = min(t[i], t[j])
        out.append(Sweep(dict(zip(keys, key)), pd.DataFrame(m, index=range(n), columns=range(n)),
                         np.nanmedian(own[:, 1:], axis=1).tolist() if n > 1 else []))
    return out


def outliers(m: pd.DataFrame, own: list[float] | None = None, threshold: float = THRESHOLD,
             k: int = 5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(processes by their own time over the shifts (``own``, else their median link),
    slowest first, with ``outlier``; the k slowest links, with their ratio to the
    matrix's median link)."""
    a = m.to_numpy()
    n = len(a)
    figure = np.asarray(own or
                        [np.nanmedian(np.r_[a[p, :], a[:, p]]) for p in range(n)], dtype=float)
    procs = []
    for p in np.argsort(-figure):
        rest = np.nanmedian(np.delete(figure, p)) if n > 1 else np.nan
        ratio = figure[p] / rest if rest > 0 else np.nan
        procs.append({"process": int(p), "median_s": float(figure[p]),
                      "others_s": float(rest), "ratio": float(ratio),
                      "outlier": bool(ratio >= threshold)})
    flat = [(float(a[i, j]), i, j) for i in range(n) for j in range(n) if i != j
            and not np.isnan(a[i, j])]
    typical = float(np.median([t for t, _, _ in flat])) if flat else np.nan
    links = [{"src": i, "dst": j, "time_s": t, "ratio": t / typical,
              "outlier": bool(t / typical >= threshold)}
             for t, i, j in sorted(flat, reverse=True)[:k]]
    return pd.DataFrame(procs), pd.DataFrame(links)


def summary_lines(summary: pd.DataFrame, medians: pd.Series) -> list[str]:
    """What the terminal says after the table: per sweep, who stands out."""
    from podscale.analysis.units import time_h

    lines = []
    for key, m, own in matrices(summary, medians):
        procs, links = outliers(m, own)
        head = f"{key['workload']} {key['size']} B on {key['hosts']} processes:"
        named = procs[procs["outlier"]]
        if named.empty:
            lines.append(f"{head} no process stands out (slowest: process "
                         f"{int(procs['process'].iloc[0])}, {procs['ratio'].iloc[0]:.2f}x "
                         "the others' median)")
        else:
            lines.append(f"{head} slow process(es) " + ", ".join(
                f"{int(r.process)} ({r.ratio:.2f}x the others' median, "
                f"{time_h(r.median_s)} per step)" for r in named.itertuples()))
        lines.append("  slowest links: " + ", ".join(
            f"{int(r.src)}->{int(r.dst)} {time_h(r.time_s)} ({r.ratio:.2f}x)"
            for r in links.itertuples()))
    return lines
