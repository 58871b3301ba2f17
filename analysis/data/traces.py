"""Profiler traces -> pandas, a merged cross-process timeline, and stragglers.

XSpace files are converted with XProf's own converter (``trace_viewer`` tool of
``xprof.convert.raw_to_tool_data``); everything after that works on the Chrome
trace-event JSON it returns, so the parsing is testable on a small shipped trace.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from podscale.core import runfolder as rf
from podscale.core import xprof
from podscale.core.attribution import COLLECTIVE, attribute
from podscale.core.attribution import union as _union
from podscale.core.records import SYNC_MARK

#: a traced step's columns: wall (the step's annotation), the parts of its device time in
#: :mod:`podscale.core.attribution`'s words (``profile`` uses the same), host (wall less
#: busy), and the busiest and idlest device's busy time
STEP_COLUMNS = ["process", "case_id", "step", "start_us", "wall_us", "span_us", "busy_us",
                "collective_us", "compute_us", "callback_us", "exposed_us", "hidden_us",
                "idle_us", "host_us", "ops", "collective_start_us", "devices", "busy_max_us",
                "busy_min_us"]
#: the columns' names before the two trace paths shared one vocabulary (0.5.0)
LEGACY_COLUMNS = {"device_us": "busy_us", "overlap_us": "hidden_us",
                  "device_max_us": "busy_max_us", "device_min_us": "busy_min_us"}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the converter's C++ logging (it writes to fd 2 directly)."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def convert(xplane: Path) -> dict:
    """Chrome trace-event JSON of one XSpace file, via XProf's trace_viewer converter."""
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError:
        from podscale.core.errors import UsageError

        raise UsageError("reading a trace needs XProf's converters (the xprof package, "
                         "which tensorboard-plugin-profile brings): pip install xprof") \
            from None

    with _quiet_stderr():
        data, _ = raw_to_tool_data.xspace_to_tool_data([str(xplane)], "trace_viewer", {})
    if data is None:
        from podscale.core.errors import UsageError

        raise UsageError(f"{xplane}: XProf could not read this trace (cut short or "
                         "damaged?)")
    return json.loads(data)


def events(trace: dict) -> pd.DataFrame:
    """Complete ('X') events with their thread names, times in microseconds."""
    names = {(e.get("pid"), e.get("tid")): e["args"]["name"]
             for e in trace.get("traceEvents", [])
             if e.get("ph") == "M" and e.get("name") in ("thread_name", "process_name")}
    rows = [
        {"pid": e.get("pid"), "tid": e.get("tid"), "name": e.get("name", ""),
         "ts": float(e["ts"]), "dur": float(e.get("dur", 0.0)), "args": e.get("args") or {},
         "thread": names.get((e.get("pid"), e.get("tid")), "")}
        for e in trace.get("traceEvents", []) if e.get("ph") == "X" and "ts" in e
    ]
    return pd.DataFrame(rows, columns=["pid", "tid", "name", "ts", "dur", "args", "thread"])


def _is_op(args: dict, name: str) -> bool:
    return (xprof.HLO_MODULE in args or xprof.HLO_OP in args) and not name.startswith("end:")


def _device_key(args: dict, pid: object) -> str:
    ordinal = args.get(xprof.DEVICE_ORDINAL)
    return f"ordinal {ordinal}" if ordinal is not None else f"track {pid}"


def steps(ev: pd.DataFrame, process: int, offset_us: float = 0.0) -> pd.DataFrame:
    """One row per annotated step: wall, the parts of its ops' time
    (:func:`podscale.core.attribution.attribute`: busy, collective, hidden, exposed, ...),
    host time (wall - busy), when the first collective op started (aligned by offset), and
    per device (``device_ordinal``, else the trace's device track) the busiest and idlest."""
    marks = ev[ev["args"].map(lambda a: "step_num" in a)]
    ops = ev[[_is_op(a, n) for a, n in zip(ev["args"], ev["name"])]]
    rows = []
    for _, m in marks.iterrows():
        case_id = str(m["args"].get("step_name", m["name"])).rsplit(" ", 1)[0]
        lo, hi = m["ts"], m["ts"] + m["dur"]
        inside = ops[(ops["ts"] >= lo) & (ops["ts"] < hi)]
        # the attribution takes nanoseconds; ops clipped at the step's end
        parts = attribute([(t * 1e3, min(t + d, hi) * 1e3, n)
                           for t, d, n in zip(inside["ts"], inside["dur"], inside["name"])])
        coll = inside[inside["name"].str.contains(COLLECTIVE)]
        keys = [_device_key(a, p) for a, p in zip(inside["args"], inside["pid"])]
        per_device = [_union([(t, min(t + d, hi)) for t, d in zip(g["ts"], g["dur"])])
                      for _, g in inside.groupby(keys)] if keys else [0.0]
        rows.append({
            "process": process, "case_id": case_id, "step": int(m["args"]["step_num"]),
            "start_us": lo + offset_us, "wall_us": m["dur"], **parts,
            "host_us": max(m["dur"] - parts["busy_us"], 0.0), "ops": len(inside),
            "collective_start_us": (coll["ts"].min() + offset_us) if len(coll) else np.nan,
            "devices": len(set(keys)),
            "busy_max_us": max(per_device), "busy_min_us": min(per_device),
        })
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


