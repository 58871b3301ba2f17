"""A quiet CI gate: each case's noise floor learnt from runs with no change between them
(A/A runs kept in a history folder), and the false alarms a rule raises on such runs.

A case's floor is the 95th percentile, over every pair of runs that hold it, of the ratio
between the runs' times (the greater over the lesser, less one): how far the case moves
run to run when nothing changed. ``compare --noise-from DIR`` calls a case slower or
faster only beyond the larger of ``--threshold`` and its floor (still at ``--alpha``); a
case the folder holds in fewer than 2 runs keeps ``--threshold``, and is counted.
:func:`false_alarms` measures a rule on A/A pairs: every pair of the folder's runs is
compared, each pair's floors learnt from the other runs (leave the pair out)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from podscale.analysis.run import Run

QUANTILE = 95


def series(paths: list[Path], judge: str = "auto") -> pd.DataFrame:
    """Per run and case, the time judged (``history``'s reading of a folder of runs)."""
    from podscale.analysis.verdicts.history import collect

    df = collect(paths, judge)
    return df.pivot_table(index="case_id", columns="run_id", values="time_s",
                          aggfunc="first")


def floors(times: pd.DataFrame, leave_out: tuple[str, ...] = ()) -> dict[str, float]:
    """Per case held by 2 or more runs (``leave_out``: the runs being judged, left out of
    their own floors): the :data:`QUANTILE` th percentile of the pairwise run-to-run
    ratio, less one."""
    out = {}
    for case_id, row in times.drop(columns=list(leave_out), errors="ignore").iterrows():
        v = np.log(row.dropna().to_numpy(float))
        if len(v) < 2:
            continue
        d = np.abs(v[:, None] - v[None, :])[np.triu_indices(len(v), 1)]
        out[str(case_id)] = float(np.expm1(np.percentile(d, QUANTILE)))
    return out


def false_alarms(loaded: dict[Path, Run], threshold: float, alpha: float,
                 times: pd.DataFrame | None) -> dict[str, float]:
    """Every pair of A/A runs (``loaded``: path -> its Run) compared as A and B, at
    ``threshold`` alone, or with each case's floor from ``times`` (:func:`series`) less the
    pair: pairs, case verdicts, those left undecided (noisy) and decided, those called
    slower or faster (alarms), alarms per case verdict and pairs with any."""
    from podscale.analysis.verdicts.compare import compare

    pairs = verdicts = judged = alarms = flagged_pairs = 0
    for a, b in itertools.combinations(loaded, 2):
        table, _ = compare(loaded[a], loaded[b], threshold=threshold, alpha=alpha,
                           noise=None if times is None else floors(times, (a.name, b.name)))
        pairs += 1
        verdicts += len(table)
        decided = table[table["verdict"] != "noisy"]
        judged += len(decided)
        wrong = int(decided["verdict"].isin(["slower", "faster"]).sum())
        alarms += wrong
        flagged_pairs += wrong > 0
    return {"pairs": pairs, "verdicts": verdicts, "noisy": verdicts - judged,
            "judged": judged, "alarms": alarms,
            "per_case": alarms / verdicts if verdicts else float("nan"),
            "per_pair": flagged_pairs / pairs if pairs else float("nan")}
