"""The few facts a reader needs first, as sentences a senior engineer would sign: each
names its cases, compares like with like (bandwidth-bound sizes with bandwidth ceilings,
latency-bound ones with the fitted alpha, S_half splitting them), says what it could not
judge and why, and leaves out what is true by construction (a case against a ceiling
measured from itself)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd

from podscale.analysis.units import bytes_h, sig, time_h
from podscale.core.case import key_of

if TYPE_CHECKING:
    from podscale.analysis.models.fits import Fitted

NOISY_CV = 0.2  # between-round spread above which a case's figure is called noisy
POOR_R2 = 0.9  # a fit explaining less of the variance is reported as poor
SELF = {"stream read": ("stream",), "transfer between processes": ("pairs", "ppermute")}


def _case(r: pd.Series) -> str:
    size = f" {bytes_h(r['bytes_per_device'])}" if r.get("bytes_per_device", 0) > 0 else ""
    lay = key_of(r["hosts"], r["devices_per_host"], r.get("slices", 1))
    return f"{r['workload']} {r['variant']} {r['dtype']}{size} on {lay}"


def _names(df: pd.DataFrame, most: int = 4) -> str:
    names = [_case(r) for _, r in df.head(most).iterrows()]
    more = len(df) - most
    return "; ".join(names) + (f"; and {more} more" if more > 0 else "")


def self_ceiling(r: pd.Series) -> bool:
    """A ceiling measured in the run from this case's own workload: 100% by construction."""
    label = str(r.get("ceiling", ""))
    return "this run" in label and any(
        key in label and r["workload"] in owners for key, owners in SELF.items())


def axis_findings(summary: pd.DataFrame) -> list[str]:
    """Across slices against inside one: per collective and multi-slice layout, the
    median over sizes of busbw over ``dcn`` as a share of busbw over ``ici``."""
    need = {"slices", "axes", "busbw", "size"}
    if not need <= set(summary.columns):
        return []
    s = summary[(summary["slices"] > 1) & summary["axes"].isin(["dcn", "ici"])]
    out = []
    for (wl, var, lay), g in s.groupby(["workload", "variant", "layout"], sort=True):
        t = g.pivot_table(index="size", columns="axes", values="busbw", aggfunc="median")
        if {"dcn", "ici"} <= set(t.columns):
            ratio = (t["dcn"] / t["ici"]).dropna()
            if len(ratio):
                out.append(f"{wl} {var} on {lay}: busbw across slices (dcn) is "
                           f"{ratio.median():.2f}x that inside one (ici), median over "
                           f"{len(ratio)} size(s): DCN is the data-centre network between "
                           "slices, ICI the chips' own links")
    return out


def ceiling_findings(summary: pd.DataFrame) -> list[str]:
    """% of ceiling over bandwidth-bound cases only; latency-bound ones against alpha."""
    if "pct_ceiling" not in summary or not summary["pct_ceiling"].notna().any():
        return ["no ceiling applies to this run's cases (see the Ceilings section)"]
    s = summary.dropna(subset=["pct_ceiling"])
    s = s[~s.apply(self_ceiling, axis=1)]
    regime = s["regime"] if "regime" in s else pd.Series(None, index=s.index)
    bw, lat, unknown = s[regime == "bandwidth"], s[regime == "latency"], s[regime.isna()]
    out = []
    if len(bw):
        best, worst = bw.loc[bw["pct_ceiling"].idxmax()], bw.loc[bw["pct_ceiling"].idxmin()]
        out.append(f"bandwidth-bound cases (size >= S_half of their fit): best "
                   f"{sig(best.pct_ceiling)}% of ceiling, {_case(best)} ({best.ceiling}); "
                   f"worst {sig(worst.pct_ceiling)}%, {_case(worst)}")
    if len(lat):
        top = lat.loc[lat["alpha_us"].idxmax()]
        out.append(f"{len(lat)} latency-bound case(s) (size < S_half) are held against their "
                   f"fitted alpha, not a bandwidth: median alpha "
                   f"{time_h(lat['alpha_us'].median() / 1e6)}, largest "
                   f"{time_h(top.alpha_us / 1e6)} ({_case(top)}, S_half "
                   f"{bytes_h(top.s_half_bytes)})")
    if len(unknown):
        out.append(f"{len(unknown)} case(s) not held against a ceiling: their size sweep has "
                   "no fit to say whether they are latency- or bandwidth-bound")
    return out


