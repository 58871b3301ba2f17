"""Scaling predictions: how a collective's time grows with its participant count n.

Over every case of one collective sweep (workload x variant x dtype x devices per host x
every parameter but ``size`` and ``group``) measured at several n — more hosts, or groups
of 2, 4, ... devices inside one job — one joint model of the round medians::

    t(S, n) = a0 + a1 g(n) + B(S, n) (c0 + c1 h(n))

B = S x bus factor(n) is the bytes each device puts on the bus (nccl-tests' algebra,
``analysis/models/bandwidth.py``), so alpha(n) = a0 + a1 g(n) is the latency and
beta(n) = 1 / (c0 + c1 h(n)) a bus bandwidth. g and h are each one of ``none``, ``log2``
(a tree's or recursive doubling's depth), ``linear`` (n - 1: a ring's steps) or
``quadratic`` ((n - 1)^2: every pair contending for one medium, as processes sharing a
few cores do); every family is fitted by non-negative least squares in relative terms
(each point weighs alike); of the families within 2 AICc units of the best, the
simplest is kept (fewest parameters, then slowest growth: predictions extrapolate).

Groups inside one host and groups across hosts use different links (shared memory or
NVLink/ICI vs the network), so they are separate sweeps (``regime``, from the cases'
``hosts_per_group``): a study that adds hosts models the across-hosts points only. Groups
that cross the slices of a multi-slice job (over ``dcn``, or every axis) ride the
data-centre network: a sweep of their own, ``across slices``, whose n over ``dcn`` is the
slice count, so ``--slices 2,4`` predicts the collective at more slices than ran.

Intervals are 95% prediction intervals from a residual bootstrap (relative residuals
resampled onto the fit, the family held fixed, plus a new measurement's scatter); they do
not cover a wrong family, which the held-out check exposes: where a sweep has 3 or more
n, it is refitted without its largest n, predicts that n, and the error against the
measurement is reported. Predictions beyond what ran are model output, labelled so.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from podscale.analysis.data.frames import param_columns
from podscale.analysis.models.bandwidth import bus_factor
from podscale.analysis.models.ceilings import crosses_dcn
from podscale.analysis.models.stats import method_iterations, phase_iterations, round_medians

GROWTH = {"none": None, "log2": np.log2, "linear": lambda n: n - 1.0,
          "quadratic": lambda n: (n - 1.0) ** 2}
FAMILIES = list(itertools.product(GROWTH, GROWTH))  # (latency growth, bandwidth growth)
NOT_KEYS = ("size", "group", "groups")  # what varies within one sweep besides the layout
BASE = ["workload", "variant", "dtype", "devices_per_host", "regime"]


def _design(n: np.ndarray, bus: np.ndarray, family: tuple[str, str]) -> np.ndarray:
    g, h = (GROWTH[f] for f in family)
    cols = [np.ones_like(n), g(n) if g else np.zeros_like(n), bus,
            bus * h(n) if h else np.zeros_like(n)]
    return np.stack(cols, axis=-1)


def _nnls(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Coefficients >= 0 minimising sum(((t - x @ c) / t)^2); unused columns stay 0."""
    from scipy.optimize import nnls

    a = x / t[:, None]
    scale = np.abs(a).max(axis=0)
    used = scale > 0
    coef = np.zeros(x.shape[1])
    sol, _ = nnls(a[:, used] / scale[used], np.ones(len(t)), maxiter=50 * x.shape[1])
    coef[used] = sol / scale[used]
    return coef


def _aicc(rel_rss: float, points: int, k: int) -> float:
    if points - k - 1 <= 0:
        return math.inf
    return points * math.log(max(rel_rss, 1e-300) / points) + 2 * k + 2 * k * (k + 1) / (
        points - k - 1)


def fit(n: np.ndarray, bus: np.ndarray, t: np.ndarray) -> dict:
    """The family and coefficients (a0, a1, c0, c1) for points (n, bus, t): of the families
    within 2 AICc units of the best (as good, given the data), the simplest (fewest
    parameters, then the slowest growth), since predictions extrapolate in n."""
    rank = list(GROWTH)
    found: list[dict[str, Any]] = []
    for family in FAMILIES:
        x = _design(n, bus, family)
        coef = _nnls(x, t)
        rss = float((((t - x @ coef) / t) ** 2).sum())
        k = 2 + sum(f != "none" for f in family)
        found.append({"family": family, "coef": coef, "aicc": _aicc(rss, len(t), k),
                      "rel_rmse": math.sqrt(rss / len(t)),
                      "simplicity": (k, sum(rank.index(f) for f in family))})
    best = min(f["aicc"] for f in found)
    return min((f for f in found if f["aicc"] <= best + 2), key=lambda f: f["simplicity"])


