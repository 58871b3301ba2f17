"""Compare two runs case by case. Iterations within one launch are not independent, so
verdicts come from between-round variation: each round (a separate launch) gives one
median per case, and the test compares the rounds of A with those of B, correcting for
the many cases tested at once. Refuses runs whose environments make it meaningless."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podscale.analysis.data.frames import SETTINGS
from podscale.analysis.run import Run, as_run
from podscale.core import defaults
from podscale.core.errors import UsageError
from podscale.core.records import Manifest

#: differences that make timings incomparable (unless forced)
HARD = ("platform", "device_kind", "cpu_count")
#: differences worth stating but that are often the point of the comparison
SOFT = ("jax", "jaxlib", "xla_flags", "hostname", "git_commit", "python")


def environment_key(manifest: Manifest, envs: pd.DataFrame) -> dict[str, str]:
    env = manifest.environment
    key = {"cpu_count": str(env.get("cpu_count")), "git_commit": str(env.get("git_commit")),
           "python": str(env.get("python")), "hostname": str(env.get("hostname"))}
    for col in ("platform", "device_kind", "jax", "jaxlib", "xla_flags"):
        vals = sorted({str(v) for v in envs[col]}) if col in envs else []
        key[col] = ",".join(vals)
    if key["platform"] not in ("", "cpu"):
        key["cpu_count"] = "n/a"  # host cores do not decide accelerator timings
    return key


def differences(a: dict, b: dict, names: Iterable[str]) -> list[str]:
    return [f"{n}: {a.get(n)!r} vs {b.get(n)!r}" for n in names if a.get(n) != b.get(n)]


def setting_differences(ca: pd.DataFrame, cb: pd.DataFrame, common: list[str]) -> list[str]:
    """Measurement settings (iters, warmup, sync, traced iters) that differ between the
    runs' matched cases, each with how many cases it concerns; the timing methods are not
    among them (a comparison judges one method both runs have: :func:`common_method`)."""
    cols = [c for c in SETTINGS if c != "timing"]
    a = ca.drop_duplicates("case_id").set_index("case_id").loc[common, cols]
    b = cb.drop_duplicates("case_id").set_index("case_id").loc[common, cols]
    out = []
    for col in cols:
        differ = a[col].astype(str) != b[col].astype(str)
        if differ.any():
            pairs = sorted({(str(x), str(y)) for x, y in zip(a[col][differ], b[col][differ])})
            shown = ", ".join(f"{x!r} vs {y!r}" for x, y in pairs)
            out.append(f"{col}: {shown} in {int(differ.sum())} case(s)")
    return out


def version_differences(ca: pd.DataFrame, cb: pd.DataFrame) -> list[str]:
    va = ca.groupby("workload")["version"].agg(lambda v: ",".join(sorted(set(map(str, v)))))
    vb = cb.groupby("workload")["version"].agg(lambda v: ",".join(sorted(set(map(str, v)))))
    return [f"workload {w}: version {va[w]} vs {vb[w]} (its cases are not matched)"
            for w in sorted(set(va.index) & set(vb.index)) if va[w] != vb[w]]


#: what each timing method's time is, in a sentence's words
METHOD_WORDS = {"each": "one call, waited on", "chain": "back-to-back calls, one wait",
                "device": "each execution's device time from a profiler trace"}

COLUMNS = ["case_id", "time_a_us", "time_b_us", "ratio", "ci_lo", "ci_hi", "p_value",
           "rounds_a", "rounds_b", "cv_a", "cv_b", "p_adj", "verdict"]


def verdicts(a_rounds: dict[str, np.ndarray], b_rounds: dict[str, np.ndarray], *,
             threshold: float, alpha: float, correction: str = "bh",
             paired: bool = False, noise: dict[str, float] | None = None) -> pd.DataFrame:
    """Per case, from each run's round medians (independent repetitions): the ratio B/A
    of geometric means, Welch's t-test on log times with its CI (``paired``: runs whose
    launches were interleaved, round i of A beside round i of B: a one-sample t-test on
    the per-round log ratios, so drift shared by neighbouring launches cancels), the
    p-value adjusted for testing every case at once, and a verdict:

    - ``slower`` / ``faster``: adjusted p < ``alpha`` and the ratio beyond ``threshold``;
    - ``~``: no change of ``threshold`` size (the CI lies within it, or the change is
      significant but smaller);
    - ``noisy``: undecided: the CI reaches beyond the threshold without a significant
      change, or a run has fewer than 2 rounds (no between-launch variation to judge by).

    ``noise``: per case, its noise floor (:mod:`.noise`): its threshold is the larger of
    ``threshold`` and the floor (column ``threshold``).
    """
    from scipy.stats import ttest_1samp, ttest_ind

    rows = []
    for case_id in a_rounds:
        la, lb = np.log(a_rounds[case_id]), np.log(b_rounds[case_id])
        row = {"case_id": case_id, "time_a_us": float(np.exp(la.mean())) * 1e6,
               "time_b_us": float(np.exp(lb.mean())) * 1e6,
               "ratio": float(np.exp(lb.mean() - la.mean())), "ci_lo": np.nan,
               "ci_hi": np.nan, "p_value": np.nan, "rounds_a": len(la), "rounds_b": len(lb),
               "cv_a": _cv(a_rounds[case_id]), "cv_b": _cv(b_rounds[case_id])}
        if min(len(la), len(lb)) >= 2:
            if (lb - la).std() == 0 if paired else la.std() == 0 and lb.std() == 0:  # exact
                row.update(p_value=0.0 if la.mean() != lb.mean() else 1.0,
                           ci_lo=row["ratio"], ci_hi=row["ratio"])
            else:
                res = ttest_1samp(lb - la, 0.0) if paired else \
                    ttest_ind(lb, la, equal_var=False)
                ci = res.confidence_interval(1 - alpha)
                row.update(p_value=float(res.pvalue), ci_lo=float(np.exp(ci.low)),
                           ci_hi=float(np.exp(ci.high)))
        rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS[:-2])
    tested = table["p_value"].notna()
    table["p_adj"] = np.nan
    if tested.any():
        ps = table.loc[tested, "p_value"].to_numpy()
        table.loc[tested, "p_adj"] = adjust(ps, correction)
    table["threshold"] = [max(threshold, (noise or {}).get(c, 0.0)) for c in table["case_id"]]
    table["verdict"] = [_verdict(r, alpha) for r in table.itertuples()]
    return table


def _verdict(r: Any, alpha: float) -> str:
    lo, hi = 1 / (1 + r.threshold), 1 + r.threshold
    if np.isnan(r.p_adj):
        return "noisy"
    if r.p_adj < alpha and r.ratio > hi:
        return "slower"
    if r.p_adj < alpha and r.ratio < lo:
        return "faster"
    if r.p_adj < alpha or (lo <= r.ci_lo and r.ci_hi <= hi):
        return "~"
    return "noisy"


def adjust(ps: np.ndarray, correction: str) -> np.ndarray:
    """p-values adjusted for testing every case at once: Benjamini-Hochberg (false
    discovery rate), Holm (family-wise error rate) or none."""
    if correction == "bh":
        from scipy.stats import false_discovery_control

        return false_discovery_control(ps, method="bh")
    if correction == "holm":
        order = np.argsort(ps)
        m = len(ps)
        stepped = np.maximum.accumulate((m - np.arange(m)) * ps[order]).clip(max=1.0)
        out = np.empty(m)
        out[order] = stepped
        return out
    return ps


def _cv(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1) / np.mean(x)) if len(x) > 1 else float("nan")


def comparable(run_a: Run, run_b: Run, force: bool) -> list[str]:
    """The notes on what differs between two runs' environments, states and records; a
    UsageError where they cannot be compared (the same run; a different machine without
    ``force``)."""
    if run_a.path.resolve() == run_b.path.resolve():
        raise UsageError(f"{run_a.path} and {run_b.path} are the same run: compare two runs "
                         "(or measure A against itself with podscale ab)")
    ka = environment_key(run_a.manifest, run_a.envs)
    kb = environment_key(run_b.manifest, run_b.envs)
    hard = differences(ka, kb, HARD)
    if hard and not force:
        raise UsageError("runs are not comparable (" + "; ".join(hard) + "); use --force")
    notes = [f"environment differs: {d}" for d in hard + differences(ka, kb, SOFT)]
    notes += version_differences(run_a.cases, run_b.cases)
    both = (("A", run_a), ("B", run_b))
    notes += [f"{side} ({r.path.name}) is {r.status_text}: only the cases it finished are "
              "compared" for side, r in both if r.status != "complete"]
    return notes + [f"{side} ({r.path.name}): {r.problems_text()}" for side, r in both
                    if r.problems]


def judged(run_a: Run, run_b: Run, method: str = "auto") -> tuple[Run, Run, str]:
    """Both runs read with one timing method (:meth:`Run.using`), and the method: the one
    asked for, which both must hold, or for ``auto`` the best of A's :attr:`Run.prefer`
    that both hold (a run before the timing methods holds ``each`` alone). A run with no
    completed case is refused, saying so."""
    for side, run in (("A", run_a), ("B", run_b)):
        if run.cases.empty:
            raise UsageError(f"{side} ({run.path}) has no completed case ({run.status_text}): "
                             "nothing to compare")
    have = set(run_a.methods()) & set(run_b.methods())
    if method != "auto":
        if method not in have:
            raise UsageError(f"--judge {method}: A times {','.join(run_a.methods())}, B "
                             f"{','.join(run_b.methods())}; judge a method both hold")
        return run_a.using(method), run_b.using(method), method
    chosen = next((m for m in run_a.prefer if m in have), None)
    if chosen is None:
        raise UsageError(f"no timing method in common: A times {','.join(run_a.methods())}, "
                         f"B {','.join(run_b.methods())}")
    return run_a.using(chosen), run_b.using(chosen), chosen


def compare(run_a: Run | Path, run_b: Run | Path, *, threshold: float = defaults.THRESHOLD,
            alpha: float = defaults.ALPHA,
            force: bool = False, correction: str = "bh",
            paired: bool = False, method: str = "auto",
            noise: dict[str, float] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """(table, notes): :func:`verdicts` over the cases both runs have, each case's
    rounds summarised by their medians over iterations of the max over processes, of one
    timing method both runs hold (:func:`judged`).
    ``paired`` (runs of one ``podscale ab`` only) pairs round i of A with round i of B;
    measured here, neighbouring launches share little (correlation of round medians
    ~0.2), so pairing halves the degrees of freedom for a small gain and Welch is the
    default."""
    run_a, run_b, method = judged(as_run(run_a), as_run(run_b), method)
    ma, ca, mb, cb = run_a.manifest, run_a.cases, run_b.manifest, run_b.cases
    notes = comparable(run_a, run_b, force)
    notes.append(f"verdicts judge the {method} time ({METHOD_WORDS[method]})")
    ra, rb = run_a.round_medians(), run_b.round_medians()
    common = sorted(set(ra["case_id"]) & set(rb["case_id"]))
    if not common:
        why = "; ".join(version_differences(ca, cb))
        raise UsageError(f"{run_a.path} and {run_b.path} have no case in common" + (f" ({why})"
                                                                           if why else ""))
    settings = setting_differences(ca, cb, common)
    if settings and not force:
        raise UsageError("measurement settings differ (" + "; ".join(settings) +
                         "); use --force")
    notes += [f"settings differ: {d}" for d in settings]
    only = len(set(ra["case_id"]) ^ set(rb["case_id"]))
    if only:
        notes.append(f"{only} case(s) are in only one run and were left out")
    alternated = interleaved(ma, mb)
    if paired and not alternated:
        raise UsageError("--paired pairs round i of A with round i of B: it needs two runs "
                         "of one podscale ab, whose launches alternated")
    a, b = _rounds(ra, rb, common, paired)
    if paired:
        notes.append("verdicts pair round i of A with round i of B (--paired)")
    few = min(min(map(len, a.values())), min(map(len, b.values())))
    if few < 2:
        notes.append("a run has a single round: between-launch variation is unknown, so "
                     "no case can be judged (noisy); measure with --rounds 3 or more")
    table = verdicts(a, b, threshold=threshold, alpha=alpha, correction=correction,
                     paired=paired, noise=noise)
    if noise is not None:
        held = sum(c in noise for c in common)
        notes.append(f"noise floors from A/A runs: {held} of {len(common)} case(s) judged "
                     f"beyond the larger of --threshold and their floor (median floor "
                     f"{np.median([noise[c] for c in common if c in noise] or [0]):.1%}); "
                     f"{len(common) - held} at --threshold alone")
    # A and B as show and report give them; the ratio stays the test's (round medians)
    for col, run in (("time_a_us", run_a), ("time_b_us", run_b)):
        time_s = run.summary().set_index("case_id")["time_s"]
        table[col] = table["case_id"].map(time_s).to_numpy(float) * 1e6
    notes.append(run_shift(table, alternated))
    return table, notes


def _rounds(ra: pd.DataFrame, rb: pd.DataFrame, common: list[str],
            paired: bool) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each common case's round medians in A and in B (``paired``: round i of A beside
    round i of B; rounds only one run has are left out)."""
    if paired:
        both = ra.merge(rb, on=["case_id", "round"], suffixes=("_a", "_b"))
        g = both.sort_values("round").groupby("case_id")
        return ({c: g.get_group(c)["median_a"].to_numpy() for c in common},
                {c: g.get_group(c)["median_b"].to_numpy() for c in common})
    ga, gb = ra.groupby("case_id")["median"], rb.groupby("case_id")["median"]
    return ({c: ga.get_group(c).to_numpy() for c in common},
            {c: gb.get_group(c).to_numpy() for c in common})


def interleaved(ma: Manifest, mb: Manifest) -> bool:
    """Whether the two runs' launches alternated (one ``podscale ab``)."""
    return mb.run_id in ma.spec.get("interleaved_with", ()) or \
        ma.run_id in mb.spec.get("interleaved_with", ())


def run_shift(table: pd.DataFrame, alternated: bool = False) -> str:
    """The shift every case shares: a change that slows everything, or (runs not
    interleaved) machine-wide drift between the runs, which rounds inside one run do not
    sample; stated, not tested."""
    q1, med, q3 = np.exp(np.percentile(np.log(table["ratio"]), [25, 50, 75]))
    why = ("launches alternated, so drift fell on both runs alike and a shift every "
           "case shares is a change that slows everything"
           if alternated else "a shift shared by every case is drift between the runs or a "
           "global change, which the per-case verdicts cannot tell apart (podscale ab "
           "interleaves the runs' launches)")
    return (f"run-wide shift: median B/A over {len(table)} cases {med:.3f} (IQR {q1:.3f}-"
            f"{q3:.3f}); {why}")
