"""The joint model t(S, n) = a0 + a1 g(n) + B (c0 + c1 h(n)) of one collective sweep:
its families, the fit of each, the choice among them and prediction intervals that carry
the uncertainty of that choice (:mod:`podscale.analysis.models.scalemodel` applies it).

g and h are each one of ``none``, ``log2`` (a tree's or recursive doubling's depth),
``linear`` (n - 1: a ring's steps) or ``quadratic`` ((n - 1)^2: every pair contending for
one medium, as processes sharing a few cores do). Every family is fitted by non-negative
least squares in relative terms (each point weighs alike).

Intervals: 95% prediction intervals from a bootstrap that redoes the choice of form.
Each draw takes a family by its AICc weight (exp(-dAICc / 2), normalised: the forms the
data cannot tell apart are drawn about as often), resamples its relative residuals onto
its fit, refits every family on that resampled data and again draws one by weight, and
predicts; a resampled residual on top is the scatter of a new measurement (its launch's
included: the points are per-round medians). On synthetic laws in and out of the families
(``tests/test_scalecoverage.py``) they hold 88-98% of the time at 2x beyond what ran;
intervals from the one chosen form held about half of the time.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

GROWTH = {"none": None, "log2": np.log2, "linear": lambda n: n - 1.0,
          "quadratic": lambda n: (n - 1.0) ** 2}
FAMILIES = list(itertools.product(GROWTH, GROWTH))  # (latency growth, bandwidth growth)


def design(n: np.ndarray, bus: np.ndarray, family: tuple[str, str]) -> np.ndarray:
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


def fit_all(n: np.ndarray, bus: np.ndarray, t: np.ndarray,
            xs: list[np.ndarray] | None = None) -> list[dict[str, Any]]:
    """Every family fitted to points (n, bus, t): family, coef, aicc, rel_rmse, k
    (``xs``: each family's design at (n, bus), where already built)."""
    rank = list(GROWTH)
    found = []
    for i, family in enumerate(FAMILIES):
        x = xs[i] if xs is not None else design(n, bus, family)
        coef = _nnls(x, t)
        rss = float((((t - x @ coef) / t) ** 2).sum())
        k = 2 + sum(f != "none" for f in family)
        found.append({"family": family, "coef": coef, "aicc": _aicc(rss, len(t), k),
                      "rel_rmse": math.sqrt(rss / len(t)), "k": k,
                      "simplicity": (k, sum(rank.index(f) for f in family))})
    return found


def weights(found: list[dict[str, Any]]) -> np.ndarray:
    """AICc weights of the fitted families (those without a finite AICc weigh 0, unless
    none has one: then alike)."""
    a = np.array([f["aicc"] for f in found], float)
    if not np.isfinite(a).any():
        return np.full(len(a), 1 / len(a))
    w = np.exp(-(a - a[np.isfinite(a)].min()) / 2)
    w[~np.isfinite(a)] = 0.0
    return w / w.sum()


def fit(n: np.ndarray, bus: np.ndarray, t: np.ndarray) -> dict[str, Any]:
    """The family and coefficients (a0, a1, c0, c1) for points (n, bus, t): of the families
    within 2 AICc units of the best (as good, given the data), the simplest (fewest
    parameters, then the slowest growth), since predictions extrapolate in n."""
    found = fit_all(n, bus, t)
    best = min(f["aicc"] for f in found)
    return min((f for f in found if f["aicc"] <= best + 2), key=lambda f: f["simplicity"])


def predict(model: dict, n: ArrayLike, bus: ArrayLike) -> np.ndarray:
    return design(np.asarray(n, float), np.asarray(bus, float), model["family"]) @ \
        model["coef"]


def _spread(t: np.ndarray, fitted: np.ndarray, k: int) -> np.ndarray:
    """Relative residuals, centred in log and scaled up for the k parameters fitted."""
    lr = np.log(t / np.maximum(fitted, t.min() * 1e-6))
    return np.exp((lr - lr.mean()) * math.sqrt(len(t) / max(len(t) - k, 1)))


def bootstrap(n: np.ndarray, bus: np.ndarray, t: np.ndarray, model: dict,
              at_n: ArrayLike, at_bus: ArrayLike, draws: int = 300,
              seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """95% prediction intervals at (at_n, at_bus), the choice of form redone in every draw
    (module docstring); always around ``model``'s own prediction."""
    rng = np.random.default_rng(seed)
    xs = [design(n, bus, f) for f in FAMILIES]
    found = fit_all(n, bus, t, xs)
    w = weights(found)
    at_n, at_bus = np.asarray(at_n, float), np.asarray(at_bus, float)
    preds = np.empty((draws, len(at_n)))
    for d in range(draws):
        i = rng.choice(len(found), p=w)
        fitted = xs[i] @ found[i]["coef"]
        spread = _spread(t, fitted, found[i]["k"])
        again = fit_all(n, bus, fitted * rng.choice(spread, len(t)), xs)
        chosen = again[rng.choice(len(again), p=weights(again))]
        preds[d] = predict(chosen, at_n, at_bus) * rng.choice(spread, len(at_n))
    own = predict(model, at_n, at_bus)
    return (np.minimum(np.percentile(preds, 2.5, axis=0), own),
            np.maximum(np.percentile(preds, 97.5, axis=0), own))
