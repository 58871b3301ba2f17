"""The ops that explain a change: each op's device time per execution, from the device
pass's trace of every round (a separate launch) of two runs, matched across them and
judged as case verdicts are.

- Every case record holds its device pass's ops (:func:`podscale.worker.devicetime.op_times`:
  per op, count and µs per execution of the case's module); per round, an op's time is the
  median over the processes.
- Ops are matched by name; where names moved (``fusion.3`` in A, ``fusion.4`` in B), by
  kind (the name less its number) in order of time; what is left is **new in B** or
  **gone in B** where it ran in every round of its run.
- Each matched op is judged with :func:`podscale.analysis.verdicts.compare.verdicts` on its
  per-round times (the same test, threshold and correction as the cases', over all the
  ops of all cases at once), against at least its case's own noise (``noise``: the half
  width of the case's 95% interval of B/A): an op of a case whose launches spread by 50%
  is not said to have moved by 40% on three rounds a side that happened to fall apart,
  so an A/A run flags no more ops than it flags cases. Its
  change in µs carries a bootstrap 95% interval over the rounds of each run (launch-to-
  launch variation), and is said as a share of the case's device time in A and of the
  case's change (the sum of its ops', per execution).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from podscale.analysis.verdicts.compare import verdicts

COLUMNS = ["case_id", "op", "op_b", "status", "a_us", "b_us", "delta_us", "delta_lo",
           "delta_hi", "case_a_us", "case_delta_us", "pct_of_case", "share", "ratio",
           "p_adj", "verdict"]
#: bootstrap draws for an op's change
DRAWS = 2000
#: a new or gone op is said where it takes at least this share of the case's device time
NEW_SHARE = 0.01


def per_round(cases: pd.DataFrame) -> dict[str, dict[str, np.ndarray]]:
    """Per case, per op: its µs per execution in each round (median over processes; NaN in
    a round that lacks it)."""
    if "ops" not in cases or cases["ops"].isna().all():
        return {}
    out: dict[str, dict[str, np.ndarray]] = {}
    for case_id, g in cases.dropna(subset=["ops"]).groupby("case_id"):
        rounds = sorted(g["round"].unique())
        found: dict[str, list[float]] = {}
        for i, (_, r) in enumerate(g.groupby("round")):
            times: dict[str, list[float]] = {}
            for ops in r["ops"]:
                for name, (_, us) in (ops or {}).items():
                    times.setdefault(name, []).append(float(us))
            for name, v in times.items():
                found.setdefault(name, [np.nan] * len(rounds))[i] = float(np.median(v))
        out[str(case_id)] = {k: np.asarray(v) for k, v in found.items()}
    return out


def kind(name: str) -> str:
    """An op's kind: its name less a trailing number (``fusion.3`` -> ``fusion``)."""
    return re.sub(r"[._-]?\d+$", "", name)


