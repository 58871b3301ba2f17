"""The step ledger of a profiled program, across processes, and who the job waited for.

Definitions (every time on process 0's clock, :mod:`.load`):

- **The step** is the dominant recurring computation: among those every process called at
  least ``MIN_CALLS`` times, the one with the most repeated work ((calls - 1) x its
  program's flops + bytes; busy time breaks ties; ``--step NAME`` overrides). Step *k* is
  each process's *k*-th call of it (a multi-controller program calls the same
  computations in the same order on every process).
- A process **arrives** at step *k* when its device can start it: the later of the call's
  dispatch plus what JAX compiled during it and the ready time of the call it dispatched
  just before (any computation: a device runs one process's calls in order). Its
  **busy** time is ready minus arrival; its **host gap** is how long the device sat idle
  before it for reasons other than compiling: Python between steps.
- **Time lost** to a straggler: for each step, what the job would have saved had the last
  process arrived with the second-last (last arrival minus second-last, at most what the
  step took the job), blamed on the last process; summed per process. Steps where a
  process compiled (start-up skew) or podscale captured lose nothing (``apart``). A
  process is **late** at a step when it was last by more than ``late_threshold`` (5% of
  the median step, at least 0.5 ms); **chronic** when
  late in at least a quarter of the steps (and at least 3) and more often than chance
  would make it among the late steps of all processes (one-sided binomial test against
  1/P, p < ``CHANCE_P``: with 2 processes and noise above the threshold one of them is
  always last); **sporadic** when late in 3 or more steps but not chronic; **one-off**
  when late in one or two.
- Whether the step waits on peers, and a **desync**: :mod:`.peers`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podscale.core.steprule import repeated_work, weight

MIN_CALLS = 3
#: the first steps hold each computation's compiles: the job's step time leaves them out
WARMUP = 2
#: a process is a chronic straggler only when its share of the late steps has a chance
#: probability below this (each of P processes equally likely to be the late one)
CHANCE_P = 0.01


def timeline(calls: pd.DataFrame, compiles: pd.DataFrame,
             windows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every call on its process's device timeline: ``compile`` (seconds JAX compiled
    during the call's dispatch), ``arrival`` (the later of dispatch + compile and the
    previous call's ready), ``idle`` (the device waiting for the host before it: compile
    first, then Python), ``profiler`` (the part of idle spent starting or stopping a
    capture window), ``busy`` (arrival to ready) and ``profiler_busy`` (the part of busy
    spent on a capture the host started or stopped inside the step: one the program marks
    with an annotation)."""
    c = calls.copy()
    in_call = compiles.dropna(subset=["seq"])
    spent = in_call.groupby(["process", "seq"])["seconds"].sum()
    keys = pd.MultiIndex.from_arrays([c["process"], c["seq"]])
    c["compile"] = spent.reindex(keys).fillna(0.0).to_numpy(dtype=float) if len(spent) else 0.0
    c["prev_ready"] = c.groupby("process")["ready"].shift(1).fillna(c["dispatch"])
    c["arrival"] = np.fmax(c["dispatch"] + c["compile"], c["prev_ready"])
    c["idle"] = (c["arrival"] - c["prev_ready"]).clip(lower=0)
    c["busy"] = c["ready"] - c["arrival"]
    c["profiler"] = c["profiler_busy"] = 0.0
    for _, w in (windows if windows is not None else pd.DataFrame()).iterrows():
        mine = c["process"] == w["process"]
        for a, b in w["spans"]:
            lo = np.fmax(c.loc[mine, "prev_ready"], a)
            hi = np.fmin(c.loc[mine, "arrival"], b)
            c.loc[mine, "profiler"] += (hi - lo).clip(lower=0)
            # inside a step the program marks itself, a capture's start or stop lands
            # between its calls: busy time of the step's, but podscale's cost; only the
            # step the host was in (an earlier one still queued on the device is not it)
            issued = (c.loc[mine, "dispatch"] <= b) & (c.loc[mine, "returned"] >= a)
            lo, hi = np.fmax(c.loc[mine, "arrival"], a), np.fmin(c.loc[mine, "ready"], b)
            c.loc[mine, "profiler_busy"] += ((hi - lo).clip(lower=0).fillna(0.0)
                                             .where(issued, 0.0))
    return c


