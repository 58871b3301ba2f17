"""Statistics derived from raw samples, each labelled by how it was aggregated.

The headline time of a case is ``time_s``: the median over iterations of the
per-iteration aggregate over processes (and, for device time, their devices) — the max by
default (the slowest process decides when a step is done); ``across="mean"`` or ``"min"``
give the alternatives. It is the time of the case's best timing method
(:data:`podscale.core.timing.HEADLINE`: device, else chain, else each; the ``method``
column says which), and ``each_s``, ``chain_s``, ``device_s`` give every method's beside
it. Rank statistics follow OSU/nccl-tests: each process's median, then min/avg/max.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from podscale.analysis.data.frames import IDENTITY, SETTINGS, case_params
from podscale.analysis.models.bandwidth import algbw, bus_factor
from podscale.core.timing import HEADLINE, METHODS, PHASE_OF

ACROSS = ("max", "mean", "min")


def labels(across: str = "max") -> dict[str, str]:
    """Column -> how it is derived (shown in reports)."""
    agg = f"the {across} over processes"
    return {
        "time_s": f"median over iterations (of every round) of {agg} that take part "
              "(both of a pair), of the method named in 'method'",
        "method": "the timing method time_s is of: device (each execution's device time "
                  "from a profiler trace), else chain (back-to-back calls, one wait), else "
                  "each (one call waited on)",
        "each_s": f"median over timed iterations of {agg}, each call waited on",
        "chain_s": f"median over chains of {agg}, a chain's time over its calls",
        "device_s": f"median over executions of {agg} and their devices, device time",
        "host_s": "each_s - device_s: what a call waited on costs beyond the device's work",
        "dispatch_bound": "each_s exceeds device_s by 25% or more: the host's round trip, "
                          "not the device, sets the time a program that waits sees",
        "rounds": "independent repetitions (separate launches) with timed samples",
        "round_cv": "between-round coefficient of variation of each round's median "
                    "(what a comparison must beat; NaN with one round)",
        "iqr_s": f"interquartile range over timed iterations of {agg}",
        "p90_s": f"90th percentile over timed iterations of {agg}",
        "p99_s": f"99th percentile over timed iterations of {agg}",
        "cv": f"coefficient of variation (std/mean) over timed iterations of {agg}",
        "ci_lo_s": "95% distribution-free confidence interval of time_s, lower bound",
        "ci_hi_s": "95% distribution-free confidence interval of time_s, upper bound",
        "rank_min_s": "min over processes of each process's median timed (each) iteration",
        "rank_avg_s": "mean over processes of each process's median timed (each) iteration",
        "rank_max_s": "max over processes of each process's median timed (each) iteration",
        "skew_s": "median over timed iterations of (max - min) over processes",
        "compile_s": "max over processes of the compile phase (lower+compile, or first call)",
        "gbps": "bytes per process / time_s, GB/s (1e9 bytes/s)",
        "algbw": "bytes per device / time_s, GB/s (nccl-tests algbw)",
        "busbw": "algbw x bus factor of the collective over all devices (nccl-tests busbw)",
        "gflops": "flops per process / time_s, GFLOP/s",
        "wrong": "sum over processes of output elements outside tolerance",
    }


LABELS = labels()


@functools.lru_cache(maxsize=256)
def median_ci_ranks(n: int, level: float = 0.95) -> tuple[int, int]:
    """0-based order statistics (lo, hi) of the distribution-free CI of the median: the
    narrowest symmetric pair x(j)..x(n-j+1) (1-based) whose exact binomial coverage
    1 - 2*P(Binom(n, 1/2) < j) is at least ``level``; (0, n-1) when n is too small.
    (The binomial sum in log space, term by term: what scipy.stats.binom.ppf gives, for
    every n to 5000 and spot checks to 333333, without importing scipy for ``show``.)"""
    alpha, lg, log_2n = (1 - level) / 2, math.lgamma(n + 1), n * math.log(2.0)
    cdf, j = 0.0, 0
    while j <= n:  # j: the smallest with P(X <= j) >= alpha
        cdf += math.exp(lg - math.lgamma(j + 1) - math.lgamma(n - j + 1) - log_2n)
        if cdf >= alpha:
            break
        j += 1
    return (0, n - 1) if j < 1 else (j - 1, n - j)


def median_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Distribution-free CI of the median from order statistics (exact binomial
    coverage >= ``level``); the full range when there are too few values."""
    x = np.sort(np.asarray(values, dtype=float))
    if len(x) == 0:
        return (math.nan, math.nan)
    lo, hi = median_ci_ranks(len(x), level)
    return float(x[lo]), float(x[hi])


