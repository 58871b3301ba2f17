"""``podscale report`` of a profiled program: Findings, then per process the step time over
the steps, how late each process arrived at each step (a heatmap up to 64 processes, the
late-step table beyond), where each process's wall time went, inside the captured steps
(each process's device time by part, and the slowest process's ops against the median
one's), and the tables behind them (HTML with the figures, and a Markdown summary)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.analysis.profile import inside
from podscale.analysis.profile.goodput import ORDER
from podscale.analysis.profile.summary import ProfileSummary, summarize_profile
from podscale.analysis.render.profiletext import capture_frame, heading, step_frame, timed
from podscale.analysis.verdicts.profilefindings import findings

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from podscale.analysis.render.sections import Doc

HEATMAP_MAX = 64
#: collectives a wait heatmap can label (beyond: its table)
LABELLED_MAX = 12


def step_times(s: ProfileSummary) -> Figure:
    """Each process's step time (the period between its readies) against the step."""
    from podscale.analysis.render.plots import plt

    fig, ax = plt.subplots(figsize=(9, 3.2))
    for p, g in s.ledger.groupby("process"):
        ax.plot(g["step"], g["period"] * 1e3, lw=1, label=f"process {p}")
    ax.set_xlabel("step")
    ax.set_ylabel("step time (ms)")
    ax.set_yscale("log")
    if s.ledger["process"].nunique() <= 8:
        ax.legend(fontsize=8, ncol=4)
    ax.set_title(f"{s.step}: step time per process", fontsize=10)
    fig.tight_layout()
    return fig


def lateness(s: ProfileSummary) -> Figure:
    """Arrival after the first process, per process and step (ms), as a heatmap; its
    colour scale from the steady steps (the warm-up's compiles would wash the rest out:
    they show at the scale's top)."""
    import seaborn as sns

    from podscale.analysis.profile.steps import WARMUP
    from podscale.analysis.render.plots import plt

    led = s.ledger.assign(late=(s.ledger["arrival"] - s.ledger.groupby("step")["arrival"]
                                .transform("min")) * 1e3)
    m = led.pivot(index="process", columns="step", values="late")
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(m) + 1.5))
    steady = m.loc[:, [c for c in m.columns if c >= WARMUP]] if m.shape[1] > WARMUP else m
    top = float(steady.max().max()) if steady.size else None
    sns.heatmap(m, ax=ax, cmap="rocket_r", vmin=0, vmax=top if top and top > 0 else None,
                cbar_kws={"label": "arrival after the first (ms; steady steps' scale)"})
    ax.set_title("how late each process arrived at each step", fontsize=10)
    fig.tight_layout()
    return fig


def _stacked(parts: pd.DataFrame, xlabel: str, title: str, **colors: Any) -> Figure:
    """One stacked horizontal bar per process (the rows), a segment per column."""
    from podscale.analysis.render.plots import plt

    fig, ax = plt.subplots(figsize=(9, 0.35 * len(parts) + 1.6))
    parts.plot.barh(stacked=True, ax=ax, width=0.7, **colors)
    ax.set_xlabel(xlabel)
    ax.invert_yaxis()
    ax.legend(fontsize=7, ncol=min(6, parts.shape[1]), loc="upper center",
              bbox_to_anchor=(0.5, -0.35))
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def wall_time(s: ProfileSummary) -> Figure:
    """Each process's wall time as one stacked bar of the goodput ledger's parts."""
    g = s.goodput.set_index("process")[list(ORDER)]
    g = g.loc[:, (g.abs() >= 5e-4).any()]
    return _stacked(g, "seconds", "where each process's wall time went", colormap="tab20")


def device_time(s: ProfileSummary) -> Figure:
    """Each process's median captured step as one stacked bar of its parts."""
    return _stacked(s.inside.set_index("process")[inside.PARTS] * 1e3,
                    "ms per captured step (median)",
                    "inside the captured steps: each process's device time",
                    color=["#4c72b0", "#dd8452", "#c44e52", "#55a868", "#bbbbbb"])


def waits_heatmap(m: pd.DataFrame) -> Figure:
    """Median wait (ms) per process and collective op."""
    import seaborn as sns

    from podscale.analysis.render.plots import plt

    fig, ax = plt.subplots(figsize=(min(9, 2 + 1.2 * m.shape[1]), 0.3 * len(m) + 1.8))
    sns.heatmap(m * 1e3, ax=ax, cmap="rocket_r", annot=len(m) <= 16, fmt=".1f",
                cbar_kws={"label": "median wait (ms)"})
    ax.set_title("how long each process waits inside each collective", fontsize=10)
    fig.tight_layout()
    return fig


