"""A profiled run's records as frames: ``profile/process-<i>.jsonl`` (written by
:mod:`podscale.attach.recorder`) of every process, on one clock.

Each process's timestamps are moved onto process 0's clock by the offset it measured
through the coordination service (``t - offset``); the residual of that estimate is at
most half the round trip it came from (``Profile.clock_residual_s``). Times in the frames
are seconds since the earliest process started its attach."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from podscale.analysis.profile.rows import calls as call_rows
from podscale.analysis.profile.rows import computations, frame, programs, step_work
from podscale.core import runfolder as rf
from podscale.core.errors import UsageError
from podscale.core.profilerecord import KINDS, checked, record_files, schema_of
from podscale.core.records import Manifest, read_manifest

CAPTURE_COLUMNS = ["first", "stop", "step", "devices", "busy_us", "collective_us", "ops",
                   "cut", "file", "span_us", "compute_us", "callback_us", "exposed_us",
                   "hidden_us", "idle_us", "module", "start_ns", "end_ns"]


#: a ``background`` row's fields (begin and end: when its CPU time was read, µs; not in
#: the rows of the first writers)
BACKGROUND = ("seq", "thread", "frame", "seconds", "begin", "end")


@dataclass(frozen=True)
class Profile:
    """One profiled run: the manifest and, per process, its computations, calls, compiles,
    sampled host gaps and lifetime marks (all seconds on process 0's clock)."""

    run_dir: Path
    manifest: Manifest
    processes: pd.DataFrame  # one row per process: marks, offset, exit code
    computations: pd.DataFrame  # process, id, name, wrapper
    #: process, computation, name, seq, dispatch, returned, ready, and the program the
    #: computation last compiled: program, shapes, peers, flops, bytes
    calls: pd.DataFrame
    #: JAX's compile events: process, event, fun, end, seconds, seq (the call it was in, or
    #: None), ahead (inside ``Lowered.compile``)
    compiles: pd.DataFrame
    #: a call that compiled: process, id, seq, call, shapes, program (its fingerprint),
    #: peers (whether the program waits on other processes; None: unknown)
    compiled: pd.DataFrame
    gaps: pd.DataFrame  # process, seq, frame, seconds
    #: captured steps, from each process's own reduction of its trace: process, first,
    #: stop (the window), step, devices, busy_us, collective_us, ops, cut, file
    captures: pd.DataFrame
    #: one row per capture window and process: process, first, stop, held (steps its trace
    #: held), cut, reduce_s, file, spans (when the profiler started and stopped, seconds),
    #: trigger ([step, process] of an anomaly's capture, else None), origin (when its
    #: trace's clock reads 0, seconds; None where the trace did not say)
    windows: pd.DataFrame
    #: the program's own StepTraceAnnotations: process, name, num, first and end (the
    #: sequence numbers of the calls inside: first <= seq < end), enter, exit
    annotations: pd.DataFrame
    #: per capture window and process, each op of the step's program (those with the most
    #: time): process, first (the window), steps (held), op, count, us (in all)
    capture_ops: pd.DataFrame
    #: each captured step's collective ops on the device that ended last: process, step,
    #: op, k (its occurrence in the step), start (seconds, process 0's clock), dur (s)
    collectives: pd.DataFrame
    #: captures that did not happen: process, steps ([A, B] asked, or None), trigger
    #: ([step, process] of an anomaly's), reason
    skipped: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["process", "steps", "trigger", "reason"]))
    #: spans in which a process stood still (its heartbeat late): process, start, end
    silent: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["process", "start", "end"]))
    #: the persistent compilation cache's answers: process, hit (bool), seq, end
    cache: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["process", "hit", "seq", "end"]))
    #: the step's optimized programs saved at a capture: process, name, file (or None),
    #: error (why it was not saved, or None)
    programs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["process", "name", "file", "error"]))
    #: the program's other threads' CPU time, sampled: process, seq (the call it delayed),
    #: thread (its name), frame, seconds, begin and end (when that time was read: seconds)
    background: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["process", *BACKGROUND]))

    @property
    def clock_residual_s(self) -> float:
        """The largest error the clock alignment may leave (half the best round trip)."""
        rtt = self.processes["rtt_us"].dropna()
        return float(rtt.max()) / 2e6 if len(rtt) else float("nan")


