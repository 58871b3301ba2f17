"""Figures of the models and of pod-scale views, drawn with matplotlib on the report's
seaborn theme (set by :mod:`analysis.render.plots`): the scaling models' predictions, and the
per-process skew heatmap, and a history's trend."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from podscale.analysis.render.plots import plt

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _short(case_id: str) -> str:
    """A case id without its version, float32 and layout: ``dot/pmap/size=1024``."""
    parts = case_id.split("/")
    keep = [parts[0].split("@")[0], *parts[1:-1]]
    return "/".join(p for p in keep if p != "float32")


def process_skew(matrix: pd.DataFrame) -> Figure | None:
    """Processes x multi-host cases: each process's median time relative to its case's
    median over processes, one image however many processes (log colour scale centred on
    1; grey: the process is not in the case)."""
    import numpy as np
    from matplotlib.colors import LogNorm

    if matrix.empty:
        return None
    values = matrix.to_numpy(float)
    logs = np.abs(np.log(values[values > 0]))
    spread = max(float(np.exp(np.percentile(logs, 99))) if logs.size else 1.0, 1.05)
    rows, cols = matrix.shape
    fig, ax = plt.subplots(figsize=(min(16, max(7, 3 + 0.22 * cols)),
                                    min(12, max(3.5, 2 + 0.12 * rows))))
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="0.85")
    im = ax.imshow(np.ma.masked_invalid(values), aspect="auto", interpolation="nearest",
                   cmap=cmap, norm=LogNorm(1 / spread, spread))
    from matplotlib.ticker import FuncFormatter

    bar = fig.colorbar(im, ax=ax, label="vs the case's median process")
    bar.set_ticks([1 / spread, spread ** -0.5, 1, spread ** 0.5, spread])
    bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2g}x"))
    bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))
    ax.grid(False)
    ax.set_ylabel("process")
    ax.set_xlabel(f"multi-host cases ({cols})")
    ax.set_xticks([] if cols > 40 else range(cols))
    if cols <= 40:
        ax.set_xticklabels([_short(c) for c in matrix.columns], rotation=90, fontsize=6)
    step = max(1, rows // 16)
    ax.set_yticks(range(0, rows, step))
    ax.set_yticklabels([str(p) for p in matrix.index[::step]], fontsize=7)
    ax.set_title("Per-process skew (red: slower than the case's median process)",
                 fontsize=10)
    return fig


def _match(df: pd.DataFrame, keys: list[str], key: Any) -> pd.DataFrame:
    for col, value in zip(keys, key):
        if len(df) and col in df.columns and pd.notna(value):
            df = df[df[col].astype(str) == str(value)]
    return df


def scaling_predictions(scaled: dict) -> Figure | None:
    """Time vs participants n at each sweep's largest size: measured round medians (dots),
    the fitted model with its 95% prediction interval (solid over the measured n, dashed
    beyond: model output), and the held-out n predicted from the smaller ones (cross)."""
    from podscale.analysis.units import bytes_h

    curves, pts, held = scaled["curves"], scaled["points"], scaled["heldout"]
    if curves.empty:
        return None
    keys = [k for k in ("workload", "variant", "axes", "devices_per_host", "op", "algorithm")
            if k in curves.columns]
    counts = scaled["models"].set_index(keys)["n_values"].str.count(",") if keys else None
    panels = sorted(curves.groupby(keys, dropna=False, sort=True),
                    key=lambda kv: -int(counts.get(kv[0], 0)) if counts is not None else 0)[:9]
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax, (key, c) in zip(axes.flat, panels):
        key = key if isinstance(key, tuple) else (key,)
        size = c["size"].iloc[0]
        meas = _match(pts, keys, key)
        meas = meas[meas["size"] == size].groupby("n")["t"].median() * 1e6
        ax.plot(meas.index, meas.to_numpy(), "o", color="#1f77b4", label="measured", zorder=3)
        for inside, style, label in ((True, "-", "model"), (False, "--", "model output")):
            part = c[c["measured"] == inside] if inside else c[c["n"] >= c.loc[c["measured"],
                                                                              "n"].max()]
            ax.plot(part["n"], part["predicted_us"], style, color="crimson", label=label)
        ax.fill_between(c["n"], c["lo_us"], c["hi_us"], color="crimson", alpha=0.15, lw=0)
        h = _match(held, keys, key)
        h = h[h["size"] == size] if len(h) else h
        if len(h):
            ax.errorbar(h["n"], h["predicted_us"], yerr=[h["predicted_us"] - h["lo_us"],
                                                         h["hi_us"] - h["predicted_us"]],
                        fmt="x", color="black", capsize=3, label="held-out prediction")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(c["n"].to_list())
        ax.set_xticklabels([str(n) for n in c["n"]], fontsize=7)
        words = [f"{v} dev/host" if k == "devices_per_host" else str(v)
                 for k, v in zip(keys, key) if pd.notna(v)]
        ax.set_title(" ".join(words) + f", {bytes_h(size)}", fontsize=9)
        ax.set_xlabel("participants n")
        ax.set_ylabel("time (us)")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Scaling with n: measured, and the fitted model (95% prediction "
                 "intervals; dashed: model output beyond what ran)", y=1.0, fontsize=10)
    fig.tight_layout()
    return fig


def history_trend(found: dict, out: Path, most: int = 12) -> Path | None:
    """Trend of the run-wide drift and of each changed case (up to ``most``), change
    points marked."""
    if not found["series"]:
        return None
    ch = found["changes"].head(most)
    n = 1 + len(ch)
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.8 * n), squeeze=False, sharex=True)
    hw = next(iter(found["series"]))
    drift, resid = found["series"][hw]
    axes[0, 0].plot(drift.index, np.exp(drift), lw=1)
    axes[0, 0].set_title("every case: run-wide factor (median over cases)", fontsize=9)
    for at in found["drift"]["at"]:
        axes[0, 0].axvline(at, color="r", ls="--")
    for ax, r in zip(axes[1:, 0], ch.itertuples()):
        x = found["series"][r.hardware][1][(r.case_id, r.settings)]
        ax.plot(x.index, np.exp(x), lw=1)
        ax.axvline(r.at, color="r", ls="--")
        ax.set_title(f"{r.case_id} (drift removed)", fontsize=8)
    axes[-1, 0].set_xlabel("run (time order)")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "history.png", dpi=90)
    plt.close(fig)
    return out / "history.png"