def _inside(doc: Doc, s: ProfileSummary) -> None:
    """The captured steps' parts per process, and the op diff."""
    if s.inside.empty:
        return
    doc.heading("Inside the captured steps", "per process, the median captured step's "
                "span and its parts: compute, host callback, collective exposed and hidden "
                "behind other ops, idle (docs/profiling-programs.md defines them)")
    doc.figure(device_time(s), "each process's captured step by part")
    doc.table(capture_frame(s.profile.captures.dropna(subset=["compute_us"])))
    w = s.waits
    if len(w):
        doc.heading("Arrivals at each collective", "per collective op of the captured "
                    "steps: the process most often last, the spread of arrivals (last "
                    "minus first, median) and its own time (the op's duration on the last "
                    "process, which waited for nobody); then each process's median wait")
        doc.table(timed(inside.collective_table(w), ["spread", "own"]))
        if w["process"].nunique() <= HEATMAP_MAX and w["op"].nunique() <= LABELLED_MAX:
            doc.figure(waits_heatmap(inside.wait_matrix(w)),
                       "median wait per process and collective")
        else:
            doc.table(inside.wait_matrix(w).reset_index(), collapsed="waits per process")
    if s.op_diff is not None:
        slow, median, t = s.op_diff
        doc.heading("Ops: the slowest process against the median one",
                    f"process {slow} (most compute and callback time per step) against "
                    f"process {median}: count and time per captured step")
        doc.table(timed(t.head(20), ["seconds_slow", "seconds_median", "diff"]))


def build(s: ProfileSummary) -> Doc:
    from podscale.analysis.render.sections import Doc
    from podscale.analysis.verdicts import interference

    head = heading(s)
    doc = Doc(head[0].lstrip("# "))
    doc.heading("Findings", head[1].lstrip("# "))
    alone = interference.interference(s.profile.run_dir, s)
    doc.bullets([*findings(s), *interference.sentences(alone)])
    if s.step is None:
        return doc
    processes = s.ledger["process"].nunique()
    doc.figure(step_times(s), "step time per process over the steps")
    if 1 < processes <= HEATMAP_MAX:
        doc.figure(lateness(s), "arrival after the first process, per process and step")
    doc.figure(wall_time(s), "each process's wall time by part")
    doc.heading("Steps per process", "median and p90 of the step time; host gap: the "
                "device idle for Python before a step, mean; late: steps it arrived last "
                "at by more than 5% of the median step; time lost: last arrival minus the "
                "second-last, summed")
    doc.table(step_frame(s))
    if processes > 1:
        late = s.blame[s.blame["late"].astype(bool)]
        doc.heading("Late steps", f"{len(late)} of {s.steps} steps")
        doc.table(timed(late, ["lost", "spread"]), collapsed=f"{len(late)} late steps")
    doc.heading("Where each process's wall time went")
    doc.table(timed(s.goodput, [*ORDER, "wall"]))
    _inside(doc, s)
    if len(alone):
        doc.heading("In the step vs alone", "each collective of the step's program: its "
                    "time in the captured steps on the process that arrived last, against "
                    "its replay alone on the same layout; factor = in step / alone, its "
                    "range over the replay's rounds; bus bandwidth (GB/s) with nccl-tests' "
                    "factors")
        shown = alone.round({"per_step": 1, "factor": 2, "factor_lo": 2, "factor_hi": 2})
        for col in ("busbw_alone", "busbw_in_step"):
            shown[col] = [f"{v:.3g}" for v in shown[col]]
        doc.table(timed(shown, ["in_step", "alone"]))
    for title, df, cols in (("Other computations", s.others, ["busy_median"]),
                            ("Compiles", s.compiles[s.compiles["kind"] != "eager"],
                             ["seconds", "backend_s"]),
                            ("Host time between steps, by frame", s.frames,
                             ["seconds", "per_step"])):
        if len(df):
            doc.heading(title)
            doc.table(timed(df, cols))
    return doc


def write_profile_report(run_dir: Path, out: Path | None = None) -> tuple[Path, Path]:
    """Write ``report/index.html`` and ``report/summary.md`` for a profiled run."""
    out = Path(out) if out else Path(run_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)  # a folder that cannot be made: before the work
    doc = build(summarize_profile(run_dir))
    (out / "index.html").write_text(doc.render(), encoding="utf-8")
    (out / "summary.md").write_text("\n".join(doc.md) + "\n", encoding="utf-8")
    return out / "index.html", out / "summary.md"
