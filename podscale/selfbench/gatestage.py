"""bench-self's gate stage: how often a quiet CI gate cries wolf, and whether it still
catches a regression. ``RUNS`` A/A runs of the verdict stage's grid (``podscale run``,
3 rounds each, nothing changed between them) and one run with psum stretched 1.5x:
every A/A pair is compared at ``--threshold`` alone and with each case's noise floor
learnt from the other runs (``--noise-from``, leave the pair out); the slowed run against
each A run the same two ways. Reported: false alarms per case judged and per pair (any
case flagged), and the share of psum cases caught."""

from __future__ import annotations

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
    out: dict = {"runs": RUNS, "threshold": defaults.THRESHOLD, "alpha": defaults.ALPHA}
    for learn in (False, True):
        key = "noise_floors" if learn else "threshold_only"
        fa = false_alarms(runs, defaults.THRESHOLD, defaults.ALPHA, learn)
        said: dict[str, int] = {}
        learnt: list[float] = []
        caught: dict[str, int] = {}
        for a in runs:
            noise = floors(series([r for r in runs if r != a])) if learn else None
            learnt += list((noise or {}).values())
            table, _ = compare(load_run(a), load_run(slowed), noise=noise)
            psum = table[table["case_id"].str.startswith(f"{SLOWED}@")]
            for v, n in psum["verdict"].value_counts().items():
                said[str(v)] = said.get(str(v), 0) + int(n)
            for c in psum.loc[psum["verdict"] == "slower", "case_id"]:
                caught[c] = caught.get(c, 0) + 1
        total = sum(said.values())
        out[key] = {**fa, "slowed": said, "floors": _spread(learnt),
                    "caught_by_case": caught,
                    "detected": said.get("slower", 0) / total if total else float("nan")}
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
