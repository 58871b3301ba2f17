"""The few facts a reader needs first, as sentences: % of ceiling, scaling at the largest
host count, stragglers, compile cost, wrong results, noisy cases."""

from __future__ import annotations

import pandas as pd

from podscale.analysis.units import bytes_h, sig, time_h
from podscale.core.case import layout_key

NOISY_CV = 0.2  # between-round spread above which a case's figure is called noisy


def _case(r: pd.Series) -> str:
    size = f" size {int(r['size'])}" if "size" in r.index and pd.notna(r["size"]) else ""
    lay = layout_key(r["hosts"], r["devices_per_host"])
    return f"{r['workload']} {r['variant']} {r['dtype']}{size} on {lay}"


def _scaling_models(scaled: dict) -> list[str]:
    out = []
    held = scaled.get("heldout", pd.DataFrame())
    if len(held):
        err = held["error"].abs()
        worst = held.loc[err.idxmax()]
        out.append(f"scaling model held out: n={', '.join(map(str, sorted(held.n.unique())))}"
                   f" predicted from smaller n within {err.median():.0%} (median |error| over "
                   f"{len(held)} sizes; worst {worst.error:+.0%}, {worst.workload} "
                   f"{bytes_h(worst['size'])}); {int(held.within_interval.sum())} of {len(held)} "
                   "inside the 95% interval")
    pred = scaled.get("predictions", pd.DataFrame())
    if len(pred):  # from the sweep measured at the most n (a held-out one, if any)
        measured = pred["label"].str.count(",")
        top = pred[(measured == measured.max()) & (pred.n == pred.n.max())]
        top = top[top["size"] == top["size"].max()].sort_values("predicted_us").iloc[-1]
        out.append(f"model output: {top.workload} {bytes_h(top['size'])} at n={int(top.n)} "
                   f"predicted {time_h(top.predicted_us / 1e6)} (95% "
                   f"{time_h(top.lo_us / 1e6)} to {time_h(top.hi_us / 1e6)}), from measured "
                   f"{top.label.split('measured ')[-1].rstrip(')')}")
    return out


def findings(summary: pd.DataFrame, scaling: pd.DataFrame, outliers: pd.DataFrame,
             scaled: dict | None = None, slowest: pd.DataFrame | None = None) -> list[str]:
    """Sentences, most important first; each names the case it is about."""
    out: list[str] = []
    wrong = summary[summary["wrong"] > 0]
    if len(wrong):
        out.append(f"WRONG RESULTS in {len(wrong)} case(s), e.g. {_case(wrong.iloc[0])}: "
                   f"{int(wrong['wrong'].sum())} output element(s) outside the bound")
    if "pct_ceiling" in summary and summary["pct_ceiling"].notna().any():
        s = summary.dropna(subset=["pct_ceiling"])
        best, worst = s.loc[s["pct_ceiling"].idxmax()], s.loc[s["pct_ceiling"].idxmin()]
        line = (f"best {sig(best.pct_ceiling)}% of ceiling: {_case(best)} ({best.ceiling}); "
                f"worst {sig(worst.pct_ceiling)}%: {_case(worst)} ({worst.ceiling})")
        above = s[s["pct_ceiling"] > 100]
        if len(above):
            line += (f". {len(above)} case(s) exceed their ceiling: a ceiling measured in the "
                     "run is the best of one kind of transfer, not a bound on another")
        out.append(line)
    else:
        out.append("no ceiling applies to this run's cases (see the Ceilings section)")
    if not scaling.empty:
        top = scaling[scaling["hosts"] == scaling["hosts"].max()]
        for kind, g in top.groupby("kind"):
            lo = g.loc[g["efficiency"].idxmin()]
            out.append(f"{kind} scaling at {int(lo.hosts)} hosts: efficiency median "
                       f"{sig(g['efficiency'].median())} (lowest {sig(lo.efficiency)}: "
                       f"{lo.workload} {lo.variant} size {lo['size']})")
    if not outliers.empty and outliers["outlier"].notna().any():
        o = outliers.dropna(subset=["outlier"]).sort_values("ratio").iloc[-1]
        out.append(f"slow process in the pair matrices: process {int(o.outlier)} "
                   f"({o.ratio:.2f}x the others' median pair time, {o.workload})")
    out += _scaling_models(scaled or {})
    if slowest is not None and len(slowest) and slowest["median_relative"].iloc[0] > 1.05:
        top = slowest.iloc[0]
        out.append(f"slowest process: {int(top.process)}, typically "
                   f"{top.median_relative:.2f}x its cases' median process (slowest in "
                   f"{int(top.slowest_in)} of {int(top.cases)} cases; worst "
                   f"{top.worst_relative:.2f}x in {top.worst_case})")
    if "rank_max_s" in summary and (summary["hosts"] > 1).any():
        multi = summary[summary["hosts"] > 1].copy()
        multi["spread"] = multi["rank_max_s"] / multi["rank_min_s"]
        top = multi.nlargest(1, "spread").iloc[0]
        out.append(f"largest per-process spread: {top.spread:.2f}x between the slowest and "
                   f"fastest process's median ({_case(top)})")
    if "compile_s" in summary and summary["compile_s"].notna().any():
        c = summary.loc[summary["compile_s"].idxmax()]
        out.append(f"compile: median {time_h(summary['compile_s'].median())}, largest "
                   f"{time_h(c.compile_s)} ({_case(c)})")
    if "round_cv" in summary:
        noisy = summary[summary["round_cv"] > NOISY_CV]
        if len(noisy):
            out.append(f"{len(noisy)} of {len(summary)} cases are noisy (their rounds' "
                       f"medians spread more than {NOISY_CV:.0%}): compare them with care")
    return out
