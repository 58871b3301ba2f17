"""Inside the captured steps: where each process's device time went, and what the slowest
process ran that the median process did not.

Each process reduced its own trace (:mod:`podscale.core.attribution` defines the parts:
compute, host callback, collective exposed and hidden behind other ops, idle). Here, per
process, the median of each part over its captured steps, and the **overlap**: hidden over
collective time. A process that arrives early at a collective waits inside it, so on the
others the slow process's extra work shows as exposed collective time.

Per collective instance (the *k*-th op of a name in a captured step) every process's
**arrival** is its op's start on process 0's clock: its **skew** is the arrival after the
first process's, its **wait** the last process's arrival after its own (the time it spends
inside the collective for the others, had the transfer no cost).

The **op diff** (the TraceDiff idea) takes the process with the most work per captured
step (compute plus callback: what is not waiting) against the median process (the lower
median), and lists each op's count and time per step (and per device of the process) on
both, what the slowest process
spends more on first.
"""

from __future__ import annotations

import pandas as pd

from podscale.analysis.profile.load import Profile
from podscale.analysis.units import time_h
from podscale.core.attribution import kind

PARTS = ["compute", "callback", "exposed", "hidden", "idle"]
#: an op difference is a Finding when it is at least this share of the median span
DIFF_SHARE = 0.1


def attribution(p: Profile) -> pd.DataFrame:
    """Per process: captured steps, and the median span, parts and collective time per
    step (seconds); overlap = hidden / collective (NaN without collective time)."""
    cols = ["process", "steps", "span", *PARTS, "collective", "overlap"]
    c = p.captures
    if c.empty or c["compute_us"].isna().all():
        return pd.DataFrame(columns=cols)
    c = c.dropna(subset=["compute_us"])
    g = c.groupby("process").agg(
        steps=("step", "size"), span=("span_us", "median"),
        **{k: (f"{k}_us", "median") for k in PARTS}, collective=("collective_us", "median"))
    for k in ["span", *PARTS, "collective"]:
        g[k] = g[k].astype(float) / 1e6
    g["overlap"] = (g["hidden"] / g["collective"]).where(g["collective"] > 0)
    return g.reset_index()[cols]