def read_steps(path: Path) -> pd.DataFrame:
    """A saved step table (``traces/steps.csv``), its columns in today's words."""
    return pd.read_csv(path).rename(columns=LEGACY_COLUMNS)


def offset(ev: pd.DataFrame, anchor_unix_us: float | None) -> float:
    """Shift that puts this trace on the shared wall clock, from the sync annotation."""
    mark = ev[ev["name"] == SYNC_MARK]
    if anchor_unix_us is None or mark.empty:
        return 0.0
    return anchor_unix_us - float(mark["ts"].iloc[0])


def _sidecars(run_dir: Path) -> dict[tuple[str, int], dict]:
    out = {}
    for path in Path(run_dir).glob(f"{rf.TRACES}/*/" + rf.process_glob(".sync.json")):
        info = json.loads(path.read_text())
        out[(path.parent.name, int(info["process"]))] = info
    return out


def _xplanes(traces: Path, sync: dict) -> list[tuple[str, int, Path]]:
    """(layout, process, file): ``process-<i>.xplane.pb`` as podscale names them, or
    ``<host>.xplane.pb`` as JAX does (``--trace-dir``), mapped through the sidecars."""
    hosts = {(lay, info.get("host")): p for (lay, p), info in sync.items()}
    out = []
    for path in sorted(Path(traces).glob("*/" + xprof.SESSION_GLOB)):
        layout, stem = path.parents[3].name, path.name.removesuffix(xprof.SUFFIX)
        if (proc := rf.process_of(stem)) is not None:
            out.append((layout, proc, path))
        elif (layout, stem) in hosts:
            out.append((layout, hosts[(layout, stem)], path))
    return out


class Trace(NamedTuple):
    """One process's trace of a traced pass: its XSpace file, XProf's conversion of it,
    its events, and the offset that puts them on the shared wall clock (µs)."""

    path: Path
    converted: dict
    events: pd.DataFrame
    offset: float


def read_traces(run_dir: Path, traces: Path | None = None) -> dict[tuple[str, int], Trace]:
    """(layout, process) -> its :class:`Trace`, each file converted once. ``traces``: where
    the XSpace files are, if not ``RUN/traces`` (a copy of a ``--trace-dir``)."""
    sync = _sidecars(run_dir)
    out = {}
    for layout, proc, path in _xplanes(traces or Path(run_dir) / rf.TRACES, sync):
        anchor = sync.get((layout, proc), {}).get("anchor_unix_us")
        trace = convert(path)
        ev = events(trace)
        out[(layout, proc)] = Trace(path, trace, ev, offset(ev, anchor))
    return out


def load_traces(run_dir: Path, traces: Path | None = None,
                read: dict[tuple[str, int], Trace] | None = None
                ) -> dict[tuple[str, int], tuple[pd.DataFrame, float]]:
    """(layout, process) -> (events, offset to shared wall clock in us), from ``read``
    where the traces are read already (:func:`read_traces`)."""
    read = read_traces(run_dir, traces) if read is None else read
    return {key: (t.events, t.offset) for key, t in read.items()}


def step_table(loaded: dict) -> pd.DataFrame:
    """Per layout, process, case and step: times from the traces (see :func:`steps`)."""
    parts = []
    for (layout, proc), (ev, off) in loaded.items():
        df = steps(ev, proc, off)
        df.insert(0, "layout", layout)
        parts.append(df)
    if not parts:
        return pd.DataFrame(columns=["layout", *STEP_COLUMNS])
    return pd.concat(parts, ignore_index=True)