def predict(model: dict, n: ArrayLike, bus: ArrayLike) -> np.ndarray:
    return _design(np.asarray(n, float), np.asarray(bus, float), model["family"]) @ \
        model["coef"]


def bootstrap(n: np.ndarray, bus: np.ndarray, t: np.ndarray, model: dict,
              at_n: ArrayLike, at_bus: ArrayLike, draws: int = 300,
              seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """95% prediction intervals at (at_n, at_bus): a residual bootstrap with the family
    held fixed (the fit's uncertainty), each prediction times a resampled relative
    residual (the scatter of a new measurement around the model)."""
    fitted = predict(model, n, bus)
    ratio = t / fitted
    k = 2 + sum(f != "none" for f in model["family"])
    spread = np.exp((np.log(ratio) - np.log(ratio).mean()) *
                    math.sqrt(len(t) / max(len(t) - k, 1)))
    rng = np.random.default_rng(seed)
    x = _design(n, bus, model["family"])
    at = _design(np.asarray(at_n, float), np.asarray(at_bus, float), model["family"])
    preds = np.array([(at @ _nnls(x, fitted * rng.choice(spread, len(t))))
                      * rng.choice(spread, len(at)) for _ in range(draws)])
    return np.percentile(preds, 2.5, axis=0), np.percentile(preds, 97.5, axis=0)


def points(samples: pd.DataFrame, summary: pd.DataFrame,
           rm: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per (case, round) of collectives over 2+ participants with a size: the
    sweep key, n, size, S (bytes per device), bus bytes and the round median t; and the
    key columns."""
    if "size" not in summary.columns:
        return pd.DataFrame(), []
    coll = summary[summary["collective"].notna() & (summary["participants"] > 1)
                   & summary["size"].notna()]
    if coll.empty:
        return pd.DataFrame(), []
    others = [c for c in param_columns(summary) if c not in NOT_KEYS]
    keys = BASE + [c for c in others if coll[c].notna().any()]
    rm = (round_medians(method_iterations(phase_iterations(samples))) if rm is None
          else rm).join(
        coll.set_index("case_id")[[k for k in keys if k != "regime"] + [
            "size", "participants", "hosts_per_group", "bytes_per_device", "collective"]],
        on="case_id", how="inner")
    rm["n"] = rm["participants"].astype(int)
    between = set(coll.loc[[crosses_dcn(r) for r in coll.itertuples()], "case_id"])
    rm["regime"] = np.where(rm["case_id"].isin(between), "across slices",
                            np.where(rm["hosts_per_group"].fillna(1) > 1, "across hosts",
                                     "within a host"))
    rm["bus"] = [b * bus_factor(c, n) for b, c, n in zip(rm["bytes_per_device"],
                                                          rm["collective"], rm["n"])]
    return rm.rename(columns={"median": "t", "bytes_per_device": "S"}), keys


def s_at(g: pd.DataFrame) -> Callable[[Any, Any], Any] | None:
    """S (bytes per device) as a function of (size, n) for one sweep: S = size x r, with
    r either the same at every n (most collectives) or proportional to n (all_gather's
    receive buffer), read off the measured cases."""
    r = (g["S"] / g["size"]).to_numpy(float)
    n = g["n"].to_numpy(float)
    if np.allclose(r, r[0], rtol=1e-9):
        return lambda size, nn: size * r[0]
    if np.allclose(r / n, r[0] / n[0], rtol=1e-9):
        return lambda size, nn: size * nn * r[0] / n[0]
    return None


def _label(family: tuple[str, str]) -> str:
    return f"alpha {family[0]}, 1/beta {family[1]}"


def _columns(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(g[c].to_numpy(float) for c in ("n", "bus", "t"))


def _at(g: pd.DataFrame, sizes: Sequence[float],
        ns: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(n, bus bytes) of each (size, n) pair."""
    coll, s_of = g["collective"].iloc[0], s_at(g)
    if s_of is None:
        raise ValueError("S is neither size x r nor size x n x r in this sweep")
    at_n = np.array([nn for nn, _ in itertools.product(ns, sizes)], float)
    at_bus = np.array([s_of(s, nn) * bus_factor(coll, int(nn))
                       for nn, s in itertools.product(ns, sizes)])
    return at_n, at_bus


def heldout(g: pd.DataFrame, d: dict, draws: int) -> list[dict]:
    """The sweep refitted without its largest n, predicting it; one row per size."""
    ns = sorted(g["n"].unique())
    top = ns[-1]
    part, test = g[g["n"] < top], g[g["n"] == top]
    model = fit(*_columns(part))
    meas = test.groupby("size")["t"].median()
    at_n, at_bus = _at(g, meas.index, [top])
    pred = predict(model, at_n, at_bus)
    lo, hi = bootstrap(*_columns(part), model, at_n, at_bus, draws=draws)
    return [{**d, "fitted_on_n": ",".join(map(str, ns[:-1])), "n": int(top), "size": int(s),
             "measured_us": tm * 1e6, "predicted_us": tp * 1e6, "lo_us": tl * 1e6,
             "hi_us": th * 1e6, "error": tp / tm - 1, "within_interval": bool(tl <= tm <= th),
             "family": _label(model["family"])}
            for s, tm, tp, tl, th in zip(meas.index, meas.to_numpy(), pred, lo, hi)]


def scaling_models(samples: pd.DataFrame, summary: pd.DataFrame,
                   predict_n: Sequence[int] = (64, 256), draws: int = 300,
                   rm: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """``models`` (per sweep: family, coefficients, fit error), ``heldout`` (the largest n
    predicted from the smaller ones vs measured, where 3+ n ran), ``predictions`` (model
    output at ``predict_n`` for every swept size, with intervals), the ``points``
    fitted, and ``curves`` (the model at n = 2, 4, ... up to the largest predicted n, at
    each sweep's largest size, for plots). A sweep needs 2+ sizes and 2+ n."""
    pts, keys = points(samples, summary, rm)
    models, held, preds, curves = [], [], [], []
    for key, g in (pts.groupby(keys, dropna=False, sort=True) if len(pts) else ()):
        ns = sorted(g["n"].unique())
        if len(ns) < 2 or g["size"].nunique() < 2 or s_at(g) is None:
            continue
        d = dict(zip(keys, key))
        m = fit(*_columns(g))
        a0, a1, c0, c1 = m["coef"]
        models.append({**d, "n_values": ",".join(map(str, ns)), "points": len(g),
                       "family": _label(m["family"]), "a0_us": a0 * 1e6, "a1_us": a1 * 1e6,
                       "c0_ns_per_B": c0 * 1e9, "c1_ns_per_B": c1 * 1e9,
                       "rel_rmse": m["rel_rmse"]})
        if len(ns) >= 3:
            held += heldout(g, d, draws)
        sizes = sorted(g["size"].unique())
        grid = 2 ** np.arange(1, int(np.log2(max(predict_n, default=ns[-1]))) + 1)
        at_n, at_bus = _at(g, [sizes[-1]], grid.tolist())
        lo, hi = bootstrap(*_columns(g), m, at_n, at_bus, draws=draws)
        curves += [{**d, "n": int(nn), "size": int(sizes[-1]), "predicted_us": tp * 1e6,
                    "lo_us": tl * 1e6, "hi_us": th * 1e6, "measured": nn <= ns[-1]}
                   for nn, tp, tl, th in zip(at_n, predict(m, at_n, at_bus), lo, hi)]
        at_n, at_bus = _at(g, sizes, predict_n)
        pred = predict(m, at_n, at_bus)
        lo, hi = bootstrap(*_columns(g), m, at_n, at_bus, draws=draws)
        sizes_at = [s for _ in predict_n for s in sizes]
        for nn, s, tp, tl, th, b in zip(at_n, sizes_at, pred, lo, hi, at_bus):
            preds.append({**d, "n": int(nn), "size": int(s), "predicted_us": tp * 1e6,
                          "lo_us": tl * 1e6, "hi_us": th * 1e6,
                          "busbw_gbps": b / tp / 1e9 if tp > 0 else math.nan,
                          "label": f"model output (measured n: {','.join(map(str, ns))})"})
    return {"models": pd.DataFrame(models), "heldout": pd.DataFrame(held),
            "predictions": pd.DataFrame(preds), "points": pts,
            "curves": pd.DataFrame(curves)}
