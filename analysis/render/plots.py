"""Seaborn figures for reports. Each returns a matplotlib Figure, or None when the data
has nothing to show (for example no multi-host cases for a skew plot)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from podscale.core.case import key_of  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from podscale.analysis.data.summary import Summary

sns.set_theme(style="whitegrid", context="notebook")


def png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _human(n: float, _pos: object = None) -> str:
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return f"{n / div:g}{unit}"
    return f"{n:g}"


def _size_axis(g: sns.FacetGrid) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator

    for ax in g.axes.flat:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(LogLocator(base=4))
        ax.xaxis.set_major_formatter(FuncFormatter(_human))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))


def _layout(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    slices = df["slices"] if "slices" in df else [1] * len(df)
    df["layout"] = [key_of(h, d, s) for h, d, s in zip(df["hosts"], df["devices_per_host"],
                                                        slices)]
    return df


def _swept(summary: pd.DataFrame) -> pd.Series:
    """Rows of collective sweeps over mesh axes (workloads with an ``axes`` parameter)."""
    if "axes" not in summary.columns:
        return pd.Series(False, index=summary.index)
    return summary["axes"].notna()


def _sized(summary: pd.DataFrame) -> pd.DataFrame:
    """Cases of workloads swept over 2+ sizes (collective sweeps over mesh axes have their
    own plot), for the plots against size."""
    if "size" not in summary.columns:
        return summary.iloc[0:0]
    df = summary[~_swept(summary)].dropna(subset=["size"])
    sizes = df.groupby("workload")["size"].transform("nunique")
    return df[sizes > 1]  # a workload measured at one size has no curve against size


def series(part: pd.DataFrame, params: list[str]) -> pd.Series:
    """One label per row from the layout and the parameters (besides size and axes) that
    vary within the workload, e.g. ``2x2`` or ``4x2 hierarchical``."""
    vary = [c for c in params if c not in ("size", "axes") and part[c].nunique() > 1]
    cols = ["layout", *vary]
    return part[cols].astype(object).apply(lambda r: " ".join(map(str, r)), axis=1)


def _model_and_ceiling(g: sns.FacetGrid, df: pd.DataFrame, by: str, y: str) -> None:
    """On each panel of ``g`` (one value of ``by``): the fitted model at every series'
    sizes (thin dotted grey, where ``model_s`` is known) and the highest ceiling (dashed)."""
    for name, ax in g.axes_dict.items():
        part = df[df[by] == name]
        if "model_s" in part:
            for _, s in part.dropna(subset=["model_s"]).groupby("series_key"):
                s = s.sort_values("size")
                ax.plot(s["size"], s[y] * s["time_s"] / s["model_s"], ":", color="0.35",
                        lw=1, zorder=1)
        top = part["ceiling_gbps"].max() if "ceiling_gbps" in part else float("nan")
        if pd.notna(top):
            ax.axhline(top, color="crimson", lw=1, ls="--")
            ax.annotate("ceiling", (1, top), xycoords=("axes fraction", "data"),
                        ha="right", va="bottom", fontsize=7, color="crimson")


def collective_busbw(table: Summary) -> Figure | None:
    """busbw vs size per collective: one panel per workload, colour = mesh axes, line
    style = layout (and algorithm, op, ... where they vary); dotted grey: the latency-
    bandwidth fit of each series (``model_s``, analysis/models/fits.py); dashed: the ceiling.
    One-participant cases have no busbw and are left out."""
    summary = table.frame
    df = summary[_swept(summary) & summary["busbw"].notna()]
    if df.empty:
        return None
    params = table.param_columns
    df = _layout(df)
    df = pd.concat([part.assign(series=series(part, params))
                    for _, part in df.groupby("workload", sort=True)])
    df["series_key"] = df["series"] + " " + df["axes"].astype(str) + " " + df["variant"]
    g = sns.relplot(data=df, x="size", y="busbw", hue="axes", style="series",
                    col="workload", col_wrap=3, kind="line", marker="o", palette="tab10",
                    facet_kws={"sharey": False}, height=3.0, aspect=1.35)
    _size_axis(g)
    g.set(yscale="log")
    _model_and_ceiling(g, df, "workload", "busbw")
    g.set_axis_labels("bytes per device (send buffer)", "busbw (GB/s)")
    g.figure.suptitle("Collectives: bus bandwidth vs size, per mesh axes (dotted: fitted "
                      "model; dashed: ceiling)", y=1.02)
    return g.figure


def _per_layout(df: pd.DataFrame, y: str) -> sns.FacetGrid:
    """``y`` against size on log axes, a line per layout (hosts, devices per host), a panel
    per workload and variant."""
    g = sns.relplot(data=df, x="size", y=y, hue="hosts", style="devices_per_host",
                    col="workload", row="variant", kind="line", marker="o", palette="viridis",
                    facet_kws={"sharey": False}, height=3.2, aspect=1.3)
    _size_axis(g)
    g.set(yscale="log")
    return g


def time_vs_size(summary: pd.DataFrame) -> Figure | None:
    summary = _sized(summary)
    if summary.empty:
        return None
    df = _layout(summary).assign(time_us=summary["time_s"] * 1e6)
    g = _per_layout(df, "time_us")
    g.set_axis_labels("size parameter (per process)", "time (us)")
    g.figure.suptitle("Time vs size (median over iterations of max over processes)", y=1.02)
    return g.figure


def bandwidth_vs_size(summary: pd.DataFrame) -> Figure | None:
    """busbw for collectives, GB/s per process otherwise, vs size on log axes; a
    collective over one participant has no busbw and is left out (N/A). Where the summary
    carries ceilings (analysis/models/ceilings.py), each panel draws its highest as a dashed line;
    where it carries ``model_s``, the fitted model per series as a dotted grey line."""
    df = _sized(summary).copy()
    one = df["collective"].notna() & (df["participants"] <= 1)
    df = df[~one]
    if df.empty:
        return None
    df["bandwidth"] = df["busbw"].where(df["busbw"].notna(), df["gbps"])
    g = _per_layout(df, "bandwidth")
    df["panel"] = list(zip(df["variant"], df["workload"]))
    df["series_key"] = df["hosts"].astype(str) + "x" + df["devices_per_host"].astype(str)
    _model_and_ceiling(g, df, "panel", "bandwidth")
    g.set_axis_labels("size parameter (per process)", "GB/s")
    g.figure.suptitle("Bandwidth vs size: busbw for collectives, GB/s per process otherwise "
                      "(dashed: ceiling; dotted: fitted model)", y=1.02)
    return g.figure


def scaling_efficiency(scaling: pd.DataFrame) -> Figure | None:
    weak = scaling[scaling["kind"] == "weak"]
    if weak.empty or weak["hosts"].nunique() < 2:
        return None
    weak = weak.assign(size=weak["size"].map(_human), dev=weak["devices_per_host"].map(str),
                       panel=weak["workload"] + " " + weak["variant"])
    g = sns.relplot(data=weak, x="hosts", y="efficiency", hue="size", style="dev",
                    col="panel", col_wrap=3, kind="line", marker="o", palette="rocket",
                    height=3.0, aspect=1.3)
    g.set_titles("{col_name}")
    for ax in g.axes.flat:
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xticks(sorted(weak["hosts"].unique()))
    g.figure.suptitle("Weak scaling efficiency T(1)/T(H), same size per process", y=1.02)
    return g.figure


def variant_comparison(summary: pd.DataFrame) -> Figure | None:
    summary = _sized(summary)
    keys = ["workload", "dtype", "size", "hosts", "devices_per_host"]
    if summary.empty:
        return None
    wide = summary.pivot_table(index=keys, columns="variant", values="time_s").reset_index()
    if not {"pmap", "shard_map"} <= set(wide.columns):
        return None
    wide["ratio"] = wide["shard_map"] / wide["pmap"]
    wide = _layout(wide)
    wide["size"] = wide["size"].map(_human)
    g = sns.catplot(data=wide, x="size", y="ratio", hue="layout", col="workload", kind="bar",
                    palette="crest", height=3.2, aspect=1.4)
    for ax in g.axes.flat:
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    g.set_axis_labels("size parameter (per process)", "time shard_map / time pmap")
    g.figure.suptitle("pmap vs shard_map (below 1: shard_map faster)", y=1.02)
    return g.figure


def compile_times(summary: pd.DataFrame) -> Figure | None:
    """Ahead-of-time lower+compile only: a first call (pmap) includes execution."""
    summary = summary[summary["compile_kind"] == "lower+compile"]
    if summary.empty:
        return None
    df = _layout(summary).assign(compile_ms=summary["compile_s"] * 1e3)
    g = sns.catplot(data=df, x="layout", y="compile_ms", hue="variant", col="workload",
                    col_wrap=4, kind="bar", palette="pastel", height=3.2, aspect=1.3)
    g.set_axis_labels("hosts x devices per host", "lower+compile (ms, max over processes)")
    g.figure.suptitle("Compile times", y=1.02)
    return g.figure


def trace_breakdown(steps: pd.DataFrame) -> Figure | None:
    if steps.empty:
        return None
    med = steps.groupby("case_id")[["busy_us", "exposed_us", "host_us"]].median()
    med["compute_us"] = (med["busy_us"] - med["exposed_us"]).clip(lower=0)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(med) + 1.5))
    med[["compute_us", "exposed_us", "host_us"]].plot.barh(stacked=True, ax=ax,
                                                           color=["#4c72b0", "#dd8452",
                                                                  "#8c8c8c"])
    ax.set_xlabel("us per step (median over steps and processes)")
    ax.set_ylabel("")
    ax.set_title("Trace-derived time per step: device busy less exposed collective, "
                 "exposed collective, host")
    return fig


def asv_history(df: pd.DataFrame) -> Figure:
    df = df.sort_values("date").copy()
    order = list(dict.fromkeys(df["commit"]))
    df["commit_index"] = df["commit"].map(order.index)
    first = df.groupby(["benchmark", "params"])["value"].transform("first")
    df["relative"] = df["value"] / first
    df["benchmark"] = df["benchmark"].str.replace("benchmarks.", "", regex=False)
    g = sns.relplot(data=df, x="commit_index", y="relative", hue="params", col="benchmark",
                    col_wrap=3, kind="line", marker="o", height=3.0, aspect=1.3, legend=False)
    for ax in g.axes.flat:
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([c[:7] for c in order], rotation=45)
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    g.set_axis_labels("commit", "value / earliest commit")
    return g.figure


def pair_heatmap(matrix: pd.DataFrame, title: str, per_slice: int = 0) -> Figure:
    """A process x process matrix; ``per_slice``: processes per slice of a multi-slice
    layout, whose boundaries are drawn (a pair across them crosses the DCN)."""
    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * len(matrix.columns), 1.0 + 0.5 * len(matrix)))
    sns.heatmap(matrix, annot=len(matrix) <= 16, fmt=".0f", cmap="rocket_r", ax=ax,
                cbar_kws={"label": "us"})
    if per_slice:
        top = max([*matrix.index, *matrix.columns], default=0)
        for edge in range(per_slice, int(top) + 1, per_slice):
            ax.axhline(sum(int(p) < edge for p in matrix.index), color="#3b7dd8", lw=2)
            ax.axvline(sum(int(p) < edge for p in matrix.columns), color="#3b7dd8", lw=2)
    ax.set_xlabel("destination process")
    ax.set_ylabel("source process")
    ax.set_title(title)
    return fig