def describe(values: ArrayLike) -> dict[str, float]:
    """Robust summary of one sample of times."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return {k: math.nan for k in ("median", "iqr", "p90", "p99", "cv", "ci_lo", "ci_hi")}
    q1, med, q3, p90, p99 = np.percentile(x, [25, 50, 75, 90, 99])
    mean = x.mean()
    lo, hi = median_ci(x)
    return {"median": med, "iqr": q3 - q1, "p90": p90, "p99": p99,
            "cv": float(x.std(ddof=1) / mean) if x.size > 1 and mean > 0 else 0.0,
            "ci_lo": lo, "ci_hi": hi}


def per_iteration(samples: pd.DataFrame, phase: str = "timed") -> pd.DataFrame:
    """Max, min and mean over processes (and devices, for ``device``) of each (case,
    round, iteration) of ``phase``."""
    if isinstance(samples["case_id"].dtype, pd.CategoricalDtype) and len(samples):
        return _per_iteration_codes(samples, phase)
    s = samples[samples["phase"] == phase]
    g = s.groupby(["case_id", "round", "iteration"], observed=True)["seconds"]
    out = g.agg(t_max="max", t_min="min", t_mean="mean", processes="count").reset_index()
    out["case_id"] = out["case_id"].astype(object)  # a small frame: plain strings
    return out


def _per_iteration_codes(samples: pd.DataFrame, phase: str) -> pd.DataFrame:
    """:func:`per_iteration` on the case codes of a loaded run: one sort of an integer key
    and reductions over its runs (millions of samples: a fraction of a groupby's time)."""
    mask = (samples["phase"] == phase).to_numpy()
    if not mask.any():
        return pd.DataFrame(columns=["case_id", "round", "iteration", "t_max", "t_min",
                                     "t_mean", "processes"])
    codes = samples["case_id"].cat.codes.to_numpy()[mask].astype(np.int64)
    rnd = samples["round"].to_numpy()[mask].astype(np.int64)
    it = samples["iteration"].to_numpy()[mask].astype(np.int64)
    key = (codes * (int(rnd.max()) + 1) + rnd) * (int(it.max()) + 1) + it
    order = np.argsort(key, kind="stable")
    ks, v = key[order], samples["seconds"].to_numpy()[mask][order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    count = np.diff(np.r_[starts, len(ks)])
    first = order[starts]
    names = np.asarray(samples["case_id"].cat.categories, dtype=object)
    return pd.DataFrame({"case_id": names[codes[first]], "round": rnd[first],
                         "iteration": it[first], "t_max": np.maximum.reduceat(v, starts),
                         "t_min": np.minimum.reduceat(v, starts),
                         "t_mean": np.add.reduceat(v, starts) / count, "processes": count})


def method_iterations(phases: dict[str, pd.DataFrame],
                      prefer: tuple[str, ...] = HEADLINE) -> pd.DataFrame:
    """Per case, the :func:`per_iteration` rows of the first method of ``prefer`` it has
    (``phases``: each method's per-iteration frame), with a ``method`` column."""
    parts: list[pd.DataFrame] = []
    seen: set[str] = set()
    for method in prefer:
        it = phases.get(method)
        if it is None or it.empty:
            continue
        it = it[~it["case_id"].isin(seen)]
        if len(it):
            parts.append(it.assign(method=method))
            seen |= set(it["case_id"])
    if not parts:
        return pd.DataFrame(columns=["case_id", "round", "iteration", "t_max", "t_min",
                                     "t_mean", "processes", "method"])
    return pd.concat(parts, ignore_index=True)


def by_method(phases: dict[str, pd.DataFrame], col: str = "t_max") -> pd.DataFrame:
    """Per case, every method's median over iterations of ``col`` (``each_s``,
    ``chain_s``, ``device_s``), ``host_s`` (each - device) and ``dispatch_bound``."""
    cols = {}
    for method in METHODS:
        it = phases.get(method)
        if it is not None and len(it):
            cols[f"{method}_s"] = it.groupby("case_id")[col].median()
    out = pd.DataFrame(cols, columns=[f"{m}_s" for m in METHODS], dtype=float)
    out["host_s"] = out["each_s"] - out["device_s"]
    out["dispatch_bound"] = out["each_s"] >= DISPATCH_BOUND * out["device_s"]
    out.index = out.index.astype(object)
    return out


#: each_s at least this many times device_s: the host's round trip sets the time
DISPATCH_BOUND = 1.25


def round_medians(it: pd.DataFrame, col: str = "t_max") -> pd.DataFrame:
    """Per (case, round): the median over that round's timed iterations of ``col``."""
    return it.groupby(["case_id", "round"])[col].median().rename("median").reset_index()


def round_spread(g: pd.DataFrame, col: str) -> dict[str, float]:
    meds = g.groupby("round")[col].median()
    cv = float(meds.std(ddof=1) / meds.mean()) if len(meds) > 1 else math.nan
    return {"rounds": len(meds), "round_cv": cv}


#: :func:`_case_stats`' columns, there whether or not any case has iterations (a run
#: stopped before its first case ended has none)
CASE_STATS = ["method", "time_s", "iqr_s", "p90_s", "p99_s", "cv", "ci_lo_s", "ci_hi_s",
              "time_min_s", "skew_s", "n_iters", "processes", "rounds", "round_cv"]


def _case_stats(it: pd.DataFrame, col: str) -> pd.DataFrame:
    rows = {}
    for case_id, g in it.groupby("case_id"):
        d = describe(g[col])
        rows[case_id] = {
            "method": g["method"].iloc[0] if "method" in g else "each",
            "time_s": d["median"], "iqr_s": d["iqr"], "p90_s": d["p90"], "p99_s": d["p99"],
            "cv": d["cv"], "ci_lo_s": d["ci_lo"], "ci_hi_s": d["ci_hi"],
            "time_min_s": g[col].min(), "skew_s": (g["t_max"] - g["t_min"]).median(),
            "n_iters": len(g), "processes": g["processes"].max(),
            **round_spread(g, col),
        }
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=CASE_STATS)


def of_method(samples: pd.DataFrame, methods: pd.Series | None) -> pd.DataFrame:
    """The samples of each case's timing method (``methods``: case id -> method, as the
    ``method`` column of :func:`method_iterations`), or the ``each`` samples (phase
    ``timed``) where ``methods`` is None."""
    if methods is None:
        return samples[samples["phase"] == "timed"]
    want = samples["case_id"].astype(object).map(methods.map(PHASE_OF))
    return samples[(samples["phase"].astype(object) == want).to_numpy()]


def process_medians(samples: pd.DataFrame) -> pd.Series:
    """Each process's median timed (``each``) iteration per case (index: case_id,
    process)."""
    timed = samples[samples["phase"] == "timed"]
    return timed.groupby(["case_id", "process"], observed=True)["seconds"].median()


def phase_iterations(samples: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every timing method's :func:`per_iteration` frame."""
    return {m: per_iteration(samples, PHASE_OF[m]) for m in METHODS}


def summarize(samples: pd.DataFrame, cases: pd.DataFrame, across: str = "max",
              it: pd.DataFrame | None = None, medians: pd.Series | None = None,
              phases: dict[str, pd.DataFrame] | None = None,
              prefer: tuple[str, ...] = HEADLINE) -> pd.DataFrame:
    """One row per case with labelled statistics (see :func:`labels`); ``phases``,
    ``it`` and ``medians``: the samples' :func:`phase_iterations`, the headline method's
    iterations (:func:`method_iterations` of ``prefer``) and :func:`process_medians`
    where they are already computed."""
    if across not in ACROSS:
        raise ValueError(f"across must be one of {ACROSS}, got {across!r}")
    phases = phase_iterations(samples) if phases is None else phases
    it = method_iterations(phases, prefer) if it is None else it
    stats = _case_stats(it, f"t_{across}").join(by_method(phases, f"t_{across}"))
    ranks = process_medians(samples) if medians is None else medians
    ranks = ranks.groupby("case_id", observed=True)
    stats = stats.join(ranks.agg(rank_min_s="min", rank_avg_s="mean", rank_max_s="max"))
    stats.index = stats.index.astype(object)
    compiled = samples[samples["phase"] == "compile"].groupby("case_id", observed=True)
    stats["compile_s"] = compiled["seconds"].max().rename(index=str)
    params = case_params(cases)
    first = [*IDENTITY, *params, *SETTINGS, "bytes_per_process", "bytes_per_device",
             "flops_per_process", "collective", "participants", "hosts_per_group",
             "compile_kind"]
    agg = cases.groupby("case_id", sort=False).agg(
        **{c: (c, "first") for c in first},
        wrong=("wrong", "sum"),
        checked=("checked", "sum"),
        unchecked=("unchecked", "sum"),
        exact_checked=("exact_checked", "sum"),
        unsampled=("unsampled", "sum"),
        lowered=("lowered", "sum"),
        max_error=("max_error", "max"),
        group_members=("group_members", "first"),
        program=("program", "first"),
        reported=("process", "nunique"),
    )
    out = agg.join(stats, how="left").reset_index()
    out["gbps"] = out["bytes_per_process"] / out["time_s"] / 1e9
    out["gflops"] = out["flops_per_process"] / out["time_s"] / 1e9
    out["algbw"] = [algbw(b, t) / 1e9 for b, t in zip(out["bytes_per_device"], out["time_s"])]
    # busbw is N/A for one participant (nothing crosses a link)
    factors = [bus_factor(c, n) if n > 1 else None
               for c, n in zip(out["collective"], out["participants"])]
    out["busbw"] = [a * f if f is not None else np.nan for a, f in zip(out["algbw"], factors)]
    out["across"] = across
    if "run_id" in samples.columns:
        out.insert(0, "run_id", samples["run_id"].iloc[0] if len(samples) else None)
    return out.sort_values(["workload", "variant", "dtype", "hosts", "devices_per_host",
                            *params], kind="stable").reset_index(drop=True)