def op_diff(p: Profile, att: pd.DataFrame) -> tuple[int, int, pd.DataFrame] | None:
    """(slowest process, median process, per op: count and seconds per step on each, and
    the difference), what the slowest process spends more on first (its extra time shows
    on the median process as waiting in a collective: that op comes last); None with fewer
    than 2 processes or no op records."""
    ops = p.capture_ops
    if ops.empty or len(att) < 2:
        return None
    work = (att.set_index("process")["compute"] + att.set_index("process")["callback"])
    order = work.sort_values(kind="stable")
    slow, median = int(order.index[-1]), int(order.index[(len(order) - 1) // 2])
    if slow == median:
        return None
    steps = ops.drop_duplicates(["process", "first"]).groupby("process")["steps"].sum()
    # the op totals hold every local device's executions: per step is per device and step
    devices = p.captures.groupby("process")["devices"].median()

    def per_step(process: int) -> pd.DataFrame:
        mine = ops[ops["process"] == process].groupby("op")[["count", "us"]].sum()
        d = devices.get(process, 1)
        n = max(1, int(steps.get(process, 0)) * (int(d) if d == d and d >= 1 else 1))
        return pd.DataFrame({"count": mine["count"] / n, "seconds": mine["us"] / n / 1e6})

    t = per_step(slow).add_suffix("_slow").join(per_step(median).add_suffix("_median"),
                                                how="outer").fillna(0.0)
    t["diff"] = t["seconds_slow"] - t["seconds_median"]
    t = t.sort_values("diff", ascending=False, kind="stable")
    return slow, median, t.reset_index()


def top_ops(p: Profile, n: int = 5) -> pd.DataFrame:
    """The ops with the most device time in the captured steps, over every process: op,
    seconds per step and device, and share of the ops' time."""
    ops = p.capture_ops
    if ops.empty:
        return pd.DataFrame(columns=["op", "seconds", "share"])
    steps = ops.drop_duplicates(["process", "first"])["steps"].sum()
    devices = p.captures.groupby("process")["devices"].median() if len(p.captures) else {}
    d = float(pd.Series(devices).median()) if len(devices) else 1.0
    per = ops.groupby("op")["us"].sum().sort_values(ascending=False, kind="stable")
    out = pd.DataFrame({"op": per.index,
                        "seconds": per.to_numpy() / 1e6 / max(1.0, steps * (d if d == d else 1)),
                        "share": per.to_numpy() / per.sum()})
    return out.head(n).reset_index(drop=True)


def top_sentence(t: pd.DataFrame) -> list[str]:
    if t.empty:
        return []
    return ["top ops by device time in the captured steps (per step and device): " + ", ".join(
        f"{r.op} {time_h(r.seconds)} ({100 * r.share:.0f}%)" for r in t.itertuples())]


def findings(att: pd.DataFrame, w: pd.DataFrame,
             found: tuple[int, int, pd.DataFrame] | None) -> list[str]:
    """The op that sets the slowest process apart (``found``: :func:`op_diff`), who waits
    for it, and where (``w``: :func:`waits`)."""
    if att.empty:
        return []
    span = float(att["span"].median())
    late = arrival_findings(w, span)
    if found is None:
        return late
    slow, median, t = found
    # time in a collective is waiting, not work that sets a process apart
    work = t[[kind(str(op)) != "collective" for op in t["op"]]]
    if work.empty or work.iloc[0]["diff"] < DIFF_SHARE * span:
        return late
    top = work.iloc[0]
    what = " (a host callback)" if kind(str(top["op"])) == "callback" else ""
    line = (f"in the captured steps process {slow} spends {time_h(top['diff'])} more per "
            f"step than process {median} (the median) in {top['op']}{what}")
    waiting = att[(att["process"] != slow) & (att["exposed"] >= 0.5 * top["diff"])]
    if len(waiting):
        who = ", ".join(map(str, waiting["process"]))
        line += (f"; process(es) {who} wait {time_h(float(waiting['exposed'].median()))} "
                 "per step in exposed collective time")
    return [line, *late]


def waits(p: Profile) -> pd.DataFrame:
    """Per collective instance (step, op, k) and process: arrival (seconds), skew and wait;
    only instances every capturing process holds."""
    c = p.collectives
    cols = ["process", "step", "op", "k", "start", "dur", "skew", "wait"]
    if c.empty or c["process"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    key = ["step", "op", "k"]
    c = c[c.groupby(key)["process"].transform("size") == c["process"].nunique()]
    g = c.groupby(key)["start"]
    return c.assign(skew=c["start"] - g.transform("min"),
                    wait=g.transform("max") - c["start"])[cols]


def wait_matrix(w: pd.DataFrame) -> pd.DataFrame:
    """Median wait per process (rows) and collective op (columns), seconds."""
    return w.pivot_table(index="process", columns="op", values="wait", aggfunc="median")


def last_arrivals(w: pd.DataFrame) -> pd.DataFrame:
    """The rows (of :func:`waits`) of the process that arrived last at each instance: its
    duration is the collective's own time (it waited for nobody)."""
    return w[w["wait"] == 0]


def collective_table(w: pd.DataFrame) -> pd.DataFrame:
    """Per collective op: instances, the process most often last, the median spread of
    arrivals (last minus first) and the median duration on the last process to arrive
    (the collective's own time: it waited for nobody)."""
    last = last_arrivals(w)
    key = ["step", "op", "k"]
    spread = w.groupby(key)["skew"].max().groupby(level="op").median()
    return pd.DataFrame({
        "instances": last.groupby("op").size(),
        "last": last.groupby("op")["process"].agg(lambda s: int(s.mode().iloc[0])),
        "spread": spread, "own": last.groupby("op")["dur"].median()}).reset_index()


def arrival_findings(w: pd.DataFrame, span: float, most: int = 3) -> list[str]:
    """The ops at which one process arrives last by at least ``DIFF_SHARE`` of the span."""
    if w.empty:
        return []
    med = w.groupby(["op", "process"])["skew"].median()
    out = []
    for op, late in med.groupby(level="op"):
        process, skew = late.idxmax()[1], float(late.max())
        if skew >= DIFF_SHARE * span:
            out.append((skew, f"at {op} process {process} arrives last, {time_h(skew)} "
                        "after the first (median over the captured steps): the others wait "
                        "for it inside the collective"))
    return [line for _, line in sorted(out, reverse=True)[:most]]
