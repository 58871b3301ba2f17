"""Slow steps of a profiled job, each named with its cause where the records show one.

A **slow step** is one whose job step time (the last process's ready time of the step less
that of the step before) is anomalous against the run's steps by the rule the anomaly
captures use (``podscale.attach.anomaly.anomalous``: above median + 3·MAD and 4x the
median), at least ``MIN_EXCESS_S`` over the median, less the steps kept apart from the
straggler blame (a process compiled, or podscale started or stopped a capture: said
apart). Its **cause**, in order:

- a process that **stood still** during it (its heartbeat came late: stopped, swapped out,
  a thread holding the interpreter; the record's ``silent`` spans), the one silent longest
  within the step;
- else a process whose **host** kept the device waiting before the step (its host gap:
  a checkpoint save, :mod:`.phases`), with what it did;
- else, where processes wait on each other, the process that **arrived last** (the
  straggler table's), with how late;
- else the step itself was slow on the device (its own busy time).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.analysis.profile.steps import apart_steps, job_periods, job_ready
from podscale.analysis.units import time_h
from podscale.core.defaults import ANOMALY_RATIO as MIN_RATIO

COLUMNS = ["step", "seconds", "median", "cause", "process", "silent_s", "late_s", "what"]
#: a slow step is also at least this much over the median (scheduling noise on short
#: steps is none)
MIN_EXCESS_S = 0.01


def _anomalous(periods: pd.Series) -> pd.Series:
    """Which of the job's step times are anomalous against all of them."""
    med = float(periods.median())
    mad = float((periods - med).abs().median())
    return (periods > MIN_RATIO * med) & (periods > med + 3 * mad)


def slow_steps(led: pd.DataFrame, blame: pd.DataFrame, silent: pd.DataFrame,
               peers: bool | None, occurrences: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per slow step: its number, job step time and the run's median, the cause
    (``stood still``, ``arrived last`` or ``device``), the process and how long it was
    silent within the step or how late it arrived."""
    if led.empty:
        return pd.DataFrame(columns=COLUMNS)
    ready = job_ready(led)
    periods = job_periods(led, skip=0)
    if len(periods) < 5:
        return pd.DataFrame(columns=COLUMNS)
    by_step = blame.set_index("step") if len(blame) else pd.DataFrame()
    kept = apart_steps(led)
    apart = set(kept.index[kept != ""])
    med = float(periods.median())
    slow = periods[_anomalous(periods) & ~periods.index.isin(list(apart))
                   & (periods - med >= MIN_EXCESS_S)]
    gap = led.pivot_table(index="step", columns="process", values="host_gap", aggfunc="sum")
    rows = []
    for step, seconds in slow.items():
        begin, end = float(ready[step - 1]), float(ready[step])
        within = (np.fmin(silent["end"], end) - np.fmax(silent["start"], begin)).clip(lower=0) \
            if len(silent) else pd.Series(dtype=float)
        row = {"step": int(step), "seconds": float(seconds), "median": med, "cause": "device",
               "process": None, "silent_s": 0.0, "late_s": 0.0, "what": ""}
        host = gap.loc[step] if step in gap.index else pd.Series(dtype=float)
        if len(within) and within.max() > 0.5 * (seconds - med):
            i = within.idxmax()
            row.update(cause="stood still", process=int(silent.loc[i, "process"]),
                       silent_s=float(within[i]))
        elif len(host) and host.max() > 0.5 * (seconds - med):
            who = int(host.idxmax())
            row.update(cause="host", process=who, late_s=float(host.max()),
                       what=_doing(occurrences, who, int(step) - 1))
        elif peers is not False and step in by_step.index:
            b = by_step.loc[step]
            late = float(b["lost"]) + float(b.get("skew", 0.0))
            if late > 0.5 * (seconds - med):
                row.update(cause="arrived last", process=int(b["last"]), late_s=late)
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _doing(occurrences: pd.DataFrame | None, process: int, after: int) -> str:
    """The periodic work (:mod:`.phases`) a process did after step ``after``, if any."""
    if occurrences is None or occurrences.empty:
        return ""
    at = occurrences[(occurrences["process"] == process) & (occurrences["step"] == after)]
    return str(at.sort_values("seconds")["what"].iloc[-1]) if len(at) else ""


def findings(slow: pd.DataFrame) -> list[str]:
    """The slow steps in sentences (the first five, then a count)."""
    fmt = time_h
    out = []
    for r in slow.head(5).itertuples(index=False):
        head = f"step {r.step} took {fmt(r.seconds)}, {r.seconds / r.median:.0f}x the " \
               f"median {fmt(r.median)}"
        if r.cause == "stood still":
            out.append(f"{head}: process {int(r.process)} stood still for {fmt(r.silent_s)} in it "
                       "(its heartbeat stopped: stopped, swapped out, or a thread holding "
                       "the interpreter)")
        elif r.cause == "host":
            doing = f" in {r.what}" if r.what else ""
            out.append(f"{head}: the device waited {fmt(r.late_s)} for process "
                       f"{int(r.process)}'s host{doing} before it")
        elif r.cause == "arrived last":
            out.append(f"{head}: process {int(r.process)} arrived last, {fmt(r.late_s)} after "
                       "the others")
        else:
            out.append(f"{head}: on the device (no process stood still or arrived late)")
    if len(slow) > 5:
        out.append(f"{len(slow) - 5} more slow step(s) (podscale show --format json lists "
                   "them)")
    return out