def match(a: dict[str, np.ndarray], b: dict[str, np.ndarray]
          ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(pairs of A's and B's names, A's left, B's left): by name, then by kind in order of
    time (a renumbered fusion)."""
    pairs = [(n, n) for n in a if n in b]
    left_a = [n for n in a if n not in b]
    left_b = [n for n in b if n not in a]
    for k in dict.fromkeys(map(kind, left_a)):
        xa = sorted((n for n in left_a if kind(n) == k), key=lambda n: -np.nanmean(a[n]))
        xb = sorted((n for n in left_b if kind(n) == k), key=lambda n: -np.nanmean(b[n]))
        for na, nb in zip(xa, xb):
            pairs.append((na, nb))
            left_a.remove(na)
            left_b.remove(nb)
    return pairs, left_a, left_b


def _interval(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """95% bootstrap interval of mean(y) - mean(x), rounds resampled in each run."""
    bx = rng.choice(x, (DRAWS, len(x))).mean(axis=1)
    by = rng.choice(y, (DRAWS, len(y))).mean(axis=1)
    lo, hi = np.quantile(by - bx, [0.025, 0.975])
    return float(lo), float(hi)


def _case_rows(case_id: str, a: dict, b: dict, rng: np.random.Generator) -> list[dict]:
    """One row per op of a case: matched (judged later), new or gone."""
    total_a = np.nansum(np.vstack(list(a.values())), axis=0) if a else np.zeros(1)
    total_b = np.nansum(np.vstack(list(b.values())), axis=0) if b else np.zeros(1)
    case_a, case_delta = float(total_a.mean()), float(total_b.mean() - total_a.mean())
    pairs, gone, new = match(a, b)
    base = {"case_id": case_id, "case_a_us": case_a, "case_delta_us": case_delta}
    rows = []
    for na, nb in pairs:
        x, y = a[na][~np.isnan(a[na])], b[nb][~np.isnan(b[nb])]
        if not len(x) or not len(y):
            continue
        lo, hi = _interval(x, y, rng)
        rows.append({**base, "op": na, "op_b": nb, "status": "same name" if na == nb else
                     "renamed", "a_us": float(x.mean()), "b_us": float(y.mean()),
                     "delta_us": float(y.mean() - x.mean()), "delta_lo": lo, "delta_hi": hi,
                     "x": x, "y": y})
    for names, runs, status in ((gone, a, "gone in B"), (new, b, "new in B")):
        for n in names:
            v = runs[n]
            if np.isnan(v).any() or v.mean() < NEW_SHARE * max(case_a, 1e-9):
                continue  # not in every round, or too small to tell
            sign = -1 if status == "gone in B" else 1
            rows.append({**base, "op": n, "op_b": n, "status": status,
                         "a_us": float(v.mean()) if sign < 0 else 0.0,
                         "b_us": float(v.mean()) if sign > 0 else 0.0,
                         "delta_us": sign * float(v.mean()),
                         "delta_lo": sign * float(v.min()), "delta_hi": sign * float(v.max())})
    return rows


def op_changes(cases_a: pd.DataFrame, cases_b: pd.DataFrame, *, threshold: float,
               alpha: float, correction: str = "bh", seed: int = 0,
               noise: dict[str, float] | None = None) -> pd.DataFrame:
    """Per op of every case both runs timed on the device: its change with its interval,
    its share of the case's change and the verdict (the module doc; ``noise``: per case,
    the least relative change an op of it may be judged by, :func:`case_noise`); empty
    where either run holds no op times. Ranked per case by the size of the change."""
    return judge(per_round(cases_a), per_round(cases_b), threshold=threshold, alpha=alpha,
                 correction=correction, seed=seed, noise=noise)


def case_noise(table: pd.DataFrame) -> dict[str, float]:
    """Per case of a comparison (:func:`podscale.analysis.verdicts.compare.compare`): the
    half width of its 95% interval of B/A, as a relative change (0 where untested)."""
    if table.empty or "ci_lo" not in table:
        return {}
    half = np.fmax(1 - table["ci_lo"], table["ci_hi"] - 1)
    return {str(c): float(h) for c, h in zip(table["case_id"], half) if h == h}


def per_launch(runs: list) -> dict[str, dict[str, np.ndarray]]:
    """A profiled program's launches (:class:`ProfileSummary` each) as :func:`per_round`
    gives a run's rounds: per op of the step, its µs per captured step in each launch (the
    median over processes of the window's time over its steps; NaN where a launch has no
    capture window)."""
    step = next((s.step for s in runs if s.step), None)
    if step is None:
        return {}
    found: dict[str, list[float]] = {}
    for i, s in enumerate(runs):
        ops = s.profile.capture_ops
        if ops.empty:
            continue
        per = (ops["us"] / ops["steps"].clip(lower=1)).groupby([ops["op"], ops["process"]])
        for op, us in per.sum().groupby(level=0).median().items():
            found.setdefault(str(op), [np.nan] * len(runs))[i] = float(us)
    return {str(step): {k: np.asarray(v) for k, v in found.items()}} if found else {}


def judge(pa: dict[str, dict[str, np.ndarray]], pb: dict[str, dict[str, np.ndarray]], *,
          threshold: float, alpha: float, correction: str = "bh",
          seed: int = 0, noise: dict[str, float] | None = None) -> pd.DataFrame:
    """The ops of each key (a case, or a profiled step) both sides hold, judged (see
    :func:`op_changes`)."""
    rng = np.random.default_rng(seed)
    rows = [r for c in sorted(set(pa) & set(pb)) for r in _case_rows(c, pa[c], pb[c], rng)]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    judged = df["status"].isin(["same name", "renamed"]) & (df["a_us"] > 0) & (df["b_us"] > 0)
    keys = [f"{i}" for i in df.index[judged]]
    table = verdicts({k: df.loc[int(k), "x"] / 1e6 for k in keys},
                     {k: df.loc[int(k), "y"] / 1e6 for k in keys}, threshold=threshold,
                     alpha=alpha, correction=correction,
                     noise={k: (noise or {}).get(str(df.loc[int(k), "case_id"]), 0.0)
                            for k in keys}) if keys else pd.DataFrame()
    df["ratio"], df["p_adj"], df["verdict"] = np.nan, np.nan, "~"
    for r in table.itertuples():
        i = int(r.case_id)
        df.loc[i, ["ratio", "p_adj", "verdict"]] = [r.ratio, r.p_adj, r.verdict]
    new = df["status"].isin(["new in B", "gone in B"])
    df.loc[new, "verdict"] = np.where(df.loc[new, "delta_us"] > 0, "slower", "faster")
    df["pct_of_case"] = df["delta_us"] / df["case_a_us"].where(df["case_a_us"] > 0)
    df["share"] = df["delta_us"] / df["case_delta_us"].where(df["case_delta_us"].abs() > 0)
    df = df.assign(size=df["delta_us"].abs()).sort_values(["case_id", "size"],
                                                          ascending=[True, False])
    return df[COLUMNS].reset_index(drop=True)


def moved(ops: pd.DataFrame) -> pd.DataFrame:
    """The ops whose change is a verdict (slower or faster), new or gone."""
    return ops[ops["verdict"].isin(["slower", "faster"])] if len(ops) else ops