def fit_findings(fits: Fitted | None) -> list[str]:
    """Sweeps too short to fit, and fits that explain the times poorly."""
    out: list[str] = []
    if fits is None:
        return out
    fitted, too_few = fits
    if too_few:
        out.append(f"{too_few} size sweep(s) have 2 sizes: not fitted (alpha and beta need 3 "
                   "or more sizes to be checked; add --sizes)")
    poor = fitted[fitted["r2"] < POOR_R2] if len(fitted) else fitted
    if len(poor):
        worst = poor.loc[poor["r2"].idxmin()]
        where = key_of(worst.hosts, worst.devices_per_host, getattr(worst, "slices", 1))
        out.append(f"{len(poor)} of {len(fitted)} fit(s) explain the times poorly (r2 < "
                   f"{POOR_R2}; worst {worst.r2:.2f}, {worst.workload} {worst.variant} on "
                   f"{where}): treat their alpha and beta as rough")
    return out


def _scaling_models(scaled: dict) -> list[str]:
    out = []
    held = scaled.get("heldout", pd.DataFrame())
    if len(held):
        err = held["error"].abs()
        worst = held.loc[err.idxmax()]
        out.append(f"held-out: {int(held.within_interval.sum())} of {len(held)} inside their "
                   f"95% intervals (n={', '.join(map(str, sorted(held.n.unique())))} "
                   f"predicted from the smaller n within {err.median():.0%}, median |error|; "
                   f"worst {worst.error:+.0%}, {worst.workload} {bytes_h(worst['size'])})")
    notes = scaled.get("notes", pd.DataFrame())
    if len(notes):
        first = notes.iloc[0]
        out.append(f"no prediction beyond what ran for {len(notes)} sweep(s) measured at "
                   f"fewer than 3 participant counts (e.g. {first.workload}, "
                   f"{first.regime}, n = {first.n_values}): {first.instead}")
    pred = scaled.get("predictions", pd.DataFrame())
    if len(pred):  # from the sweep measured at the most n (a held-out one, if any)
        measured = pred["label"].str.count(",")
        top = pred[(measured == measured.max()) & (pred.n == pred.n.max())]
        top = top[top["size"] == top["size"].max()].sort_values("predicted_us").iloc[-1]
        out.append(f"model output: {top.workload} {bytes_h(top['size'])} at n={int(top.n)} "
                   f"predicted {time_h(top.predicted_us / 1e6)} (95% "
                   f"{time_h(top.lo_us / 1e6)} to {time_h(top.hi_us / 1e6)}), from measured "
                   f"{top.label.split('measured ')[-1].rstrip(')')}")
    return out + _more_slices(pred)


def _more_slices(pred: pd.DataFrame) -> list[str]:
    """The collective between slices (over ``dcn``: n is the slice count) predicted at
    the most slices asked for, from the slice counts that ran."""
    if not len(pred) or "axes" not in pred or "regime" not in pred:
        return []
    dcn = pred[(pred["regime"] == "across slices") & (pred["axes"] == "dcn")]
    if dcn.empty:
        return []
    top = dcn[dcn.n == dcn.n.max()]
    top = top[top["size"] == top["size"].max()].sort_values("predicted_us").iloc[-1]
    ran = top.label.split("measured n: ")[-1].rstrip(")").split(";")[0]
    return [f"model output between slices: {top.workload} {bytes_h(top['size'])} over dcn at "
            f"{int(top.n)} slices predicted {time_h(top.predicted_us / 1e6)} (95% "
            f"{time_h(top.lo_us / 1e6)} to {time_h(top.hi_us / 1e6)}), fitted on {ran} slices"]


