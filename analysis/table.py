"""Plain-text result tables in the spirit of nccl-tests' output. The columns after the
workload are its own parameters (whatever it declared), then the fixed measurements."""

from __future__ import annotations

import math

import pandas as pd

from podscale.analysis.frames import param_columns

HEAD = [("workload", "workload", "{}"), ("variant", "variant", "{}"), ("dtype", "dtype", "{}")]
TAIL = [
    ("bytes_per_process", "bytes/proc", "{:d}"),
    ("hosts", "hosts", "{:d}"),
    ("devices_per_host", "dev/host", "{:d}"),
    ("time_s", "time(us)", "{:.1f}"),
    ("gbps", "GB/s", "{:.3f}"),
    ("algbw", "algbw", "{:.3f}"),
    ("busbw", "busbw", "{:.3f}"),
    ("compile_s", "compile(ms)", "{:.1f}"),
    ("rounds", "rounds", "{:d}"),
    ("round_cv", "round cv", "{:.3f}"),
    ("wrong", "#wrong", "{:d}"),
]
_SCALE = {"time_s": 1e6, "compile_s": 1e3}


def _fmt(value, fmt: str, col: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "N/A"
    if col in _SCALE:
        value = value * _SCALE[col]
    if fmt == "{:d}" or (isinstance(value, float) and value.is_integer() and fmt == "{}"):
        value = int(value)
    return fmt.format(value)


def columns(summary: pd.DataFrame) -> list[tuple[str, str, str]]:
    params = [(c, c, "{}") for c in param_columns(summary)]
    mesh = [("mesh", "mesh", "{}")] if summary["mesh"].str.count("x").max() > 1 else []
    return HEAD + params + mesh + TAIL


def render(summary: pd.DataFrame) -> str:
    """The summary as an aligned text table, one row per case."""
    cols = columns(summary) if len(summary) else HEAD + TAIL
    header = [h for _, h, _ in cols]
    rows = [[_fmt(r[c], f, c) for c, _, f in cols] for _, r in summary.iterrows()]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = ["# " + "  ".join(h.rjust(w) for h, w in zip(header, widths))]
    lines += ["  " + "  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in rows]
    wrong = int(summary["wrong"].sum()) if len(summary) else 0
    lines.append(f"# Out of bounds values : {wrong} {'OK' if wrong == 0 else 'FAILED'}")
    lines.append("# time: median over timed iterations of the max over processes; round cv: "
                 "spread of the rounds' medians (separate launches)")
    return "\n".join(lines)