def cut_short(table: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    """Traces that hold fewer annotated steps than the process timed in its traced pass
    (``samples`` of phase ``traced``): cut short by the profiler's event limit or a session
    stopped early, said per process and case rather than read as fewer steps."""
    traced = samples[samples["phase"] == "traced"]
    asked = traced.groupby(["process", "case_id"]).size()
    held = table.groupby(["process", "case_id"]).size() if len(table) else pd.Series(
        dtype=int)
    out = []
    for (process, case_id), n in asked.items():
        got = int(held.get((process, case_id), 0))
        if got < n:
            out.append(f"process {process}'s trace of {case_id} holds {got} of its {n} traced "
                       "steps: cut short (the profiler's event limit, or a session stopped "
                       "early)")
    return out


def stragglers(table: pd.DataFrame) -> pd.DataFrame:
    """Per case and step: which process reached the collective last, and how late."""
    t = table.dropna(subset=["collective_start_us"]).reset_index(drop=True)
    rows = []
    for (layout, case_id, step), g in t.groupby(["layout", "case_id", "step"]):
        if len(g) < 2:
            continue
        start = g["collective_start_us"]
        rows.append({"layout": layout, "case_id": case_id, "step": step,
                     "last_process": int(g.loc[start.idxmax(), "process"]),
                     "lag_us": float(start.max() - start.min()), "processes": len(g)})
    return pd.DataFrame(rows, columns=["layout", "case_id", "step", "last_process", "lag_us",
                                       "processes"])


def merge(loaded: dict, layout: str) -> dict:
    """One Chrome/Perfetto trace with a track (pid) per process, aligned in time."""
    parts = {p: v for (lay, p), v in loaded.items() if lay == layout}
    base = min((ev["ts"].min() + off for ev, off in parts.values() if len(ev)), default=0.0)
    out: list[dict] = []
    for proc, (ev, off) in sorted(parts.items()):
        pid = proc + 1
        out.append({"ph": "M", "name": "process_name", "pid": pid,
                    "args": {"name": f"process {proc}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid,
                    "args": {"sort_index": proc}})
        tids: dict = {}
        for row in ev.itertuples(index=False):
            tid = tids.setdefault((row.pid, row.tid), (len(tids) + 1, row.thread))[0]
            out.append({"ph": "X", "pid": pid, "tid": tid, "name": row.name,
                        "ts": row.ts + off - base, "dur": row.dur, "args": row.args})
        for tid, thread in tids.values():
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                        "args": {"name": thread or f"thread {tid}"}})
    return {"displayTimeUnit": "ns", "traceEvents": out,
            "metadata": {"podscale": {"layout": layout, "aligned_on": SYNC_MARK}}}


def write_merged(run_dir: Path, loaded: dict | None = None) -> list[Path]:
    """Write ``traces/<layout>/merged.trace.json`` for every traced layout."""
    loaded = load_traces(run_dir) if loaded is None else loaded
    paths = []
    for layout in sorted({lay for lay, _ in loaded}):
        path = Path(run_dir) / rf.TRACES / layout / "merged.trace.json"
        path.write_text(json.dumps(merge(loaded, layout)))
        paths.append(path)
    return paths


def summary(table: pd.DataFrame, lag: pd.DataFrame) -> str:
    """Text summary: per case, medians over steps and processes, and the worst straggler."""
    if table.empty:
        return "# traces: no annotated steps found"
    g = table.groupby(["layout", "case_id"])
    per = g[["wall_us", "busy_us", "collective_us", "host_us"]].median()
    lines = ["# traced steps (medians over steps and processes, us)",
             "#  layout  case                                     wall     busy  collect     host"]
    for (layout, case_id), r in per.iterrows():
        lines.append(f"  {layout:>6}  {case_id:<38} {r.wall_us:8.1f} {r.busy_us:8.1f} "
                     f"{r.collective_us:8.1f} {r.host_us:8.1f}")
    if not lag.empty:
        lines.append("# stragglers: process last at the collective, median lag over steps (us)")
        for (layout, case_id), g in lag.groupby(["layout", "case_id"]):
            last = g["last_process"].mode().iloc[0]
            lines.append(f"  {layout:>6}  {case_id:<38} last: process {last} "
                         f"({(g['last_process'] == last).sum()}/{len(g)} steps), "
                         f"lag {g['lag_us'].median():.1f}")
    return "\n".join(lines)
