"""Scaling predictions: how a collective's time grows with its participant count n.

Over every case of one collective sweep (workload x variant x dtype x devices per host x
every parameter but ``size`` and ``group``) measured at several n — more hosts, or groups
of 2, 4, ... devices inside one job — one joint model of the round medians::

    t(S, n) = a0 + a1 g(n) + B(S, n) (c0 + c1 h(n))

B = S x bus factor(n) is the bytes each device puts on the bus (nccl-tests' algebra,
``analysis/models/bandwidth.py``), so alpha(n) = a0 + a1 g(n) is the latency and
beta(n) = 1 / (c0 + c1 h(n)) a bus bandwidth; g and h grow as none, log2 n, n - 1 or
(n - 1)^2, and of the families within 2 AICc units of the best the simplest is kept
(fewest parameters, then slowest growth: predictions extrapolate).

Groups inside one host and groups across hosts use different links (shared memory or
NVLink/ICI vs the network), so they are separate sweeps (``regime``, from the cases'
``hosts_per_group``): a study that adds hosts models the across-hosts points only. Groups
that cross the slices of a multi-slice job (over ``dcn``, or every axis) ride the
data-centre network: a sweep of their own, ``across slices``, whose n over ``dcn`` is the
slice count, so ``--slices 2,4,8`` predicts the collective at more slices than ran.

The families, their fit and the intervals are :mod:`podscale.analysis.models.scalefit`'s
(95% prediction intervals that redo the choice of form). A sweep predicts beyond what
ran only from 3 or more distinct n (two fix a line through any form; ``notes`` says what
to run instead), and a prediction more than 4x beyond the largest n says how far. Where
a sweep has 4 or more n, it is refitted without its largest n, predicts that n, and the
error against the measurement and whether the interval held it are reported (the held-out
check is the prediction the model would make, so it too fits 3 or more n).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.models.bandwidth import bus_factor
from podscale.analysis.models.ceilings import crosses_dcn
from podscale.analysis.models.scalefit import bootstrap, fit, predict
from podscale.analysis.models.stats import method_iterations, phase_iterations, round_medians

NOT_KEYS = ("size", "group", "groups")  # what varies within one sweep besides the layout
BASE = ["workload", "variant", "dtype", "devices_per_host", "regime"]


def points(samples: pd.DataFrame, table: Summary,
           rm: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per (case, round) of collectives over 2+ participants with a size: the
    sweep key, n, size, S (bytes per device), bus bytes and the round median t; and the
    key columns."""
    summary = table.frame
    if "size" not in summary.columns:
        return pd.DataFrame(), []
    coll = summary[summary["collective"].notna() & (summary["participants"] > 1)
                   & summary["size"].notna()]
    if coll.empty:
        return pd.DataFrame(), []
    others = [c for c in table.param_columns if c not in NOT_KEYS]
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


PREDICT_FROM = 3  # distinct n a prediction beyond what ran needs
FAR = 4  # beyond this many times the largest n measured, a prediction says how far


def _instead(regime: str, ns: list[int]) -> str:
    """What to run so that a sweep of ``ns`` predicts: one more participant count."""
    how = {"across hosts": "more hosts: --hosts", "across slices": "more slices: --slices"
           }.get(regime, "more devices: --devices-per-host or --group-sizes")
    return f"add a third participant count, e.g. n = {2 * ns[-1]} ({how})"


def _label_of(ns: list[int], nn: float) -> str:
    far = nn / ns[-1]
    return f"model output (measured n: {','.join(map(str, ns))}" + (
        f"; {far:g}x the largest" if far > FAR else "") + ")"


