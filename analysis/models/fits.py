"""Latency-bandwidth fits: t(S) = alpha + S / beta over each size sweep.

Per workload x variant x dtype x axes x layout (every parameter but ``size`` held fixed),
over the round medians of its sizes (one point per size and round: each round is an
independent launch). For a collective, S is the per-device buffer times nccl-tests' bus
factor for its n participants, so beta is a *bus* bandwidth, comparable with the busbw
column and with link peaks; for a local workload S is the bytes per process and beta its
GB/s. The fit is in relative terms (residuals / t, so a 4 KiB point weighs as much as a
1 MiB one), reweighted with Huber weights (robust to the bimodal and straggling rounds of
a busy machine), alpha and 1/beta kept >= 0, with 95% intervals from a residual bootstrap
(simulated with 4 sizes x 4 rounds and 5% noise they cover the truth 90-92% of the time:
percentile intervals from few points run narrow). The half-bandwidth size
S_half = alpha * beta is the buffer at which half of beta is reached (Hockney's n½), and
:func:`half_peak_bytes` the one at which half of the device's peak is. The times are the
run's headline method (device, else chain, else each: :meth:`Run.prefer`), so alpha is the
operation's own latency where the device time is known; ``host_us`` states beside it the
median per-call host cost (each - device) of the sweep's cases.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.models.bandwidth import bus_factor
from podscale.analysis.models.stats import method_iterations, phase_iterations, round_medians

COLUMNS = ["workload", "variant", "dtype", "axes", "hosts", "devices_per_host", "slices", "n",
           "basis", "sizes", "points", "method", "alpha_us", "alpha_lo", "alpha_hi",
           "beta_gbps", "beta_lo", "beta_hi", "s_half_bytes", "r2", "host_us"]
KEYS = ["workload", "variant", "dtype", "hosts", "devices_per_host", "slices"]
MIN_SIZES = 3  # two sizes determine alpha and beta exactly: no fit, no check of the model


def _fit(x: np.ndarray, y: np.ndarray, iters: int = 8, scale: float = 0.1) -> np.ndarray:
    """(alpha, 1/beta) per row of ``y`` (shape (B, n), one fit per row, vectorised):
    least squares on relative residuals (y - alpha - x/beta) / y, reweighted with Huber
    weights (``scale``: the relative error beyond which a point counts less), both
    parameters kept >= 0 (a negative one is set to 0 and the other refitted)."""
    y = np.atleast_2d(y)
    h = np.ones_like(y)
    for _ in range(iters):
        w = h / y ** 2
        sw, sx, sxx = w.sum(1), (w * x).sum(1), (w * x * x).sum(1)
        sy, sxy = (w * y).sum(1), (w * x * y).sum(1)
        det = sw * sxx - sx ** 2
        a = (sxx * sy - sx * sxy) / det
        b = (sw * sxy - sx * sy) / det
        a, b = (np.where(a < 0, 0, np.where(b < 0, sy / sw, a)),
                np.where(a < 0, sxy / sxx, np.where(b < 0, 0, b)))
        r = np.abs(y - a[:, None] - x * b[:, None]) / y
        h = np.minimum(1, scale / np.maximum(r, 1e-12))
    return np.stack([a, b], axis=1)


def fit_points(x: np.ndarray, y: np.ndarray, boot: int = 400, seed: int = 0) -> dict:
    """alpha (s) and beta (bytes/s) of t = alpha + x/beta, both >= 0, fitted in relative
    terms (every size weighs alike) and robustly; 95% intervals from a residual bootstrap
    (relative residuals resampled onto the fit); S_half = alpha * beta; r2 of log t."""
    (a, b), = _fit(x, y)
    fitted = a + x * b
    res = y / fitted
    n = len(y)  # residuals widened by sqrt(n / (n - 2)): two parameters were fitted
    spread = np.exp((np.log(res) - np.log(res).mean()) * np.sqrt(n / max(n - 2, 1)))
    rng = np.random.default_rng(seed)
    draws = _fit(x, fitted * rng.choice(spread, (boot, n))) if boot \
        else np.full((1, 2), np.nan)
    lo, hi = (np.percentile(draws, q, axis=0) for q in (2.5, 97.5))
    inv = lambda v: 1 / v if v > 0 else float("inf")  # noqa: E731
    logs = np.log(y)
    ss = float(((logs - logs.mean()) ** 2).sum())
    beta = inv(b)
    return {"alpha": float(a), "alpha_lo": float(lo[0]), "alpha_hi": float(hi[0]),
            "beta": beta, "beta_lo": inv(hi[1]), "beta_hi": inv(lo[1]),
            "s_half": a * beta if np.isfinite(beta) else float("nan"),
            "r2": 1 - float((np.log(res) ** 2).sum()) / ss if ss > 0 else float("nan")}


class Fitted(NamedTuple):
    """The fits (:func:`fits`' table) and how many sweeps had 2 sizes: too few to fit."""

    table: pd.DataFrame
    too_few: int


def fits(samples: pd.DataFrame, summary: Summary, boot: int = 400,
         rm: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per size sweep (``COLUMNS``, then the workloads' other parameters, e.g.
    ``op`` and ``algorithm``); sweeps with fewer than :data:`MIN_SIZES` sizes are left
    out (:func:`fit_sweeps` counts them). ``rm``: the samples' round medians, if already
    computed."""
    return fit_sweeps(samples, summary, boot, rm).table


def fit_sweeps(samples: pd.DataFrame, summary: Summary, boot: int = 400,
               rm: pd.DataFrame | None = None) -> Fitted:
    """:func:`fits`, and the count of sweeps left out with 2 sizes."""
    rm = round_medians(method_iterations(phase_iterations(samples))) if rm is None else rm
    meta = summary.frame.set_index("case_id")
    extra_meta = [c for c in ("method", "host_s") if c in meta.columns]
    others = [c for c in summary.param_columns if c != "size"]
    keys = KEYS + [c for c in others if c in meta.columns]
    rm = rm.join(meta[keys + ["bytes_per_device", "bytes_per_process", "collective",
                              "participants", *extra_meta]], on="case_id")
    rows, too_few = [], 0
    for key, g in rm.groupby(keys, dropna=False, sort=True):
        first = g.iloc[0]
        n = int(first["participants"]) if pd.notna(first["participants"]) else 1
        factor = bus_factor(first["collective"], n) if n > 1 else None
        if factor:
            x, basis = g["bytes_per_device"].to_numpy(float) * factor, "busbw"
        else:
            x, basis = g["bytes_per_process"].to_numpy(float), "bytes/process"
        if len(np.unique(x)) < MIN_SIZES:
            too_few += len(np.unique(x)) > 1
            continue
        f = fit_points(x, g["median"].to_numpy(float), boot=boot)
        d = dict(zip(keys, key))
        rows.append({**d, "axes": d.get("axes", "all"), "n": n, "basis": basis,
                     "sizes": len(np.unique(x)), "points": len(x),
                     "alpha_us": f["alpha"] * 1e6, "alpha_lo": f["alpha_lo"] * 1e6,
                     "alpha_hi": f["alpha_hi"] * 1e6, "beta_gbps": f["beta"] / 1e9,
                     "beta_lo": f["beta_lo"] / 1e9, "beta_hi": f["beta_hi"] / 1e9,
                     "s_half_bytes": f["s_half"], "r2": f["r2"],
                     "method": first.get("method", "each"),
                     "host_us": float(g["host_s"].median()) * 1e6 if "host_s" in g else np.nan})
    extra = [k for k in keys if k not in COLUMNS]  # the workloads' other parameters
    return Fitted(pd.DataFrame(rows, columns=COLUMNS + extra), too_few)


def half_peak_bytes(alpha_us: float, beta_gbps: float, peak_gbps: float | None) -> float:
    """n½ against a peak: the size (in the fit's basis) at which the fitted bandwidth
    S / (alpha + S/beta) reaches half of ``peak_gbps``; inf where beta never does, NaN
    without a peak."""
    if not peak_gbps or not np.isfinite(peak_gbps):
        return float("nan")
    half = peak_gbps / 2
    if beta_gbps <= half:
        return float("inf")
    return alpha_us * 1e-6 * half * 1e9 / (1 - half / beta_gbps)


def model_times(summary: Summary, table: pd.DataFrame) -> pd.Series:
    """The fitted time in seconds, alpha + x/beta, of every case of ``summary`` whose size
    sweep has a row in ``table`` (x in that row's basis); NaN elsewhere."""
    return regimes(summary, table)["model_s"]


def regimes(summary: Summary, table: pd.DataFrame) -> pd.DataFrame:
    """Per case of ``summary``: ``model_s`` (alpha + x/beta), its sweep's ``alpha_us``,
    ``s_half_bytes`` and ``r2``, and ``regime``: "bandwidth" where x >= S_half (the size
    at half of beta: the transfer term dominates), "latency" below, None without a fit."""
    cols = ["model_s", "alpha_us", "s_half_bytes", "r2", "regime"]
    frame = summary.frame
    if table.empty:
        return pd.DataFrame({c: np.nan for c in cols}, index=frame.index).astype(
            {"regime": object})
    others = [c for c in summary.param_columns if c != "size" and c in table.columns]
    keys = KEYS + others
    left = frame[keys + ["bytes_per_device", "bytes_per_process", "collective",
                         "participants"]].astype({c: object for c in others})
    right = table[keys + ["alpha_us", "beta_gbps", "basis", "s_half_bytes", "r2"]].astype(
        {c: object for c in others})
    m = left.merge(right, on=keys, how="left")
    factor = [bus_factor(c, int(n)) if n > 1 else None
              for c, n in zip(m["collective"], m["participants"])]
    x = np.where(m["basis"] == "busbw",
                 m["bytes_per_device"] * pd.Series([f or np.nan for f in factor]),
                 m["bytes_per_process"])
    t = m["alpha_us"] * 1e-6 + x / (m["beta_gbps"] * 1e9)
    regime = np.where(m["s_half_bytes"].isna(), np.array(None, dtype=object),
                      np.where(x >= m["s_half_bytes"], "bandwidth", "latency"))
    return pd.DataFrame({"model_s": t.to_numpy(float), "alpha_us": m["alpha_us"].to_numpy(float),
                         "s_half_bytes": m["s_half_bytes"].to_numpy(float),
                         "r2": m["r2"].to_numpy(float), "regime": regime}, index=frame.index)
