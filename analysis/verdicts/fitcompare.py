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

KEYS = [c for c in COLUMNS[:COLUMNS.index("basis")]]


def _fits(run: Run) -> pd.DataFrame:
    if run.cases.empty:
        return pd.DataFrame(columns=COLUMNS)
    return fits(run.samples, run.table(), rm=run.round_medians())


def compare_fits(run_a: Run | Path, run_b: Run | Path) -> pd.DataFrame:
    a, b = _fits(as_run(run_a)), _fits(as_run(run_b))
    extra = [c for c in a.columns if c not in COLUMNS and c in b.columns]
    keys = [k for k in KEYS if k in a.columns and k in b.columns] + extra
    both = a.astype({k: str for k in keys}).merge(b.astype({k: str for k in keys}), on=keys,
                                                  suffixes=("_a", "_b"))
    out = both[keys].copy()
    for p, unit in (("alpha", "us"), ("beta", "gbps")):
        va, vb = both[f"{p}_{unit}_a"], both[f"{p}_{unit}_b"]
        out[f"{p}_a"], out[f"{p}_b"], out[f"{p}_ratio"] = va, vb, vb / va
        for side in ("a", "b"):
            out[f"{p}_lo_{side}"], out[f"{p}_hi_{side}"] = both[f"{p}_lo_{side}"], both[
                f"{p}_hi_{side}"]
        apart = (both[f"{p}_hi_b"] < both[f"{p}_lo_a"]) | (both[f"{p}_hi_a"] < both[f"{p}_lo_b"])
        out[f"{p}_verdict"] = apart.map({True: "changed", False: "~"})
    return out
