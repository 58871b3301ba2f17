"""Slow steps of a profiled job, each named with the cause its records show.

A **slow step** is one whose job step time (the last process's ready time of the step less
that of the step before) is anomalous against the run's steps by the rule the anomaly
captures use (``podscale.attach.anomaly.anomalous``: above median + 3·MAD and 4x the
median), at least ``MIN_EXCESS_S`` over the median, less the steps kept apart from the
straggler blame (a process compiled the step, or podscale started or stopped a capture:
said apart). What each process did from the previous step's ready to this one's is
broken down (:func:`between`): JAX compiling (any computation's), the other
computations' device time (an eval), podscale's captures, the host's own work (a
checkpoint save: :mod:`.phases`) and the step's own device time. Its **cause**, the first
that explains at least half the excess over the median:

- a process that **stood still** during it (its heartbeat came late: stopped, swapped out,
  a thread holding the interpreter; the record's ``silent`` spans), the one silent longest
  within the step;
- else the largest part of a process's time before the step: **compile**, **other**
  computations (named) or **capture**;
- else a **thread** of the program's own beside the step (an asynchronous checkpoint's, a
  prefetcher's: :func:`threads`) that used the CPU for that long within it, named with
  its frame: the host time, late arrival or device time it caused are said beside;
- else the **host** part (with the periodic work it did);
- else, where processes wait on each other, the process that **arrived last** (the
  straggler table's), with how late;
- else the step's own time on the **device**, where it grew by that much;
- else **unexplained**: no record holds the time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.analysis.profile.steps import apart_steps, job_periods, job_ready
from podscale.analysis.units import time_h
from podscale.core.defaults import ANOMALY_RATIO as MIN_RATIO

COLUMNS = ["step", "seconds", "median", "cause", "process", "silent_s", "late_s", "what",
           "parts"]
#: a slow step is also at least this much over the median (scheduling noise on short
#: steps is none)
MIN_EXCESS_S = 0.01
#: the parts of a process's time before a step, as :func:`between` gives them
PARTS = ("compile", "other", "capture", "host")


def between(tl: pd.DataFrame, led: pd.DataFrame, step: str) -> pd.DataFrame:
    """Per process and step: what the process did from the previous step's ready to this
    step's ready, in seconds: ``compile`` (every call's), ``other`` (the device time of
    the other computations' calls, ``others`` naming the longest), ``capture``
    (podscale's), ``host`` (the device waiting on the host, less those) and ``device``
    (the step's own time on the device)."""
    rows = []
    for p, mine in tl.groupby("process"):
        ends = np.sort(led.loc[led["process"] == p, "seq"].to_numpy())
        at = np.searchsorted(ends, mine["seq"].to_numpy(), side="left")
        c = mine.assign(step=at)[at < len(ends)]
        own = c["name"] == step
        other = c[~own]
        # a call's time is its idle before it and its busy time: a compile counts within
        # the idle (as the goodput ledger counts it), so the parts never overlap (a first
        # call's compile had been counted again inside its busy time: an eval of 1.48 s
        # "also" compiling 1.48 s in a 2.63 s step)
        c = c.assign(compile=np.minimum(c["idle"].clip(lower=0), c["compile"]))
        c = c.assign(host=(c["idle"] - c["compile"] - c["profiler"]).clip(lower=0),
                     cap=c["profiler"] + c["profiler_busy"],
                     other=np.where(own, 0.0, c["busy"]),
                     device=np.where(own, c["busy"] - c["profiler_busy"], 0.0))
        g = c.groupby("step")
        top = other.groupby(["step", "name"])["busy"].sum().reset_index() \
            .sort_values("busy").groupby("step")["name"].last()
        part = pd.DataFrame({"compile": g["compile"].sum(), "other": g["other"].sum(),
                             "capture": g["cap"].sum(), "host": g["host"].sum(),
                             "device": g["device"].sum()})
        rows.append(part.assign(process=p, others=top.reindex(part.index).fillna("")))
    return pd.concat(rows).rename_axis("step").reset_index() if rows else pd.DataFrame()


def threads(background: pd.DataFrame, led: pd.DataFrame) -> pd.DataFrame:
    """Per process, step, thread and frame: the CPU seconds the program's other threads
    used within the step's window (from the previous step's ready to its own), each
    sampled row's time spread evenly over when it was read (``begin`` to ``end``); a row
    without those (an older record) goes to the step of the call it delayed, as
    :func:`between` places calls."""
    cols = ["step", "process", "thread", "frame", "seconds"]
    if background is None or background.empty or led.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for p, mine in background.groupby("process"):
        own = led[led["process"] == p].sort_values("step")
        steps, ready = own["step"].to_numpy(), own["ready"].to_numpy(float)
        edges = np.concatenate([[-np.inf], ready])  # step i's window: edges[i] to edges[i+1]
        timed = mine["begin"].notna() & mine["end"].notna() if "begin" in mine else \
            pd.Series(False, index=mine.index)
        known = np.fmax.accumulate(edges)  # ready in step order; an unknown one skipped
        for r in mine[timed].itertuples(index=False):
            lo, hi = float(r.begin), max(float(r.end), float(r.begin) + 1e-9)
            # only the windows that can overlap it (a long run has thousands of steps)
            first = int(np.searchsorted(known[1:], lo, side="right"))
            last = int(np.searchsorted(known[:-1], hi, side="left"))
            share = np.nan_to_num(np.clip(np.minimum(hi, edges[first + 1:last + 1]) -
                                          np.maximum(lo, edges[first:last]), 0, None))
            for i in np.nonzero(share)[0]:
                rows.append((int(steps[first + i]), p, r.thread, r.frame,
                             r.seconds * share[i] / (hi - lo)))
        ends = np.sort(own["seq"].to_numpy())
        at = np.searchsorted(ends, mine.loc[~timed, "seq"].to_numpy(), side="left")
        rows += [(int(steps[i]), p, r.thread, r.frame, r.seconds)
                 for i, r in zip(at, mine[~timed].itertuples(index=False)) if i < len(ends)]
    if not rows:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(rows, columns=["step", "process", "thread", "frame", "seconds"]) \
        .groupby(["step", "process", "thread", "frame"], as_index=False)["seconds"].sum()[cols]


def _busiest_thread(busy: pd.DataFrame | None, step: int, least: float) -> dict | None:
    """The thread that used the most CPU within ``step``, as a cause's fields, where that
    is over ``least`` seconds."""
    here = busy[busy["step"] == step] if busy is not None and len(busy) else None
    if here is None or here.empty or here["seconds"].max() <= least:
        return None
    top = here.loc[here["seconds"].idxmax()]
    return {"cause": "thread", "process": int(top["process"]), "late_s": float(top["seconds"]),
            "what": f"{top['thread']} in {top['frame']}"}


def _parts_said(here: pd.DataFrame, grew: pd.Series) -> dict[str, float]:
    """A slow step's parts as the sentence lists them: the most any process spent on each
    (the other computations named), and how much the step's device time grew."""
    if here.empty:
        return {}
    named = here.loc[here["other"].idxmax(), "others"]
    return {**{(f"other ({named})" if k == "other" and named else k): float(here[k].max())
               for k in PARTS}, "device": float(grew.max())}


def _part_cause(parts: pd.DataFrame, excess: float) -> dict | None:
    """The largest part of one process's time before the step, where it explains at
    least half the excess: the cause, the process, its seconds and what."""
    if parts.empty:
        return None
    best = max(((k, int(parts.loc[parts[k].idxmax(), "process"]), float(parts[k].max()))
                for k in PARTS), key=lambda t: t[2])
    if best[2] <= 0.5 * excess:
        return None
    what = str(parts.loc[parts["process"] == best[1], "others"].iloc[0]) \
        if best[0] == "other" else ""
    return {"cause": best[0], "process": best[1], "late_s": best[2], "what": what}


def slow_steps(led: pd.DataFrame, blame: pd.DataFrame, silent: pd.DataFrame,
               peers: bool | None, occurrences: pd.DataFrame | None = None,
               parts: pd.DataFrame | None = None,
               busy: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per slow step: number, job step time, the run's median, the cause (module
    doc), process, silent or cause seconds, what (a computation, periodic work, a thread)
    and every part (:func:`between`); ``busy``: other threads' CPU (:func:`threads`)."""
    if led.empty:
        return pd.DataFrame(columns=COLUMNS)
    ready = job_ready(led)
    periods = job_periods(led, skip=0)
    if len(periods) < 5:
        return pd.DataFrame(columns=COLUMNS)
    by_step = blame.set_index("step") if len(blame) else pd.DataFrame()
    kept = apart_steps(led)
    apart = set(kept.index[kept != ""])
    steady = job_periods(led)  # the median every figure of the summary uses
    med = float(steady.median()) if len(steady) else float(periods.median())
    slow = periods[_anomalous(periods, med) & ~periods.index.isin(list(apart))
                   & (periods - med >= MIN_EXCESS_S)]
    parts = parts if parts is not None else pd.DataFrame(columns=["step", "process", *PARTS])
    usual = parts.groupby("process")["device"].median() if len(parts) else pd.Series()
    rows = []
    for step, seconds in slow.items():
        begin, end = float(ready[step - 1]), float(ready[step])
        within = (np.fmin(silent["end"], end) - np.fmax(silent["start"], begin)).clip(lower=0) \
            if len(silent) else pd.Series(dtype=float)
        excess = seconds - med
        here = parts[parts["step"] == step]
        row = {"step": int(step), "seconds": float(seconds), "median": med,
               "cause": "unexplained", "process": None, "silent_s": 0.0, "late_s": 0.0,
               "what": "", "parts": {}}
        grew = (here["device"] - here["process"].map(usual)).clip(lower=0) if len(here) \
            else pd.Series(dtype=float)
        row["parts"] = _parts_said(here, grew)
        found = _part_cause(here, excess)
        thread = _busiest_thread(busy, int(step), 0.5 * excess)
        if thread is not None and (found is None or found["cause"] == "host"):
            found = thread  # the host's time, a late arrival or the device's: its doing
        if len(within) and within.max() > 0.5 * excess:
            i = within.idxmax()
            row.update(cause="stood still", process=int(silent.loc[i, "process"]),
                       silent_s=float(within[i]))
        elif found is not None:
            row.update(found)
            if found["cause"] == "host":
                row["what"] = _doing(occurrences, found["process"], int(step) - 1)
        elif peers is not False and step in by_step.index and \
                float(by_step.loc[step, "lost"]) + float(by_step.loc[step].get("skew", 0.0)) \
                > 0.5 * excess:
            b = by_step.loc[step]
            row.update(cause="arrived last", process=int(b["last"]),
                       late_s=float(b["lost"]) + float(b.get("skew", 0.0)))
        elif len(grew) and grew.max() > 0.5 * excess:
            row.update(cause="device", process=int(here.loc[grew.idxmax(), "process"]),
                       late_s=float(here.loc[grew.idxmax(), "device"]))
        elif not len(here):
            row["cause"] = "device"  # no breakdown: as before, the step itself
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _anomalous(periods: pd.Series, med: float) -> pd.Series:
    """Which of the job's step times are anomalous against the steady median ``med``."""
    mad = float((periods - med).abs().median())
    return (periods > MIN_RATIO * med) & (periods > med + 3 * mad)


def _doing(occurrences: pd.DataFrame | None, process: int, after: int) -> str:
    """The periodic work (:mod:`.phases`) a process did after step ``after``, if any."""
    if occurrences is None or occurrences.empty:
        return ""
    at = occurrences[(occurrences["process"] == process) & (occurrences["step"] == after)]
    return str(at.sort_values("seconds")["what"].iloc[-1]) if len(at) else ""


def findings(slow: pd.DataFrame, names: dict[int, str] | None = None) -> list[str]:
    """The slow steps in sentences (the first five, then a count); ``names``: how each
    process is named (a multi-slice job's: its slice and host)."""
    fmt = time_h
    out = []
    for r in slow.head(5).itertuples(index=False):
        head = f"step {r.step} took {fmt(r.seconds)}, {r.seconds / r.median:.0f}x the " \
               f"median {fmt(r.median)}"
        who = (names or {}).get(int(r.process), f"process {int(r.process)}") \
            if r.process is not None and r.process == r.process else ""
        if r.cause == "stood still":
            out.append(f"{head}: {who} stood still for {fmt(r.silent_s)} in it "
                       "(its heartbeat stopped: stopped, swapped out, or a thread holding "
                       "the interpreter)")
        elif r.cause == "host":
            doing = f" in {r.what}" if r.what else ""
            out.append(f"{head}: the device waited {fmt(r.late_s)} for {who}'s "
                       f"host{doing} before it")
        elif r.cause == "compile":
            out.append(f"{head}: {who} compiled for {fmt(r.late_s)} before it")
        elif r.cause == "other":
            out.append(f"{head}: {who} ran {r.what or 'other computations'} for "
                       f"{fmt(r.late_s)} before it")
        elif r.cause == "capture":
            out.append(f"{head}: podscale's capture took {fmt(r.late_s)} of {who}'s time")
        elif r.cause == "thread":
            out.append(f"{head}: {who}'s thread {r.what} used {fmt(r.late_s)} of CPU "
                       "in it (the program's own thread beside the step: an asynchronous "
                       "save or a prefetch competes with it)")
        elif r.cause == "arrived last":
            out.append(f"{head}: {who} arrived last, {fmt(r.late_s)} after the others")
        elif r.cause == "device":
            mine = f" ({who}'s step: {fmt(r.late_s)})" if who else ""
            out.append(f"{head}: on the device{mine}")
        else:
            out.append(f"{head}: no record explains it (no compile, other computation, "
                       "capture, host work, stall or late arrival; the step's own device "
                       "time did not grow)")
        also = [f"{k} {fmt(v)}" for k, v in (r.parts or {}).items()
                if k.split(" ")[0] != r.cause and v >= 0.1 * (r.seconds - r.median)]
        if also and r.cause != "stood still":
            out[-1] += f" (also: {', '.join(also)})"
    if len(slow) > 5:
        out.append(f"{len(slow) - 5} more slow step(s) (podscale show --format json lists "
                   "them)")
    return out
