"""Where the wall time went: each launch's phases (the interpreter starting, imports,
joining the job, then per case preparing, compiling, warm-up, barriers, timed iterations,
checks, writing records), the slowest process per phase named, and who joined last.

From the worker's ledger records (:mod:`podscale.startup.ledger`). Join waits compare
wall-clock marks of different processes: exact on one machine, within clock sync (NTP:
about a millisecond) across hosts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from podscale.analysis.units import time_h
from podscale.core.records import LEDGER_PHASES as PHASES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLUMNS = ["launch", "phase", "max_s", "process", "median_s"]


def launches(ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per launch (layout and round) and phase: the slowest process's seconds, who
    it is, and the median over processes."""
    if ledger.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for (layout, rnd), g in ledger.groupby(["layout", "round"], sort=True):
        for name in PHASES:
            col = f"phase.{name}"
            if col not in g or g[col].isna().all():
                continue
            top = g.loc[g[col].idxmax()]
            rows.append({"launch": f"{layout} round {rnd}", "phase": name,
                         "max_s": float(top[col]), "process": int(top["process"]),
                         "median_s": float(g[col].median())})
    return pd.DataFrame(rows, columns=COLUMNS)


def stragglers(ledger: pd.DataFrame) -> pd.DataFrame:
    """Per launch with join marks: the process that started joining last (the others wait
    for it inside ``jax.distributed.initialize``), how long after the first it came, and
    how long the others waited."""
    need = {"mark.init_start", "mark.joined"}
    if ledger.empty or not need <= set(ledger.columns):
        return pd.DataFrame(columns=["launch", "process", "late_s", "others_waited_s"])
    rows = []
    for (layout, rnd), g in ledger.dropna(subset=list(need)).groupby(["layout", "round"]):
        if len(g) < 2:
            continue
        last = g.loc[g["mark.init_start"].idxmax()]
        others = g[g["process"] != last["process"]]
        rows.append({"launch": f"{layout} round {rnd}", "process": int(last["process"]),
                     "late_s": float(last["mark.init_start"] - g["mark.init_start"].min()),
                     "others_waited_s": float(
                         (others["mark.joined"] - others["mark.init_start"]).median())})
    return pd.DataFrame(rows, columns=["launch", "process", "late_s", "others_waited_s"])


def phase_totals(ledger: pd.DataFrame) -> pd.Series:
    """Seconds per phase, the slowest process's in each launch summed over launches,
    largest first (empty for an empty ledger)."""
    per = launches(ledger)
    return per.groupby("phase")["max_s"].sum().sort_values(ascending=False)


MEMORY = ["launch", "process", "peak_mb", "phase", "phase_mb"]


def memory(ledger: pd.DataFrame) -> pd.DataFrame:
    """podscale's own footprint per launch: the process with the largest peak RSS, and the
    phase that raised its peak the most (``rss.<phase>`` MB of the ledger records)."""
    if ledger.empty or "rss.peak" not in ledger or ledger["rss.peak"].isna().all():
        return pd.DataFrame(columns=MEMORY)
    rows = []
    for (layout, rnd), g in ledger.dropna(subset=["rss.peak"]).groupby(["layout", "round"]):
        top = g.loc[g["rss.peak"].idxmax()]
        grew = {p: top.get(f"rss.{p}") for p in PHASES}
        grew = {p: float(v) for p, v in grew.items() if isinstance(v, float) and v == v}
        phase = max(grew, key=lambda p: grew[p]) if grew else ""
        rows.append({"launch": f"{layout} round {rnd}", "process": int(top["process"]),
                     "peak_mb": float(top["rss.peak"]), "phase": phase,
                     "phase_mb": grew.get(phase, 0.0)})
    return pd.DataFrame(rows, columns=MEMORY)


def sentences(ledger: pd.DataFrame, threshold_s: float = 0.5) -> list[str]:
    """What dominates the wall time, and the join straggler where one came late."""
    per = launches(ledger)
    if per.empty:
        return []
    total = phase_totals(ledger)
    share = total / total.sum()
    top = ", ".join(f"{p} {share[p]:.0%}" for p in total.index[:3])
    measured = share.get("timed", 0.0)
    out = [f"wall time (slowest process per phase, summed over {per.launch.nunique()} "
           f"launch(es)): {top}; timed iterations {measured:.0%}"]
    mem = memory(ledger)
    if not mem.empty:
        top = mem.loc[mem["peak_mb"].idxmax()]
        out.append(f"podscale's own footprint: peak RSS {top.peak_mb:.0f} MB (process "
                   f"{top.process}, {top.launch})"
                   + (f", {top.phase_mb:.0f} MB of it reached in {top.phase}"
                      if top.phase else ""))
    lag = stragglers(ledger)
    for r in lag[lag["late_s"] >= threshold_s].itertuples():
        out.append(f"join straggler in {r.launch}: process {r.process} began joining "
                   f"{time_h(r.late_s)} after the first; the others waited "
                   f"{time_h(r.others_waited_s)} (median) in jax.distributed.initialize")
    return out


def stacked(ledger: pd.DataFrame) -> Figure:
    """Stacked bars per launch: each phase's slowest process."""
    import matplotlib.pyplot as plt

    per = launches(ledger)
    wide = per.pivot_table(index="launch", columns="phase", values="max_s", aggfunc="first")
    wide = wide[[p for p in PHASES if p in wide.columns]]
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * len(wide)))
    wide.plot.barh(stacked=True, ax=ax, width=0.7, colormap="tab20")
    ax.set_xlabel("seconds (per phase, its slowest process)")
    ax.set_ylabel("")
    ax.legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    return fig
