"""Latency-bandwidth fits of two runs side by side: did alpha or beta change?

Per size sweep both runs have (``analysis/models/fits.py``: t(S) = alpha + S/beta over round
medians, 95% bootstrap intervals), the ratio B/A of alpha and of beta, and a verdict per
parameter: ``changed`` where the two intervals do not overlap, ``~`` where they do. A
change in alpha with beta unchanged points at a fixed cost (launch, synchronisation); in
beta, at bandwidth (links, memory)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from podscale.analysis.models.fits import COLUMNS, fits
from podscale.analysis.run import Run, as_run
from podscale.core.case import layout_key

KEYS = [c for c in COLUMNS[:COLUMNS.index("basis")]]


def _fits(run: Run) -> pd.DataFrame:
    if run.cases.empty:
        return pd.DataFrame(columns=COLUMNS)
    return fits(run.samples, run.summary(), rm=run.round_medians())


def compare_fits(run_a: Run | Path, run_b: Run | Path) -> pd.DataFrame:
    a, b = _fits(as_run(run_a)), _fits(as_run(run_b))
    extra = [c for c in a.columns if c not in COLUMNS and c in b.columns]
    keys = [k for k in KEYS if k in a.columns and k in b.columns] + extra
    both = a.astype({k: str for k in keys}).merge(b.astype({k: str for k in keys}), on=keys,
                                                  suffixes=("_a", "_b"))
    out = both[keys].copy()
    for p, unit in (("alpha", "us"), ("beta", "GBps")):
        va, vb = both[f"{p}_{unit}_a"], both[f"{p}_{unit}_b"]
        out[f"{p}_a"], out[f"{p}_b"], out[f"{p}_ratio"] = va, vb, vb / va
        for side in ("a", "b"):
            out[f"{p}_lo_{side}"], out[f"{p}_hi_{side}"] = both[f"{p}_lo_{side}"], both[
                f"{p}_hi_{side}"]
        apart = (both[f"{p}_hi_b"] < both[f"{p}_lo_a"]) | (both[f"{p}_hi_a"] < both[f"{p}_lo_b"])
        out[f"{p}_verdict"] = apart.map({True: "changed", False: "~"})
    return out


def render(table: pd.DataFrame) -> str:
    from podscale.analysis.units import gbps_h, time_h

    lines = ["# fits: alpha and beta of A vs B per size sweep (t = alpha + S/beta over round "
             "medians, 95% bootstrap intervals; changed: the intervals do not overlap)"]
    if table.empty:
        return lines[0] + "\n# no size sweep (3+ sizes) in both runs"
    for r in table.itertuples():
        lay = layout_key(r.hosts, r.devices_per_host)
        what = f"{r.workload} {r.variant} {r.dtype} {r.axes} {lay}"
        lines.append(
            f"  {what:<44} alpha {time_h(r.alpha_a / 1e6)} -> {time_h(r.alpha_b / 1e6)} "
            f"({r.alpha_ratio:.2f}x, {r.alpha_verdict}); beta {gbps_h(r.beta_a)} -> "
            f"{gbps_h(r.beta_b)} ({r.beta_ratio:.2f}x, {r.beta_verdict})")
    return "\n".join(lines)
