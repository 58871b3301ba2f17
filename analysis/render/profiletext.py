"""A profiled run as text (``podscale show``, ``podscale profile``): a heading, the step
table per process (at most 120 columns), the goodput ledger, and the Findings."""

from __future__ import annotations

import textwrap

import pandas as pd

from podscale.analysis.profile.goodput import ORDER
from podscale.analysis.profile.summary import ProfileSummary
from podscale.analysis.units import time_h
from podscale.analysis.verdicts.profilefindings import findings
from podscale.core import runfolder as rf
from podscale.core.manifest import abandoned_because
from podscale.core.profilerecord import window_label

#: the output's width: tables and Findings fit it
WIDTH = 120


def viewer(traces: object) -> str:
    """The command that opens ``traces`` in XProf, by what is installed here: ``xprof``
    (tensorboard-plugin-profile's own), else TensorBoard."""
    import shutil
    import sys
    from pathlib import Path

    here = Path(sys.executable).parent
    if shutil.which("xprof") or (here / "xprof").exists():
        return f"xprof --logdir {traces}"
    return f"tensorboard --logdir {traces}"


def shorten(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` columns, an ellipsis saying so (the program's arguments
    can run to hundreds of characters)."""
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


STEP_COLUMNS = {"process": "process", "steps": "steps", "median": "median", "p90": "p90",
                "host_gap": "host gap", "late": "late", "lost": "time lost",
                "straggler": "straggler"}


def _text_table(df: pd.DataFrame) -> str:
    """Columns right-aligned, two spaces apart, or one where two would pass ``WIDTH``."""
    cells = [[str(c) for c in df.columns]] + [[str(v) for v in row] for row in df.values]
    widths = [max(len(r[i]) for r in cells) for i in range(len(df.columns))]
    gap = "  " if sum(widths) + 2 * (len(widths) - 1) <= WIDTH else " "
    return "\n".join(gap.join(v.rjust(w) for v, w in zip(r, widths)).rstrip() for r in cells)


def timed(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``df`` with the seconds in ``cols`` as people read them (µs, ms, s)."""
    return df.assign(**{c: df[c].map(time_h) for c in cols})


def step_frame(s: ProfileSummary) -> pd.DataFrame:
    """Per process: steps, median and p90 step time, host gap per step, steps it was late
    at, time lost to it and whether that is chronic; as shown (text and report)."""
    return timed(s.table[list(STEP_COLUMNS)], ["median", "p90", "host_gap", "lost"]) \
        .rename(columns=STEP_COLUMNS)


def step_table(s: ProfileSummary) -> str:
    return _text_table(step_frame(s))


#: the goodput ledger's parts as table headings (short: the table stays within 120 columns)
SHORT = {"interpreter": "interp", "other computations": "other", "productive": "product",
         "anomalous": "anomal", "unattributed": "unattr", "after steps": "after"}


def goodput_table(s: ProfileSummary) -> str:
    """Per process: each part of the wall time that is not zero everywhere, and the wall."""
    g = s.goodput
    keep = [c for c in ORDER if (g[c].abs() >= 5e-4).any()]
    t = timed(g[["process", *keep, "wall"]], [*keep, "wall"])
    for c in keep:  # a part that cannot be negative is a defect (said in the Findings)
        t.loc[g[c] < -5e-4, c] = "defect!"
    return _text_table(t.rename(columns=SHORT))


def computations_table(s: ProfileSummary) -> str:
    """Without a step: every computation, its calls per process and median busy time."""
    c = s.others
    t = timed(c, ["busy_median"]).rename(columns={
        "name": "computation", "calls_min": "calls (min)", "calls_max": "calls (max)",
        "busy_median": "median busy"})
    return _text_table(t)


def captures_table(s: ProfileSummary) -> list[str]:
    """Captured windows: per window and process, the steps its trace holds and the median
    per step of their span and its parts (each process's own reduction: compute, host
    callback, exposed and hidden collective, idle), and where XProf finds them."""
    c, wins = s.profile.captures, s.profile.windows
    if wins.empty:
        return []
    out = []
    # a window is its steps (--profile-steps, --profile-every) or its trigger (an anomaly:
    # each process holds the steps that ran while it profiled)
    key = [str(t) if isinstance(t, list) else f"{a}:{b}"
           for a, b, t in zip(wins["first"], wins["stop"], wins["trigger"])]
    for k in dict.fromkeys(key):
        mine = wins[[x == k for x in key]]
        trig = mine["trigger"].iloc[0]
        firsts = set(mine["first"])
        w = c[c["first"].isin(firsts) & c["process"].isin(set(mine["process"]))] \
            if len(c) else c
        first, stop = mine["first"].iloc[0], mine["stop"].iloc[0]
        if not isinstance(trig, list) and len(w):  # a window the program's end cut: None
            w = w[w["stop"].isna() if pd.isna(stop) else w["stop"] == stop]
        steps = sorted(set(w["step"])) if len(w) else []
        window = (f"after the anomalous step {trig[0]} (seen first by process {trig[1]})"
                  if isinstance(trig, list) else window_label(first, stop))
        if not isinstance(trig, list) and pd.isna(stop):
            window += " (cut: the program ended inside the window)"
        held = ("no step execution found" if not steps else f"step {steps[0]} held"
                if len(steps) == 1 else f"steps {steps[0]}-{steps[-1]} held")
        noun = "step" if window.isdigit() else "steps"
        out.append(f"# captured {noun} {window}: {held}")
        if steps:
            out.append(_text_table(capture_frame(w)))
    out.append(f"# XProf: {viewer(s.profile.run_dir / rf.TRACES)}")
    out.append("# one Perfetto timeline of every process: podscale trace RUN_DIR (this run)")
    return out


def capture_frame(w: pd.DataFrame) -> pd.DataFrame:
    """Per process: captured steps, medians per step (as people read them), cut short."""
    parts = ["span", "compute", "callback", "exposed", "hidden", "idle"]
    t = w.groupby("process").agg(steps=("step", "size"), cut=("cut", "any"),
                                 **{k: (f"{k}_us", "median") for k in parts})
    for k in parts:
        t[k] = (t[k].astype(float) / 1e6).map(lambda v: "" if v != v else time_h(v))
    t["cut"] = t["cut"].map({True: "CUT SHORT", False: ""})
    return t.reset_index()[["process", "steps", *parts, "cut"]]


def heading(s: ProfileSummary) -> list[str]:
    p = s.profile
    spec, m = p.manifest.spec, p.manifest
    n = int(p.processes["process"].nunique())
    script = spec.get("script", "?").rsplit("/", 1)[-1]
    why = abandoned_because(p.run_dir, m)
    head = f"# podscale profile {m.run_id} ({'abandoned' if why else m.status}): {script}"
    lines = [shorten(f"{head} {' '.join(spec.get('args') or [])}".rstrip(), WIDTH)]
    if why:
        lines.append(f"# abandoned: {why}")
    residual = p.clock_residual_s
    clocks = f", clocks aligned within {time_h(residual)}" if n > 1 and residual == residual \
        else ""
    unknown = sorted(p.processes.index[p.processes["offset_us"].isna()])
    if n > 1 and unknown:
        clocks += (f" (no clock offset for process(es) {', '.join(map(str, unknown))}: "
                   "their times are their own clock's)")
    if s.step is None:
        lines.append(f"# {n} process(es){clocks}; no recurring computation")
    else:
        lines.append(f"# {n} process(es), step {s.step} ({s.steps} steps){clocks}")
    return lines


def render(s: ProfileSummary) -> str:
    out = heading(s)
    if s.step is not None:
        out += [step_table(s), "", "# where each process's wall time went", goodput_table(s)]
        out += captures_table(s)
    elif len(s.others):
        out += [computations_table(s)]
    said = findings(s)
    if said:
        out += ["", "Findings:"] + [textwrap.fill(f"- {line}", WIDTH, subsequent_indent="  ",
                                                  break_long_words=False,
                                                  break_on_hyphens=False) for line in said]
    return "\n".join(out)


def export(s: ProfileSummary, fmt: str) -> str:
    """The per-process step table at full precision, with the goodput ledger and the
    goodput and badput by cause (``badput.<cause>``), as csv or json."""
    from podscale.analysis.profile.badput import CAUSES, badput

    b = badput(s)
    b = b[b["process"] != "job"].astype({"process": int}).rename(
        columns={c: f"badput.{c}" for c in CAUSES}).drop(columns=["productive", "wall"])
    table = s.table.merge(s.goodput, on="process", how="left").merge(
        b, on="process", how="left") if len(s.table) else s.table
    return table.to_csv(index=False) if fmt == "csv" else table.to_json(orient="records",
                                                                         indent=1)
