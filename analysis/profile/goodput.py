"""The goodput ledger of a profiled program, per process, with nothing marked by hand.

A process's wall time (from its start, or from attach where /proc is unreadable, to the end
of its script) is split into consecutive spans and, inside the steps, into parts that sum
to the steps' span exactly:

- ``interpreter``: process start to attach; ``startup``: attach to the script's
  ``jax.distributed.initialize`` (imports, the script's own set-up); ``join``: joining the
  job (waiting for the slowest process too); ``setup``: joined to the first step's
  dispatch (inputs, other computations);
- inside the steps (first step's dispatch to the last step's ready):
  ``compile`` (JAX's trace, lowering and backend compile durations from ``jax.monitoring``
  while the device waited for them; compiling hidden behind device work costs nothing),
  ``profiler`` (starting and stopping capture windows, and reducing their traces),
  ``waiting`` (at each step, for the last process to arrive), ``host`` (the device idle
  for Python between calls, attributed to frames by the sampler),
  ``other computations`` (busy time of calls other than the step), ``productive`` (each
  step's own busy time up to median + 3·MAD of them, the bound ml-goodput-measurement
  uses for its ideal step time), ``anomalous`` (busy time beyond it), and ``unattributed``
  (what is left: calls whose ready time is unknown);
- ``after steps``: the last step's ready to the script's end (saving, printing, the
  record's final batch).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.analysis.profile.load import Profile
from podscale.analysis.profile.steps import apart_steps, waits

ORDER = ("interpreter", "startup", "join", "setup", "compile", "profiler", "waiting", "host",
         "other computations", "productive", "anomalous", "unattributed", "after steps")


def ideal_bound(busy: pd.Series) -> float:
    """median + 3·MAD of the steps' busy times: beyond it a step is anomalous."""
    med = float(busy.median())
    return med + 3 * float((busy - med).abs().median())


def ideal_step(busy: pd.Series) -> float:
    """The mean of the steps within :func:`ideal_bound` (ml-goodput-measurement's)."""
    return float(busy[busy <= ideal_bound(busy)].mean())


def ledger(profile: Profile, tl: pd.DataFrame, led: pd.DataFrame, step: str,
           peers: bool | None = None) -> pd.DataFrame:
    """One row per process: each part in seconds (:data:`ORDER`) and ``wall``. Inside the
    steps the parts partition the device timeline (:func:`.steps.timeline`) call by call:
    each call's idle time before it (compile, then host) and its busy time (waiting for
    the last process, then its own: productive up to the ideal bound, anomalous above it;
    other computations' busy time apart; ``peers`` False: a step that waits on no other
    process, nothing waiting; in a step podscale's capture started or stopped in
    (:func:`.steps.apart_steps`), the time above the ideal bound is the profiler's, not
    anomalous)."""
    marks = profile.processes
    kept = apart_steps(led)
    captured_steps = set(kept.index[kept == "capture"])
    waited = waits(led) if peers is not False else 0.0
    led = led.assign(wait=np.minimum(waited, led["busy"].clip(lower=0)))
    rows = []
    for p, g in led.groupby("process"):
        m = marks.loc[p]
        begin = float(m["process_start"]) if pd.notna(m.get("process_start")) \
            else float(m["attach"])
        first, last = float(g["dispatch"].min()), float(g["ready"].max())
        end = float(m["end"]) if pd.notna(m.get("end")) else last  # killed: no end record
        joined = pd.notna(m.get("join_start"))
        join_start = float(m["join_start"]) if joined else first
        join_end = float(m["join_end"]) if joined else first
        calls = tl[(tl["process"] == p) & tl["seq"].between(g["seq"].min(), g["seq"].max())]
        lo = calls["prev_ready"].where(calls["seq"] > g["seq"].min(), first)
        idle = (calls["arrival"] - lo).clip(lower=0)
        compile_ = np.minimum(idle, calls["compile"])
        busy = (calls["ready"] - np.fmax(calls["arrival"], lo)).clip(lower=0)
        profiler = np.minimum(calls["profiler"], idle - compile_)
        is_step = calls["name"] == step
        captured = np.minimum(g["profiler_busy"], (g["busy"] - g["wait"]).clip(lower=0))
        own = (g["busy"] - g["wait"] - captured).clip(lower=0)
        bound = ideal_bound(own)
        above = (own - bound).clip(lower=0)
        ours = above.where(g["step"].isin(captured_steps), 0.0)
        parts = {"interpreter": float(m["attach"]) - begin,
                 "startup": join_start - float(m["attach"]),
                 "join": join_end - join_start, "setup": first - join_end,
                 "compile": float(compile_.sum()), "waiting": float(g["wait"].sum()),
                 "profiler": float(profiler.sum()) + float(captured.sum() + ours.sum()),
                 "other computations": float(busy[~is_step].sum()),
                 "productive": float(np.minimum(own, bound).sum()),
                 "anomalous": float((above - ours).sum()),
                 "after steps": end - last}
        parts["host"] = float((idle - compile_).sum() - profiler.sum())
        parts["unattributed"] = (last - first) - sum(parts[k] for k in ORDER[4:11])
        rows.append({"process": int(p), **{k: round(parts[k], 9) for k in ORDER},
                     "wall": end - begin})
    return pd.DataFrame(rows)


def host_frames(profile: Profile, led: pd.DataFrame) -> pd.DataFrame:
    """Sampled host time between computations from the first step to the last, per process
    and frame: seconds in all and per step."""
    g = profile.gaps
    if g.empty or led.empty:
        return pd.DataFrame(columns=["process", "frame", "seconds", "per_step"])
    first = led.groupby("process")["seq"].min()
    last = led.groupby("process")["seq"].max()
    steps = led.groupby("process").size()
    g = g[(g["seq"] >= g["process"].map(first)) & (g["seq"] < g["process"].map(last))]
    out = g.groupby(["process", "frame"])["seconds"].sum().reset_index()
    out["per_step"] = out["seconds"] / out["process"].map(steps)
    return out.sort_values(["process", "seconds"], ascending=[True, False]) \
        .reset_index(drop=True)