def annotated(calls: pd.DataFrame, compiles: pd.DataFrame, annotations: pd.DataFrame,
              name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The calls with those inside each of the program's ``name`` annotations merged into
    one call named ``name``: dispatched with the first, returned with the last, ready
    with the last ready (the step the program marked itself); and the compiles, those
    inside an annotation moved to its merged call."""
    marks = annotations[annotations["name"] == name]
    c, comp = calls.copy(), compiles.copy()
    c["annotation"] = -1
    for i, m in enumerate(marks.itertuples(index=False)):
        inside = (c["process"] == m.process) & c["seq"].between(m.first, m.end - 1)
        c.loc[inside, "annotation"] = i
        moved = (comp["process"] == m.process) & comp["seq"].between(m.first, m.end - 1)
        comp.loc[moved, "seq"] = m.first
    alone = c[c["annotation"] < 0]
    merged = c[c["annotation"] >= 0].groupby("annotation").agg(
        process=("process", "first"), computation=("computation", "first"),
        seq=("seq", "min"), dispatch=("dispatch", "min"), returned=("returned", "max"),
        ready=("ready", "max")).assign(name=name)
    out = pd.concat([alone.drop(columns="annotation"), merged], ignore_index=True)
    return out.sort_values(["process", "seq"], kind="stable").reset_index(drop=True), comp


def other_computations(tl: pd.DataFrame, step: str) -> pd.DataFrame:
    """Every recorded computation but the step, counted apart: calls per process (the
    minimum and maximum over the processes that called it), the median busy time, which
    processes called it, and after which steps (the lowest such process's; -1: before
    the first)."""
    rest = tl[tl["name"] != step]
    if rest.empty:
        return pd.DataFrame(columns=["name", "calls_min", "calls_max", "busy_median",
                                     "processes", "steps"])
    per = rest.groupby(["name", "process"]).agg(calls=("seq", "size"),
                                                busy=("busy", "median")).reset_index()
    out = per.groupby("name").agg(calls_min=("calls", "min"), calls_max=("calls", "max"),
                                  busy_median=("busy", "median"),
                                  processes=("process", lambda p: sorted(set(p)))
                                  ).reset_index()
    steps_at = []
    for name, who in zip(out["name"], out["processes"]):
        p = who[0]
        step_seqs = np.sort(tl.loc[(tl["process"] == p) & (tl["name"] == step), "seq"])
        seqs = rest.loc[(rest["process"] == p) & (rest["name"] == name), "seq"]
        steps_at.append([int(i) - 1 for i in np.searchsorted(step_seqs, seqs)])
    out["steps"] = steps_at
    return out


def detect(tl: pd.DataFrame, named: str | None = None) -> str | None:
    """The step's name (``named`` if it was called), or None when nothing recurs: the
    recurring computation with the most repeated work (:mod:`podscale.core.steprule`, the
    rule capture windows decide by); busy time breaks ties and decides where XLA said
    nothing of the programs."""
    if tl.empty:
        return None
    if named is not None:
        return named if (tl["name"] == named).any() else None
    counts = tl.groupby(["name", "process"]).size().groupby("name").min()
    recurring = counts[counts >= MIN_CALLS].index
    if not len(recurring):
        return None
    busy = tl.groupby("name")["busy"].sum().loc[recurring]
    heaviest: dict[str, float] = {}
    if {"flops", "bytes"} <= set(tl.columns):
        for name, f, b in zip(tl["name"], tl["flops"], tl["bytes"]):
            heaviest[name] = max(heaviest.get(name, 1.0), weight(f, b))
    score = pd.DataFrame({"work": [repeated_work(int(counts[n]), heaviest.get(n, 1.0))
                                   for n in busy.index], "busy": busy})
    return str(score.sort_values(["work", "busy"], ascending=False, kind="stable").index[0])


def ledger(tl: pd.DataFrame, step: str) -> pd.DataFrame:
    """One row per process and step: its call's timeline columns, the step index, the host
    gap before it (``idle`` less compile) and the period (ready minus the previous step's
    ready; the first step: ready minus dispatch)."""
    s = tl[tl["name"] == step].copy()
    s["step"] = s.groupby("process").cumcount()
    s["host_gap"] = (s["idle"] - s["compile"] - s["profiler"]).clip(lower=0).round(9)
    s["period"] = s["ready"] - s.groupby("process")["ready"].shift(1)
    s.loc[s["step"] == 0, "period"] = s["ready"] - s["dispatch"]
    cols = ["process", "step", "seq", "dispatch", "returned", "ready", "prev_ready",
            "compile", "profiler", "profiler_busy", "arrival", "idle", "host_gap", "busy",
            "period"]
    return s[cols].reset_index(drop=True)


def job_ready(led: pd.DataFrame) -> pd.Series:
    """Per step (the index, in order): when the job had it, the last process's ready."""
    return led.groupby("step")["ready"].max().sort_index()


def job_periods(led: pd.DataFrame, skip: int = WARMUP) -> pd.Series:
    """The job's step times (ready to ready of the last process), per step, the first
    ``skip`` steps left out."""
    return job_ready(led).diff().iloc[skip:].dropna()


def steps_at(led: pd.DataFrame, processes: pd.Series, seqs: pd.Series) -> list[int | None]:
    """Per (process, launch seq): the step in progress at that launch, or the last one
    before it (None before the first, or where there is no launch)."""
    procs, at = list(processes), list(seqs)
    out: list[int | None] = [None] * len(at)
    for p, mine in led.sort_values("seq").groupby("process"):
        top = np.maximum.accumulate(mine["step"].to_numpy())
        rows = [r for r, q in enumerate(procs) if q == p and at[r] is not None and at[r] == at[r]]
        found = np.searchsorted(mine["seq"].to_numpy(), [at[r] for r in rows], side="right")
        for r, k in zip(rows, found - 1):
            out[r] = int(top[k]) if k >= 0 else None
    return out


def apart_steps(led: pd.DataFrame) -> pd.Series:
    """Per step (the index): why it is not a steady one, or "": ``compile`` where a
    process compiled during it (start-up skew), else ``capture`` where podscale started
    or stopped a capture in it (its own cost)."""
    zero = pd.Series(0.0, index=led.index)

    def any_of(col: pd.Series) -> pd.Series:
        return col.groupby(led["step"]).max() > 0
    compiled = any_of(led.get("compile", zero))
    captured = any_of(led.get("profiler", zero) + led.get("profiler_busy", zero))
    return pd.Series(np.where(compiled, "compile", np.where(captured, "capture", "")),
                     index=compiled.index)


def late_threshold(led: pd.DataFrame) -> float:
    return max(5e-4, 0.05 * float(led["period"].median()))


def stragglers(led: pd.DataFrame) -> pd.DataFrame:
    """Per step present on at least two processes: the last process, the time lost to it
    (last arrival minus second-last), the spread of arrivals, and whether it was late.
    Steps not steady (``apart``): one where a process compiled (``compile``: start-up
    skew, step 0's above all) or podscale started or stopped a capture (``capture``: its
    own cost) lose nothing and are late for nobody; what the last arrival cost there is
    ``skew``."""
    columns = ["step", "last", "second", "lost", "spread", "late", "apart", "skew"]
    threshold = late_threshold(led) if len(led) else 0.0
    a = led.sort_values(["step", "arrival"], kind="stable")  # ties: the ledger's order
    a = a[a.groupby("step")["step"].transform("size") >= 2]
    if a.empty:
        return pd.DataFrame(columns=columns)
    by = a.groupby("step", sort=True)
    last, second = by.nth(-1).set_index("step"), by.nth(-2).set_index("step")
    out = pd.DataFrame({"step": last.index.astype(int),
                        "last": last["process"].astype(int).to_numpy(),
                        "second": second["process"].astype(int).to_numpy(),
                        "lost": (last["arrival"] - second["arrival"]).to_numpy(dtype=float),
                        "spread": (last["arrival"] - by["arrival"].first()).to_numpy(
                            dtype=float)})
    # never more than the step took the job (ready to ready): a ready time observed late
    # (a process that stood still sees its backlog ready at once) cannot make one step
    # cost more than the job spent on it, nor the steps more than the run
    job = job_ready(led)
    first = job - led.groupby("step")["dispatch"].min() if "dispatch" in led else \
        job * np.inf
    took = job.diff().fillna(first).clip(lower=0)
    out["lost"] = np.fmin(out["lost"], took.reindex(out["step"]).to_numpy())
    out["late"] = out["lost"] > threshold
    out["apart"] = apart_steps(led).reindex(out["step"]).to_numpy()
    unsteady = out["apart"] != ""
    out["skew"] = np.where(unsteady, out["lost"], 0.0)
    out.loc[unsteady, "lost"] = 0.0
    out.loc[unsteady, "late"] = False
    return out[columns]


def no_peers(blame: pd.DataFrame) -> pd.DataFrame:
    """The straggler table of a step no process waits on another in: nothing lost, nobody
    late (who is last says nothing)."""
    return blame.assign(lost=0.0, late=False, skew=0.0)


def waits(led: pd.DataFrame) -> pd.Series:
    """Per row of the ledger: how long the process waited for the last arrival."""
    last = led.groupby("step")["arrival"].transform("max")
    return (last - led["arrival"]).clip(lower=0)


def _streak(steps: list[int]) -> tuple[int, int]:
    """(first step, length) of the longest run of consecutive steps."""
    best, start, run = (steps[0], 1), steps[0], 1
    for a, b in zip(steps, steps[1:]):
        start, run = (start, run + 1) if b == a + 1 else (b, 1)
        if run > best[1]:
            best = (start, run)
    return best


def process_table(led: pd.DataFrame, blame: pd.DataFrame) -> pd.DataFrame:
    """Per process: steps, median and p90 step time (period) and host gap per step over
    the steady steps (the first :data:`WARMUP` left out, as every median the summary
    says), steps late, time lost to it, chronic, sporadic or one-off, and since which
    step."""
    n_steps, n_processes = int(led["step"].nunique()), int(led["process"].nunique())
    all_late = int(blame["late"].sum()) if len(blame) else 0
    rows = []
    for p, g in led.groupby("process"):
        mine = blame[blame["last"] == p]
        late = mine[mine["late"]]
        first, streak = _streak(sorted(late["step"])) if len(late) else (None, 0)
        chronic = len(late) >= max(3, n_steps / 4) and \
            _beyond_chance(len(late), all_late, n_processes)
        steady = g[g["step"] >= WARMUP] if (g["step"] >= WARMUP).any() else g
        rows.append({"process": int(p), "steps": len(g),
                     "median": float(steady["period"].median()),
                     "p90": float(steady["period"].quantile(0.9)),
                     "host_gap": float(steady["host_gap"].mean()),
                     "late": len(late), "lost": float(mine["lost"].sum()),
                     "straggler": "chronic" if chronic else "sporadic" if len(late) >= 3
                     else "one-off" if len(late) else "",
                     "since": first if chronic else None, "streak": streak})
    return pd.DataFrame(rows)


def _beyond_chance(late: int, all_late: int, processes: int) -> bool:
    """Whether ``late`` of the ``all_late`` late steps falling on one process is more than
    chance would give it (one-sided binomial test against 1/P, :data:`CHANCE_P`)."""
    from scipy.stats import binomtest

    return binomtest(late, all_late, 1 / processes, alternative="greater").pvalue < CHANCE_P
