"""Work between steps as events: checkpoint saves, evals, logging, set-up.

Host time between steps is sampled and attributed to the program's innermost frame
(:mod:`.goodput`'s host frames, while the device waits for the host). An **occurrence**
is one gap between two steps in which a frame took at least :data:`MIN_S` (summed over
the launches in the gap: an asynchronous save's own programs split it). Each frame's
occurrences are then told apart (:func:`kind_of`): before step 0 they are **set-up**,
after the last step **after the last step**; within the steps, a frame seen in three or
more gaps at one period (a checkpoint save every 15 steps: three occurrences of 0.3 s after
steps 15, 30 and 45, not "18 ms per step") is **periodic** however short; one seen once,
or at no period, is an **event** where it took at least :data:`MIN_STEPS` median steps,
else a **hiccup** (not said), unless the frame **recurs** (:data:`RECURRING` gaps or
more, set-up and after the last step counted: MaxText's save after steps 0 and 10 and
after the last); one seen in most gaps is per-step host work (the host frames
say it). Every occurrence is **blocking** (the device waited for it: work overlapped with
device time is never sampled). Other computations called between steps (an eval step) are
occurrences of their own, with their busy time. Known library helpers are named for what
they are (:data:`KNOWN`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.analysis.profile.steps import steps_at

#: an occurrence takes at least this long
MIN_S = 0.01
#: an event at no period takes at least this many median steps (else: a hiccup)
MIN_STEPS = 2.0
#: a frame in at least this many gaps (set-up and after the last step counted) recurs:
#: every occurrence is said however short, as periodic work is
RECURRING = 3
#: a frame in at least this share of the gaps is per-step host work, not an event
EVERY_STEP = 0.5
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
    """Each gap between steps in which one frame took at least :data:`MIN_S`: process,
    what (the frame), step (after which step; -1: before step 0), seconds."""
    if gaps.empty or led.empty:
        return pd.DataFrame(columns=COLUMNS)
    per = gaps.groupby(["process", "seq", "frame"])["seconds"].sum().reset_index()
    at = steps_at(led, per["process"], per["seq"])
    per = per.assign(step=[-1 if a is None else a for a in at])
    # one gap between two steps may hold several launches (an eval's, an asynchronous
    # save's own programs): a frame's time in it is one occurrence, not one per launch
    occ = per.groupby(["process", "step", "frame"])["seconds"].sum().reset_index()
    occ = occ[occ["seconds"] >= MIN_S].rename(columns={"frame": "what"})
    return occ.astype({"process": int, "step": int, "what": str, "seconds": float}
                      )[COLUMNS].reset_index(drop=True)


def kind_of(steps: list[int], seconds: float, median_s: float, total: int) -> str:
    """What one frame's occurrences within the steps (after steps ``steps`` of
    ``total``, ``seconds`` the median of them) are: periodic, event, hiccup or every
    step (module doc)."""
    at = sorted(set(steps))
    if len(at) >= max(2, EVERY_STEP * max(total - 1, 1)):
        return "every step"
    if len(at) >= 3 and len(set(np.diff(at))) == 1:
        return "periodic"
    return "event" if seconds >= MIN_STEPS * median_s else "hiccup"


def table(occ: pd.DataFrame, led: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per frame and kind (set-up, periodic, recurring, event, after the last step; hiccups and
    per-step work left out): on which processes, occurrences (per process, the most),
    after which steps (process 0's, else the first's), every how many steps (periodic),
    the median, least and most seconds."""
    cols = ["what", "kind", "processes", "count", "steps", "every", "median", "least",
            "most"]
    if occ.empty:
        return pd.DataFrame(columns=cols)
    total = int(led["step"].max()) + 1 if led is not None and len(led) else \
        int(occ["step"].max()) + 2
    med = float(led["period"].median()) if led is not None and len(led) else 0.0
    where = np.where(occ["step"] < 0, "set-up",
                     np.where(occ["step"] >= total - 1, "after the last step", ""))
    lead = occ[occ["process"] == occ["process"].min()]
    gaps_of = lead.groupby("what")["step"].nunique()  # set-up and after the last included
    rows = []
    for (what, place), g in occ.assign(place=where).groupby(["what", "place"], sort=False):
        first = g[g["process"] == g["process"].min()]
        steps = [int(v) for v in first["step"]]
        kind = place or kind_of(steps, float(g["seconds"].median()), med, total)
        if kind == "hiccup" and gaps_of.get(what, 0) >= RECURRING:
            kind = "recurring"  # a save after steps 0 and 10 and after the last: each said
        if kind in ("hiccup", "every step"):
            continue
        rows.append({"what": what, "kind": kind, "processes": sorted(set(g["process"])),
                     "count": int(g.groupby("process").size().max()), "steps": steps,
                     "every": int(steps[1] - steps[0]) if kind == "periodic" else None,
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


#: the set-up frames named by themselves, the longest first (the rest in the total)
SETUP_NAMED = 3
#: the events (at no period) said one by one, the longest first (the rest counted)
EVENTS_SAID = 5


def findings(t: pd.DataFrame, total: int, last: int | None = None) -> list[str]:
    """One sentence per frame and kind (``last``: the program's last step); the set-up
    as its total and its longest frames (a program's imports and initialisation are
    dozens of frames: they had flooded the Findings), the events at no period the
    longest :data:`EVENTS_SAID` and a count."""
    from podscale.analysis.units import time_h

    out = []
    setup = t[t["kind"] == "set-up"]
    if len(setup):
        top = setup.sort_values("median", ascending=False).head(SETUP_NAMED)
        named = ", ".join(f"{r.what} {time_h(r.median)}" for r in top.itertuples())
        more = f" (and {len(setup) - len(top)} more frames)" if len(setup) > len(top) else ""
        out.append(f"set-up before step 0: {time_h(float(setup['median'].sum()))} of host "
                   f"work the device waited for, the longest: {named}{more}")
    events = t[t["kind"] == "event"].sort_values("median", ascending=False)
    if len(events) > EVENTS_SAID:
        out_of = len(events) - EVENTS_SAID
        t = t[(t["kind"] != "event") | t.index.isin(events.index[:EVENTS_SAID])]
    else:
        out_of = 0
    for r in t[t["kind"] != "set-up"].itertuples(index=False):
        steps = after_steps(list(r.steps), last)
        who = "every process" if len(r.processes) == total and total > 1 else \
            "process " + ", ".join(map(str, r.processes))
        spread = f" ({time_h(r.least)}-{time_h(r.most)})" if r.most > 1.2 * r.least else ""
        label = known(r.what)
        name = f"{r.what}{f' ({label})' if label else ''}"
        if r.kind in ("set-up", "after the last step"):
            booked = "set-up" if r.kind == "set-up" else "after the steps"
            out.append(f"{name}: {steps} on {who} ({booked}, not periodic), "
                       f"{time_h(r.median)}{spread}")
            continue
        every = f" (every {int(r.every)} steps)" if r.kind == "periodic" and r.every else ""
        out.append(f"{name}: {r.count} time(s) on {who}, {steps}{every}, "
                   f"{time_h(r.median)} each{spread}, blocking the device")
    if out_of:
        out.append(f"{out_of} more host event(s) at no period, each shorter (podscale show "
                   "--format json lists them)")
    return out
