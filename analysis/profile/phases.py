"""Periodic work between steps as events: checkpoint saves, evals, logging.

Host time between steps is sampled and attributed to the program's innermost frame
(:mod:`.goodput`'s host frames, while the device waits for the host). An **occurrence**
is one gap between two steps in which a frame took at least :data:`MIN_S` and
:data:`MIN_STEPS` median steps: a checkpoint save every 15 steps is three occurrences of
0.3 s after steps 15, 30 and 45, not "18 ms per step". Every occurrence is **blocking**
(the device waited for it: work overlapped with device time is never sampled). Other
computations called between steps (an eval step) are occurrences of their own, with their
busy time. Known library helpers are named for what they are (:data:`KNOWN`).
"""

from __future__ import annotations

import pandas as pd

from podscale.analysis.profile.steps import step_at

#: an occurrence takes at least this long ...
MIN_S = 0.01
#: ... and this many median steps
MIN_STEPS = 2.0
#: frames and computations of libraries, and what they are
KNOWN = {
    "_identity_fn": "JAX's multi-host sync (multihost_utils.sync_global_devices, "
                    "as orbax checkpointing calls it)",
    "sync_global_devices": "JAX's multi-host barrier (multihost_utils)",
    "save": "a checkpoint save",
    "wait_until_finished": "waiting for an asynchronous checkpoint",
}
COLUMNS = ["process", "what", "step", "seconds"]


def occurrences(gaps: pd.DataFrame, led: pd.DataFrame) -> pd.DataFrame:
    """Each long gap between steps in one frame: process, what (the frame), step (after
    which step), seconds."""
    if gaps.empty or led.empty:
        return pd.DataFrame(columns=COLUMNS)
    med = float(led["period"].median())
    per = gaps.groupby(["process", "seq", "frame"])["seconds"].sum().reset_index()
    long = per[per["seconds"] >= max(MIN_S, MIN_STEPS * med)]
    rows = [{"process": int(r.process), "what": str(r.frame),
             "step": step_at(led, int(r.process), int(r.seq)), "seconds": float(r.seconds)}
            for r in long.itertuples(index=False)]
    return pd.DataFrame(rows, columns=COLUMNS)


def table(occ: pd.DataFrame) -> pd.DataFrame:
    """Per frame: on which processes, occurrences (per process, the most), after which
    steps (process 0's, else the first's), the median, least and most seconds."""
    cols = ["what", "processes", "count", "steps", "median", "least", "most"]
    if occ.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for what, g in occ.groupby("what", sort=False):
        first = g[g["process"] == g["process"].min()]
        rows.append({"what": what, "processes": sorted(set(g["process"])),
                     "count": int(g.groupby("process").size().max()),
                     "steps": first["step"].tolist(),
                     "median": float(g["seconds"].median()),
                     "least": float(g["seconds"].min()), "most": float(g["seconds"].max())})
    return pd.DataFrame(rows, columns=cols).sort_values("median", ascending=False,
                                                        kind="stable").reset_index(drop=True)


def known(name: str) -> str | None:
    """What a library frame or computation is, where known (``_identity_fn``: JAX's
    multi-host sync)."""
    base = name.split(" (", 1)[0].split("@", 1)[0].rsplit(".", 1)[-1]
    return KNOWN.get(base)


def after_steps(steps: list, last: int | None = None) -> str:
    """Where host work ran, in words, steps as integers: ``after step(s) 4, 9, ...``,
    ``before step 0`` (before the first: None, NaN or -1), ``after the last step``
    (``last``: the program's last step)."""
    ran = [None if s is None or s != s or int(s) < 0 else int(s) for s in steps]
    mid = [s for s in ran if s is not None and (last is None or s < last)]
    words = ["before step 0"] if None in ran else []
    if mid:
        words.append("after step(s) " + ", ".join(map(str, mid[:6]))
                     + (", ..." if len(mid) > 6 else ""))
    if last is not None and any(s is not None and s >= last for s in ran):
        words.append("after the last step")
    return " and ".join(words) or "outside the steps"


def findings(t: pd.DataFrame, total: int, last: int | None = None) -> list[str]:
    """One sentence per periodic phase (``last``: the program's last step)."""
    from podscale.analysis.units import time_h

    out = []
    for r in t.itertuples(index=False):
        steps = after_steps(list(r.steps), last)
        who = "every process" if len(r.processes) == total and total > 1 else \
            "process " + ", ".join(map(str, r.processes))
        spread = f" ({time_h(r.least)}-{time_h(r.most)})" if r.most > 1.2 * r.least else ""
        label = known(r.what)
        out.append(f"{r.what}{f' ({label})' if label else ''}: {r.count} time(s) on {who}, "
                   f"{steps}, {time_h(r.median)} each{spread}, blocking the "
                   "device")
    return out
