"""Terminal result tables in the manner of nccl-tests': the settings once, then one table
per workload holding only the columns that apply to it and vary in it (what is the same
on every row goes to the table's heading), a units row, significant figures, and for
collectives the average bus bandwidth. ``podscale run`` and ``podscale show`` print the
same tables; ``--format csv|json`` prints the summary for scripts instead."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.units import missing, sig

WIDTH = 120  # every built-in workload's table fits this at default settings (tested)
#: the case columns a table heading or row may show (the layout key spells the mesh), and
#: the measurement settings it names (frames.IDENTITY/SETTINGS are the frames' columns)
SHOWN_IDENTITY = ("variant", "dtype", "layout")
SHOWN_SETTINGS = ("iters", "warmup", "sync", "rounds")


def _num(scale: float = 1.0) -> Callable[[object], str]:
    def fmt(v: Any) -> str:
        if missing(v):
            return "N/A"
        x = float(v) * scale
        return f"{x:,.0f}" if abs(x) >= 1000 else sig(x)
    return fmt


def _host(df: pd.DataFrame, simulated: bool) -> list[str]:
    """each - device per row (us), marked ``!`` where the case is dispatch-bound on an
    accelerator (never on the CPU simulation, whose device time is the client's)."""
    num = _num(1e6)
    mark = not simulated
    return [num(v) + ("!" if b is True and mark else "")
            for v, b in zip(df["host_s"], df["dispatch_bound"])]


def _int(v: Any) -> str:
    return "N/A" if missing(v) else f"{int(v)}"


def _measures(df: pd.DataFrame, simulated: bool) -> list[tuple[str, str, str, Callable]]:
    """(column, header, unit, format) of the measurements that apply to these rows."""
    collective = df["collective"].notna().any()
    out: list[tuple[str, str, str, Callable]] = []
    if (df["bytes_per_device"] > 0).any():
        out.append(("bytes_per_device", "S", "(B)", _int))
    if "method" in df and df["method"].nunique() > 1:
        out.append(("method", "method", "", str))
    out.append(("time_s", "time", "(us)", _num(1e6)))
    if simulated and df["time_s"].ne(df.get("each_s")).any():
        # on the CPU simulation device time is this CPU's own work, which the profiler
        # slows: each - device is no host cost there (it went negative); the call waited
        # on is shown beside the headline instead
        out.append(("each_s", "each", "(us)", _num(1e6)))
    elif "host_s" in df and df["host_s"].notna().any():
        out.append(("host_shown", "host", "(us)", str))
    if collective:
        out += [("algbw", "algbw", "(GB/s)", _num()), ("busbw", "busbw", "(GB/s)", _num())]
    elif (df["bytes_per_process"] > 0).any():
        out.append(("gbps", "GB/s", "(process)", _num()))
    if "pct_ceiling" in df and df["pct_ceiling"].notna().any():
        out.append(("pct_ceiling", "%peak", "(GB/s)", _num()))
    if (df["flops_per_process"] > 0).any():
        out.append(("gflops", "GFLOP/s", "(process)", _num()))
    if "pct_flops" in df and df["pct_flops"].notna().any():
        out.append(("pct_flops", "%peak", "(FLOP/s)", _num()))
    spread = "round_cv" if df["rounds"].max() > 1 else "cv"
    out.append((spread, "cv", "(rounds)" if spread == "round_cv" else "(iters)", _num()))
    out += [("compile_s", "compile", "(ms)", _num(1e3)), ("wrong", "#wrong", "", _int)]
    if "unchecked" in df and (df["unchecked"] > 0).any():
        out.append(("unchecked", "#unchecked", "", _int))
    return out


def _varying(part: Summary, cols: list[str]) -> tuple[list[str], list[str]]:
    """(columns whose value differs between rows, ``name=value unit`` of those that do
    not)."""
    vary, same = [], []
    df, units = part.frame, _units(part)
    for c in cols:
        values = df[c].dropna().unique()
        if len(values) > 1:
            vary.append(c)
        elif len(values) == 1 and (c in part.params or c in SHOWN_SETTINGS):
            same.append(f"{c}={values[0]}" + (f" {units[c]}" if c in units else ""))
        elif len(values) == 1:
            same.append(str(values[0]))
    return vary, same


def _units(part: Summary) -> dict[str, str]:
    """Parameter -> unit, for one workload's rows (as the workload declared them)."""
    return part.units_of(str(part.frame["workload"].iloc[0]))


def _params(part: Summary) -> list[str]:
    """The workload's own parameters, less a byte size that only repeats S."""
    df, units = part.frame, _units(part)
    out = []
    for c in part.param_columns:
        if df[c].isna().all():
            continue
        if units.get(c) == "B" and (df[c] == df["bytes_per_device"]).all():
            continue
        out.append(c)
    return out


def workload_table(part: Summary, constant: set[str]) -> list[str]:
    """One workload's lines: heading, column names, units, rows, and for collectives the
    average bus bandwidth."""
    df, units = part.frame, _units(part)
    if "host_s" in df:
        df = df.assign(host_shown=_host(df, part.simulated))
    ident = [c for c in SHOWN_IDENTITY + SHOWN_SETTINGS if c in df and c not in constant]
    vary, same = _varying(part, ident + _params(part))
    cols = [(c, c, f"({units[c]})" if c in units else "", str) for c in vary] + \
        _measures(df, part.simulated)
    rows = [[fmt(r[c]) for c, _, _, fmt in cols] for _, r in df.iterrows()]
    widths = [max(len(h), len(u), *(len(row[i]) for row in rows))
              for i, (_, h, u, _) in enumerate(cols)]

    def line(cells: list[str], lead: str) -> str:
        return (lead + "  ".join(x.rjust(w) for x, w in zip(cells, widths))).rstrip()

    out = [f"# {df['workload'].iloc[0]}" + (f": {', '.join(same)}" if same else ""),
           line([h for _, h, _, _ in cols], "# "), line([u for _, _, u, _ in cols], "# ")]
    out += [line(row, "  ") for row in rows]
    if df["busbw"].notna().any():
        out.append(f"# Avg bus bandwidth    : {sig(df['busbw'].mean())} GB/s "
                   f"({df['busbw'].notna().sum()} cases)")
    return out


def _method_lines(summary: pd.DataFrame, simulated: bool) -> list[str]:
    """What ``time`` is of, and what ``host`` means, where the run has the methods."""
    if "method" not in summary:
        return []
    methods = summary["method"].dropna().unique()
    what = {"device": "each execution's device time (profiler trace)",
            "chain": "back-to-back calls, one wait (nccl-tests)",
            "each": "one call, waited on"}
    by = f"by {methods[0]}: {what.get(methods[0], '')}" if len(methods) == 1 else \
        "by the method in column 'method' (device, else chain, else each)"
    out = [f"# time {by}"]
    if simulated and "each_s" in summary:
        out.append("# each: one call waited on (each - device is no host cost on the CPU "
                   "simulation: the device is this CPU)")
    elif "host_s" in summary and summary["host_s"].notna().any():
        out.append("# host: each - device, the per-call cost beyond the device's work; !: "
                   "dispatch-bound (each >= 1.25 x device)")
    if "ceiling" in summary and summary["ceiling"].notna().any():
        out.append("# %peak: of the device's peak (HBM per device, or busbw against a link; "
                   "bf16 FLOP/s per device), read from the device where JAX gives it")
    return out


def settings_lines(table: Summary) -> tuple[list[str], set[str]]:
    """The settings every case shares, once, and which columns they are."""
    summary = table.frame
    shared = {c: summary[c].iloc[0] for c in (*SHOWN_SETTINGS, "layout")
              if c in summary and summary[c].nunique() == 1}
    parts = []
    if "iters" in shared:
        parts.append(f"{shared['iters']} timed iterations" + (
            f" after {shared['warmup']} warm-up" if "warmup" in shared else ""))
    if "sync" in shared:
        parts.append(f"sync {shared['sync']}")
    if "rounds" in shared:
        parts.append(f"{shared['rounds']} round(s)")
    if "layout" in shared:
        parts.append(f"layout {shared['layout']}")
    across = summary["across"].iloc[0] if "across" in summary else "max"
    lines = [f"# {', '.join(parts)}" if parts else "#",
             f"# time: median over iterations of the {across} over processes",
             *_method_lines(summary, table.simulated),
             "# S: bytes per device (nccl-tests' size)",
             "# cv: spread of the rounds' medians (separate launches), or of the iterations "
             "with one round"]
    return lines, set(shared) - ({"warmup"} if "iters" not in shared else set())


def check_lines(summary: pd.DataFrame) -> list[str]:
    wrong = int(summary["wrong"].sum())
    verdict = f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}"
    out = [verdict]
    if "exact_checked" in summary:
        exact = int((summary["exact_checked"] > 0).sum())
        inexact = summary.loc[summary["exact_checked"] <= 0, "workload"]
        if len(inexact):  # said in the verdict, not only below it
            names = ", ".join(sorted(set(inexact)))
            out[0] += f"; {len(inexact)} case(s) checked only within rounding bounds ({names})"
        out.append(f"# Exact checks         : {exact} of {len(summary)} cases compared "
                   "elements for equality (data movement, or inputs exact in the dtype)")
        if "unsampled" in summary and (summary["unsampled"] > 0).any():
            sampled = summary[summary["unsampled"] > 0]
            out.append(f"# Sampled float check  : {len(sampled)} case(s), --check-elements "
                       f"per device; {int(sampled['unsampled'].sum())} element(s) not "
                       "compared")
        unchecked = summary[summary["unchecked"] > 0]
        if len(unchecked):
            out.append(f"# Unchecked elements   : {int(unchecked['unchecked'].sum())} in "
                       f"{len(unchecked)} case(s) (bound too loose to catch a zero)")
    if "lowered" in summary and (summary["lowered"] > 0).any():
        low = summary[summary["lowered"] > 0]
        out.append(f"# Lowered precision    : {int(low['lowered'].sum())} element(s) in "
                   f"{len(low)} case(s) are the product of float32 inputs rounded to "
                   "bfloat16 or TF32 (" + ", ".join(sorted(set(low["case_id"].map(str)))[:3])
                   + ")")
    return out


def render(table: Summary) -> str:
    """The summary as text tables (see the module doc)."""
    summary = table.frame
    if summary.empty:
        return "# no case completed"
    head, constant = settings_lines(table)
    out = head
    for _, df in summary.groupby("workload", sort=True):
        out += ["#", *workload_table(table.of(df.reset_index(drop=True)), constant)]
    return "\n".join([*out, "#", *check_lines(summary)])


def export(table: Summary, fmt: str) -> str:
    """The summary for scripts: every column, full precision (``csv`` or ``json``)."""
    if fmt == "csv":
        return table.frame.to_csv(index=False).rstrip("\n")
    rows = json.loads(table.frame.to_json(orient="records"))
    return json.dumps({"units": table.plain_units(), "cases": rows}, indent=1)