def scaling_models(samples: pd.DataFrame, summary: Summary,
                   predict_n: Sequence[int] = (64, 256), draws: int = 300,
                   rm: pd.DataFrame | None = None,
                   floor: Callable[[str, int, float], float] | None = None
                   ) -> dict[str, pd.DataFrame]:
    """``models`` (per sweep: family, coefficients, fit error, ``predicts``), ``heldout``
    (the largest n predicted from the smaller ones vs measured, where 4+ n ran),
    ``predictions`` (model output at ``predict_n`` for every swept size, with intervals,
    where 3+ n ran), the ``points`` fitted, ``curves`` (the model at n = 2, 4, ... up to
    the largest predicted n, at each sweep's largest size, for plots) and ``notes`` (the
    sweeps that predict nothing, and what to run instead). A sweep needs 2+ sizes and
    2+ n to be fitted. ``floor``: the least time the hardware allows a collective of n
    participants and bus bytes (:func:`podscale.analysis.models.ceilings.least_time`):
    each prediction's ``floor_us``, and a prediction under it says so."""
    pts, keys = points(samples, summary, rm)
    models, held, preds, curves, notes = [], [], [], [], []
    for key, g in (pts.groupby(keys, dropna=False, sort=True) if len(pts) else ()):
        ns = sorted(int(n) for n in g["n"].unique())
        if len(ns) < 2 or g["size"].nunique() < 2 or s_at(g) is None:
            continue
        d = dict(zip(keys, key))
        m = fit(*_columns(g))
        a0, a1, c0, c1 = m["coef"]
        predicts = len(ns) >= PREDICT_FROM
        models.append({**d, "n_values": ",".join(map(str, ns)), "points": len(g),
                       "family": _label(m["family"]), "a0_us": a0 * 1e6, "a1_us": a1 * 1e6,
                       "c0_ns_per_B": c0 * 1e9, "c1_ns_per_B": c1 * 1e9,
                       "rel_rmse": m["rel_rmse"], "predicts": predicts})
        if not predicts:
            notes.append({**d, "n_values": ",".join(map(str, ns)),
                          "instead": _instead(str(d.get("regime")), ns)})
            continue
        if len(ns) > PREDICT_FROM:
            held += heldout(g, d, draws)
        p, c = _predicted(g, d, m, ns, predict_n, draws)
        if floor is not None and d.get("regime") != "across slices":
            p = [_floored(row, floor, g["collective"].iloc[0]) for row in p]
        preds += p
        curves += c
    return {"models": pd.DataFrame(models), "heldout": pd.DataFrame(held),
            "predictions": pd.DataFrame(preds), "points": pts,
            "curves": pd.DataFrame(curves), "notes": pd.DataFrame(notes)}


def _floored(row: dict, floor: Callable[[str, int, float], float], coll: str) -> dict:
    least = floor(coll, row["n"], row["busbw_gbps"] * 1e9 * row["predicted_us"] * 1e-6)
    under = row["predicted_us"] < least * 1e6
    return {**row, "floor_us": least * 1e6, "label": row["label"] + (
        f"; under the least time the hardware allows, {least * 1e6:.3g} us "
        f"({getattr(floor, 'source', '')})" if under else "")}


def _predicted(g: pd.DataFrame, d: dict, m: dict, ns: list[int], predict_n: Sequence[int],
               draws: int) -> tuple[list[dict], list[dict]]:
    """(prediction rows at ``predict_n`` for every size; curve rows at n = 2, 4, ... at
    the largest size), from one bootstrap over both."""
    sizes = sorted(g["size"].unique())
    grid = 2 ** np.arange(1, int(np.log2(max(predict_n, default=ns[-1]))) + 1)
    cn, cb = _at(g, [sizes[-1]], grid.tolist())
    pn, pb = _at(g, sizes, predict_n)
    at_n, at_bus = np.r_[cn, pn], np.r_[cb, pb]
    lo, hi = bootstrap(*_columns(g), m, at_n, at_bus, draws=draws)
    tp = predict(m, at_n, at_bus)
    k = len(cn)
    curves = [{**d, "n": int(nn), "size": int(sizes[-1]), "predicted_us": t * 1e6,
               "lo_us": tl * 1e6, "hi_us": th * 1e6, "measured": nn <= ns[-1]}
              for nn, t, tl, th in zip(cn, tp[:k], lo[:k], hi[:k])]
    sizes_at = [s for _ in predict_n for s in sizes]
    preds = [{**d, "n": int(nn), "size": int(s), "predicted_us": t * 1e6, "lo_us": tl * 1e6,
              "hi_us": th * 1e6, "busbw_gbps": b / t / 1e9 if t > 0 else math.nan,
              "beyond": nn / ns[-1], "label": _label_of(ns, nn)}
             for nn, s, t, tl, th, b in zip(pn, sizes_at, tp[k:], lo[k:], hi[k:], pb)]
    return preds, curves