def _read(path: Path) -> tuple[list[dict], int]:
    """A process's records, and how many lines were unreadable (cut by a killed process:
    the rest stands, and the count is said)."""
    out, cut = [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                cut += 1
    return out, cut


#: the row tables a process's record gives: those the kinds declare, and those the kinds
#: with a reader of their own (:data:`SPECIAL`) fill
ROWS = tuple(dict.fromkeys([*(k.rows for k in KINDS.values() if k.rows), "capture", "window",
                            "step", "capture_ops", "collectives", "skipped", "silent"]))
#: process marks every process has, set or not
MARKS = ("offset_us", "rtt_us", "other_threads", "peaks", "device_memory", "degraded")


def _hang(o: dict, marks: dict, rows: dict[str, list]) -> None:
    """Ended by the roll-call: its verdict is the process's end."""
    marks.update(end=o.get("end"), exit_code=o.get("exit_code"), error=f"hang: {o['verdict']}")


def _skipped(o: dict, marks: dict, rows: dict[str, list]) -> None:
    rows["skipped"].append({"steps": o.get("steps"), "trigger": o.get("trigger"),
                            "reason": o.get("reason") or
                            f"the capture failed: {o.get('error')}"})


#: the kinds the declaration cannot read alone: a reader each
SPECIAL = {
    "hang": _hang,
    "capture": lambda o, marks, rows: _capture(o, rows),
    "capture_skipped": _skipped,
    "capture_failed": _skipped,
    "silent": lambda o, marks, rows: rows["silent"].append({"start": o["from"],
                                                           "end": o["to"]}),
    "step": lambda o, marks, rows: rows["step"].append(
        {**o, "first": o["seqs"][0], "end": o["seqs"][1]}),
}


def _process(objs: list[dict], process: int) -> tuple[dict, dict[str, list]]:
    """One process's marks (local clock) and its rows by kind, as each kind declares
    (:data:`podscale.core.profilerecord.KINDS`: the marks it sets, the table it adds to)."""
    marks: dict = {"process": process, **dict.fromkeys(MARKS)}
    rows: dict[str, list] = {k: [] for k in ROWS}
    for o in objs:
        kind = KINDS[str(o["kind"])]
        marks.update({mark: o.get(name) for name, mark in kind.marks})
        if kind.name in SPECIAL:
            SPECIAL[kind.name](o, marks, rows)
        elif kind.spread:
            rows[str(kind.rows)].extend(o["rows"])
        elif kind.rows:
            rows[kind.rows].append(o)
    for name in ("platform", "device_kind"):  # said, but empty: a backend that said none
        if name in marks and marks[name] is None:
            marks[name] = ""
    return marks, rows


def _capture(o: dict, rows: dict[str, list]) -> None:
    """A capture record's rows: its steps, its window, the collectives of its steps and
    its op totals."""
    spans = [s for s in (o.get("start"), o.get("stop")) if s]
    rows["capture"].extend({**r, "first": o["steps"][0], "stop": o["steps"][1],
                            "cut": o["cut"], "file": o["file"]} for r in o["rows"])
    rows["window"].append({"first": o["steps"][0], "stop": o["steps"][1],
                           "held": len(o["rows"]), "cut": o["cut"],
                           "reduce_s": o.get("reduce_s"), "file": o["file"],
                           "spans": spans, "trigger": o.get("trigger"),
                           "origin_us": o.get("origin_us")})
    for r in o["rows"]:
        seen: dict[str, int] = {}
        for op, start, dur in r.get("collectives") or []:
            rows["collectives"].append({"step": r["step"], "op": op, "k": seen.get(op, 0),
                                        "start": start, "dur": dur / 1e6})
            seen[op] = seen.get(op, 0) + 1
    rows["capture_ops"].extend(
        {"first": o["steps"][0], "steps": len(o["rows"]), "op": op, "count": c, "us": us}
        for op, (c, us) in (o.get("ops") or {}).items())


def load_profile(run_dir: Path | str) -> Profile:
    """Read every process's record of a profiled run (``podscale profile`` or ``attach``)."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    files = record_files(run_dir)
    if not files:
        raise UsageError(f"{run_dir}: no profiled process records "
                         f"({rf.PROFILE}/{rf.process_glob('.jsonl')})")
    marks, kinds = _read_all(files)
    processes = pd.DataFrame(marks).set_index("process", drop=False)
    offset = processes["offset_us"].fillna(0).astype("int64")
    origin = min(int(a) - int(offset[p]) for p, a in processes["attach"].items())

    def seconds(us: float, process: int) -> float:
        return (us - int(offset[process]) - origin) / 1e6

    declared = KINDS["compiled"]  # its columns as the record declares them
    compiled = frame(kinds["compiled"], [f for f in (*declared.required, *declared.optional)
                                         if f != "kind"])
    for col in ("attach", "process_start", "join_start", "join_end", "end"):
        if col in processes:
            processes[col] = [seconds(v, p) if pd.notna(v) else float("nan")
                              for p, v in processes[col].items()]
    return Profile(run_dir, manifest, processes,
                   computations(kinds["computation"]),
                   programs(call_rows(kinds["call"], kinds["computation"], seconds),
                             compiled),
                   frame(kinds["compile"], ["event", "fun", "end", "seconds", "seq", "ahead"],
                          lambda p, r: {**r, "end": seconds(r["end"], p)}),
                   compiled,
                   frame([(p, [dict(zip(("seq", "frame", "seconds"), r)) for r in rows])
                           for p, rows in kinds["gaps"]], ["seq", "frame", "seconds"]),
                   step_work(frame(kinds["capture"], CAPTURE_COLUMNS,
                                   lambda p, r: {"file": _here(run_dir, r["file"])})),
                   frame(kinds["window"], ["first", "stop", "held", "cut", "reduce_s",
                                            "file", "spans", "trigger", "origin"],
                          lambda p, r: {"spans": [[seconds(a, p), seconds(b, p)]
                                                  for a, b in r["spans"]],
                                        "origin": None if r["origin_us"] is None else
                                        seconds(r["origin_us"], p),
                                        "file": _here(run_dir, r["file"])}),
                   frame(kinds["step"], ["name", "num", "first", "end", "enter", "exit"],
                          lambda p, r: {"enter": seconds(r["enter"], p),
                                        "exit": seconds(r["exit"], p)}),
                   frame(kinds["capture_ops"], ["first", "steps", "op", "count", "us"]),
                   frame(kinds["collectives"], ["step", "op", "k", "start", "dur"],
                          lambda p, r: {"start": seconds(r["start"], p)}),
                   frame(kinds["skipped"], ["steps", "trigger", "reason"]),
                   frame(kinds["silent"], ["start", "end"],
                          lambda p, r: {"start": seconds(r["start"], p),
                                        "end": seconds(r["end"], p)}),
                   frame(kinds["cache"], ["hit", "seq", "end"],
                          lambda p, r: {"end": seconds(r["end"], p)}),
                   frame(kinds["program"], ["name", "file", "error"],
                          lambda p, r: {"file": _here(run_dir, r.get("file"))}),
                   background=frame([(p, [dict(zip(BACKGROUND, r)) for r in rows])
                                     for p, rows in kinds["background"]], list(BACKGROUND),
                                    lambda p, r: {k: seconds(r[k], p) if r.get(k) is not None
                                                  else float("nan") for k in ("begin", "end")}))


def _here(run_dir: Path, recorded: object) -> object:
    """A file the record names, found in this run directory: the record keeps the path
    the run had when it was written, and a run moved or copied holds its files under
    its own ``traces/`` or ``hlo/`` (the recorded path where it has none there)."""
    if not isinstance(recorded, str) or not recorded:
        return recorded
    parts = Path(recorded).parts
    for anchor in ("traces", "hlo"):
        if anchor in parts:
            here = run_dir.joinpath(*parts[len(parts) - 1 - parts[::-1].index(anchor):])
            return str(here) if here.exists() else recorded
    return recorded


def _read_all(files: list[Path]) -> tuple[list[dict], dict[str, list[tuple[int, list]]]]:
    """Every process's marks, and its rows by kind; a form or a kind this reader does not
    know refused (:mod:`podscale.core.profilerecord`)."""
    marks: list[dict] = []
    kinds: dict[str, list[tuple[int, list]]] = {k: [] for k in ROWS}
    for path in files:
        process = int(path.stem.split("-")[1])
        objs, cut = _read(path)
        schema_of(objs, str(path))
        checked(objs, str(path))
        m, rows = _process(objs, process)
        marks.append({**m, "cut_lines": cut})
        for kind, got in rows.items():
            kinds[kind].append((process, got))
    return marks, kinds
