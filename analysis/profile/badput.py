"""Goodput as its users know it: the share of the wall time that was productive step
time, and the rest (badput) by cause, per process and for the job, with
ml-goodput-measurement's categories (its ``BadputType``) named where they map.

The causes are the goodput ledger's parts (:mod:`.goodput`), regrouped: **start-up**
(the interpreter, imports and set-up to the join, the join), **set-up** (joined to the
first step), **compile**, **podscale's capture**, **stalls** (waiting for the last
process, and steps' time above the ideal step), **idle** (unattributed, after the last
step). The host's time between calls inside the steps is split by the frames it was
sampled in: **checkpointing** and **data loading** by the frame's name
(:data:`CHECKPOINT`, :data:`DATA`), the rest **host**. The other computations' device
time is **eval** where they are named so, else **other computations**.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from podscale.analysis.profile.summary import ProfileSummary

#: each cause, and the ml-goodput-measurement BadputType it maps to ("" where none does)
CAUSES: dict[str, str] = {
    "start-up": "PROGRAM_STARTUP",
    "set-up": "TRAINING_PREP",
    "compile": "PROGRAM_STARTUP",
    "data loading": "DATA_LOADING_SYNC",
    "checkpointing": "UNPRODUCTIVE_CHECKPOINT_SAVE_TIME",
    "eval": "CUSTOM_BADPUT_EVENTS (EVAL_STEP)",
    "other computations": "OTHER",
    "podscale's capture": "",
    "stalls": "",
    "host": "OTHER",
    "idle": "OTHER",
}
#: the goodput ledger's parts behind the causes that are plain sums of them
PARTS = {"start-up": ("interpreter", "startup", "join"), "set-up": ("setup",),
         "compile": ("compile",), "podscale's capture": ("profiler",),
         "stalls": ("waiting", "anomalous"), "idle": ("unattributed", "after steps")}
#: a host frame that saves or waits on a checkpoint (orbax's, or the program's own)
CHECKPOINT = re.compile(r"checkpoint|ckpt|orbax|\bsave|wait_until_finished|"
                        r"sync_global_devices|_identity_fn", re.I)
#: a host frame that loads the next batch
DATA = re.compile(r"load|batch|data|input|iterator|__next__|prefetch|shuffle|tokeni", re.I)


def frame_cause(frame: str) -> str:
    """checkpointing, data loading or host, by the frame's function name."""
    name = frame.split(" (", 1)[0]
    return "checkpointing" if CHECKPOINT.search(name) else \
        "data loading" if DATA.search(name) else "host"


def _evals(s: ProfileSummary) -> float:
    """The share of the other computations' device time that is an eval's (by name)."""
    o = s.others
    if o.empty:
        return 0.0
    busy = o["busy_median"].astype(float) * o["calls_max"].astype(float)
    total = float(busy.sum())
    return float(busy[o["name"].str.contains("eval", case=False)].sum()) / total \
        if total > 0 else 0.0


def badput(s: ProfileSummary) -> pd.DataFrame:
    """Per process, then the job (``process`` "job"): ``goodput`` (productive over wall),
    ``productive``, ``wall`` and each cause's seconds (:data:`CAUSES`); they sum to the
    wall."""
    g = s.goodput
    cols = ["process", "goodput", "productive", "wall", *CAUSES]
    if g.empty:
        return pd.DataFrame(columns=cols)
    frames = s.frames
    evals = _evals(s)
    rows = []
    for _, r in g.iterrows():
        mine = frames[frames["process"] == r["process"]] if len(frames) else frames
        by = mine.groupby(mine["frame"].map(frame_cause))["seconds"].sum() if len(mine) \
            else pd.Series(dtype=float)
        host = max(0.0, float(r["host"]))
        ckpt = min(float(by.get("checkpointing", 0.0)), host)
        data = min(float(by.get("data loading", 0.0)), host - ckpt)
        other = float(r["other computations"])
        row = {k: float(sum(r[p] for p in parts)) for k, parts in PARTS.items()}
        row.update({"checkpointing": ckpt, "data loading": data, "host": host - ckpt - data,
                    "eval": evals * other, "other computations": (1 - evals) * other})
        rows.append({"process": int(r["process"]), "productive": float(r["productive"]),
                     "wall": float(r["wall"]), **row})
    out = pd.DataFrame(rows)
    job = {k: float(out[k].sum()) for k in ["productive", "wall", *CAUSES]}
    out = pd.concat([out, pd.DataFrame([{"process": "job", **job}])], ignore_index=True)
    out["goodput"] = out["productive"] / out["wall"]
    return out[cols]


def sentence(b: pd.DataFrame, top: int = 5) -> str | None:
    """The job's goodput and its largest badput causes, in words."""
    from podscale.analysis.units import time_h

    if b.empty:
        return None
    job = b[b["process"] == "job"].iloc[0]
    wall = float(job["wall"])
    if not wall > 0:
        return None
    causes = sorted(((k, float(job[k])) for k in CAUSES if float(job[k]) >= 5e-4 * wall),
                    key=lambda kv: -kv[1])[:top]
    said = ", ".join(f"{k} {100 * v / wall:.1f}%" + (f" ({CAUSES[k]})" if CAUSES[k] else "")
                     for k, v in causes)
    return (f"goodput {100 * float(job['goodput']):.1f}% of the wall time (productive step "
            f"time {time_h(float(job['productive']))} of {time_h(wall)}, every process's "
            f"summed); badput by cause: {said or 'none'}")


#: the causes a run pays once, whatever its step count: compared as totals
ONE_OFF = ("start-up", "set-up", "compile")


def changes(a: ProfileSummary, b: ProfileSummary, threshold: float) -> list[str]:
    """The badput causes that moved by more than ``threshold`` between runs A and B (the
    job's time, summed over processes) and by at least 1% of A's wall time: the one-off
    causes (:data:`ONE_OFF`) as totals, the others a step (a run of fewer steps pays its
    start-up over fewer of them: a step's share says nothing of it); a change in
    checkpointing time is a verdict of its own."""
    from podscale.analysis.units import time_h

    out: list[str] = []
    ja, jb = (badput(s).set_index("process") for s in (a, b))
    if "job" not in ja.index or "job" not in jb.index or not a.steps or not b.steps:
        return out
    for cause in CAUSES:
        once = cause in ONE_OFF
        na, nb = (1, 1) if once else (a.steps, b.steps)
        x, y = float(ja.loc["job", cause]) / na, float(jb.loc["job", cause]) / nb
        floor = 0.01 * float(ja.loc["job", "wall"]) / na
        if abs(y - x) < max(floor, threshold * max(x, y)):
            continue
        how = f"{100 * (y / x - 1):+.0f}%" if x > 0 else "new in B"
        per = " in all (once a run)" if once else " a step"
        out.append(f"{cause} {time_h(x)} -> {time_h(y)}{per} ({how}): "
                   f"{'more' if y > x else 'less'} badput in B")
    return out