def _spread(summary: pd.DataFrame) -> list[str]:
    """The largest spread between the processes that take part in a case."""
    multi = summary[(summary["hosts"] > 1) & summary["rank_min_s"].notna()].copy()
    if multi.empty:
        return []
    multi["spread"] = multi["rank_max_s"] / multi["rank_min_s"]
    top = multi.nlargest(1, "spread").iloc[0]
    return [f"largest spread between the processes taking part: {top.spread:.2f}x between "
            f"the slowest and fastest process's median ({_case(top)})"]


def onchip_findings(summary: pd.DataFrame) -> list[str]:
    """Stream cases whose buffers fit in the device's on-chip memory (4x or less)."""
    from podscale.analysis.models.ceilings import under_onchip

    small = under_onchip(summary)
    if small.empty:
        return []
    return [f"{len(small)} stream case(s) use buffers under 4x the device's on-chip memory "
            f"({bytes_h(float(small['onchip_bytes'].iloc[0]))}): they measure that memory, "
            f"not HBM or DRAM, so hold nothing against them: {_names(small)}"]


def timing_findings(summary: pd.DataFrame, late: pd.DataFrame | None = None,
                    device: bool = True) -> list[str]:
    """The processes others wait for at a collective (from device time), and, where the
    run's device time is a device's (``device``; not on CPU, whose op events a profiler
    slows), dispatch-bound cases: a call waited on takes 1.25x its device time or more."""
    out = []
    for r in (late if late is not None else pd.DataFrame()).head(3).itertuples():
        out.append(f"process {r.process} arrives last at the collective in {r.case_id} "
                   f"({r.last_in} of {r.executions} executions): the others wait "
                   f"{time_h(r.others_wait_s)} for it (device time {time_h(r.its_device_s)} "
                   f"against their {time_h(r.others_device_s)})")
    if not device:
        return out
    if "dispatch_bound" in summary:
        bound = summary[summary["dispatch_bound"].fillna(False).astype(bool)]
        if len(bound):
            out.append(f"{len(bound)} case(s) are dispatch-bound: a call waited on takes "
                       f"1.25x its device time or more (median host cost "
                       f"{time_h(float(bound['host_s'].median()))} a call), so a program "
                       f"that waits on every step sees the host's round trip, not the "
                       f"device: {_names(bound)}")
    return out


def degraded_findings(envs: pd.DataFrame) -> list[str]:
    """The JAX hooks the workers' release lacked (their env records' ``degraded``)."""
    extras = envs["extra"] if "extra" in envs else []
    return hooks_lacked(e.get("degraded") for e in extras if isinstance(e, dict))


def hooks_lacked(each: Iterable[object]) -> list[str]:
    """The JAX hooks a release lacked (``podscale.startup.jaxapi``'s ``degraded``, one
    mapping per process, hook -> what it cost; none where a process said none), each
    said once."""
    said: dict[str, str] = {}
    for hooks in each:
        if isinstance(hooks, dict):
            said.update(hooks)
    return [f"this JAX lacks a hook podscale uses ({hook}): {lost}"
            for hook, lost in sorted(said.items())]


def _slowest(slowest: pd.DataFrame | None, sl: dict | None = None) -> list[str]:
    """The slowest process across cases, and the slowest slice (``sl``)."""
    out: list[str] = []
    if slowest is None:
        return out
    if len(slowest) and slowest["median_relative"].iloc[0] > 1.05:
        top = slowest.iloc[0]
        out.append(f"slowest process: {int(top.process)}, typically "
                   f"{top.median_relative:.2f}x its cases' median process (slowest in "
                   f"{int(top.slowest_in)} of {int(top.cases)} cases; worst "
                   f"{top.worst_relative:.2f}x in {top.worst_case})")
    if sl and sl["relative"] > 1.05:
        out.append(f"slowest slice: slice {sl['slice']} (process(es) "
                   f"{', '.join(map(str, sl['processes']))}), typically "
                   f"{sl['relative']:.2f}x the other slices' processes in "
                   f"{sl['cases']} multi-slice case(s)")
    return out

