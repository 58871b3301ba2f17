"""A merged, clock-aligned timeline of one capture's processes: a Perfetto trace archive.

Each process's trace (XProf's Chrome trace-event JSON of its XSpace) goes into one ZIP as
``process-<i>.json``, beside a ``perfetto_manifest.json`` (Perfetto's trace manifest,
version 1) that names each file's machine (``process <i>``) and pins each clockless file
to the earliest one with the offset podscale measured: Perfetto's Trace Processor and UI
open the archive as one timeline with no dialog. The manifest's ``podscale`` block (a
field Perfetto ignores) keeps the offsets, the clock estimate's residual and where the
files came from.

``podscale trace RUN`` writes one per capture window of a profiled program and one per
layout of a run's traced pass (``traces/timeline-<window>.zip``).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd

from podscale.analysis.data.traces import Trace, convert
from podscale.core import runfolder as rf
from podscale.core.profilerecord import window_label

MANIFEST = "perfetto_manifest.json"


def archive(dest: Path, traces: dict[int, dict], shifts_us: dict[int, float],
            about: dict) -> Path:
    """Write ``dest``: each process's trace (``traces``: process -> XProf's conversion of
    its XSpace) with the shift that puts its times on the common clock (``shifts_us``: µs
    added to its events' times), pinned to the process whose shift is least (so that no
    event lands before the merged timeline's start, where Perfetto would drop it)."""
    ref = min(traces, key=lambda p: shifts_us[p])
    files = []
    for p in sorted(traces):
        entry: dict = {"path": rf.process_name(p, ".json"), "machine": {"name": f"process {p}"}}
        if p != ref:
            entry["clocks"] = {"sync_to": {"file": rf.process_name(ref, ".json")},
                               "offset_ns": round((shifts_us[p] - shifts_us[ref]) * 1e3)}
        files.append(entry)
    manifest = {"perfetto_manifest": {"version": 1, "files": files, "podscale": {
        **about, "reference": ref, "shifts_us": {str(p): shifts_us[p] for p in traces}}}}
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f".{dest.name}.part")  # a failed write leaves no archive
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(MANIFEST, json.dumps(manifest, indent=1))
        for p, trace in sorted(traces.items()):
            z.writestr(rf.process_name(p, ".json"), json.dumps(trace))
    part.replace(dest)
    return dest


def window_archives(run_dir: Path, windows: pd.DataFrame, residual_s: float
                    ) -> tuple[list[Path], list[str]]:
    """One archive per capture window of a profiled program (``Profile.windows``): each
    process's trace shifted by its origin on process 0's clock; and what was left out."""
    out, left = [], []
    for (first, stop), w in windows.groupby(["first", "stop"], dropna=False, sort=True):
        label = window_label(first, stop)
        kept = w.dropna(subset=["origin"])
        kept = kept[[Path(f).is_file() for f in kept["file"]]]
        if len(kept) < len(w):
            gone = sorted(set(w["process"]) - set(kept["process"]))
            left.append(f"window {label}: process(es) {', '.join(map(str, gone))} left out "
                        "(a trace file gone, or recorded before traces said their origin)")
        if kept.empty:
            continue
        out.append(archive(
            run_dir / rf.TRACES / f"timeline-steps-{label}.zip",
            {int(r.process): convert(Path(r.file)) for r in kept.itertuples()},
            {int(r.process): float(r.origin) * 1e6 for r in kept.itertuples()},
            {"window": label, "aligned_on": "the coordination service's clock offsets",
             "clock_residual_us": residual_s * 1e6,
             "sources": {str(r.process): r.file for r in kept.itertuples()}}))
    return out, left


def layout_archives(run_dir: Path, read: dict[tuple[str, int], Trace]) -> list[Path]:
    """One archive per traced layout of a run (``read``: (layout, process) -> its trace,
    as :func:`podscale.analysis.data.traces.read_traces` gives)."""
    out = []
    for layout in sorted({lay for lay, _ in read}):
        mine = {p: t for (lay, p), t in read.items() if lay == layout}
        out.append(archive(
            run_dir / rf.TRACES / f"timeline-{layout}.zip",
            {p: t.converted for p, t in mine.items()},
            {p: float(t.offset) for p, t in mine.items()},
            {"layout": layout, "aligned_on": "the podscale_sync annotation after a barrier",
             "sources": {str(p): str(t.path) for p, t in mine.items()}}))
    return out
