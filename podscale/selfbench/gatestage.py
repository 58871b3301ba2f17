"""bench-self's gate stage: how often a quiet CI gate cries wolf, and whether it still
catches a regression. ``RUNS`` A/A runs of the verdict stage's grid (``podscale run``,
3 rounds each, nothing changed between them) and one run with psum stretched 1.5x:
every A/A pair is compared at ``--threshold`` alone and with each case's noise floor
learnt from the other runs (``--noise-from``, leave the pair out); the slowed run against
each A run the same two ways. Reported: false alarms per case judged and per pair (any
case flagged), and the share of psum cases caught."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from podscale.core import defaults
from podscale.selfbench import Log
from podscale.selfbench.verdicts import FAULT, SLOWED, cli_run

RUNS = 5


def gate_stage(work: Path, log: Log) -> dict:
    from podscale.analysis import load_run
    from podscale.analysis.verdicts.compare import compare
    from podscale.analysis.verdicts.noise import false_alarms, floors, series

    runs = [cli_run(work / "aa", f"aa{i}") for i in range(RUNS)]
    slowed = cli_run(work / "slow", "b", FAULT)
    loaded = {p: load_run(p) for p in [*runs, slowed]}
    times = series(runs)
    out: dict = {"runs": RUNS, "threshold": defaults.THRESHOLD, "alpha": defaults.ALPHA}
    for learn in (False, True):
        key = "noise_floors" if learn else "threshold_only"
        fa = false_alarms({p: loaded[p] for p in runs}, defaults.THRESHOLD, defaults.ALPHA,
                          times if learn else None)
        said: Counter[str] = Counter()
        caught: Counter[str] = Counter()
        learnt: list[float] = []
        for a in runs:
            noise = floors(times, leave_out=(a.name,)) if learn else None
            learnt += list((noise or {}).values())
            table, _ = compare(loaded[a], loaded[slowed], noise=noise)
            psum = table[table["case_id"].str.startswith(f"{SLOWED}@")]
            said.update(psum["verdict"].astype(str))
            caught.update(psum.loc[psum["verdict"] == "slower", "case_id"])
        total = sum(said.values())
        out[key] = {**fa, "slowed": dict(said), "floors": _spread(learnt),
                    "caught_by_case": dict(caught),
                    "detected": said["slower"] / total if total else float("nan")}
        log(f"  {key.replace('_', ' ')}: A/A false alarms {fa['alarms']} of {fa['verdicts']} "
            f"case verdicts ({fa['per_case']:.1%}; {fa['noisy']} noisy), pairs with any "
            f"{fa['per_pair']:.0%} of {fa['pairs']}; psum stretched 1.5x: "
            + ", ".join(f"{v} {n}" for v, n in sorted(said.items())) + f" of {total}")
    return out


def _spread(values: list[float]) -> dict[str, float]:
    """The floors' quartiles and median (empty where none was learnt)."""
    import numpy as np

    if not values:
        return {}
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return {"q1": float(q1), "median": float(med), "q3": float(q3)}
