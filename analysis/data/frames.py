"""Run directories -> tidy pandas DataFrames. Never imports JAX.

Case columns come from the records: the case's workload, version, variant, dtype and
layout, then one column per workload parameter (whatever the workloads declared; a
parameter whose name collides with a fixed column is prefixed ``param.``), then the
measurement settings, work and correctness check.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from podscale.analysis.data import cache
from podscale.core.case import Layout
from podscale.core.errors import UsageError
from podscale.core.recordfile import read_columns
from podscale.core.records import (
    PHASES,
    CaseRecord,
    EnvRecord,
    LedgerRecord,
    Manifest,
    SkipRecord,
    read_manifest,
)

IDENTITY = ["workload", "version", "variant", "dtype", "hosts", "devices_per_host", "slices",
            "layout", "mesh"]
SETTINGS = ["iters", "warmup", "sync", "traced_iters", "timing"]
MEASURED = ["case_id", "process", "round", "bytes_per_process", "flops_per_process",
            "bytes_per_device", "collective", "participants", "hosts_per_group", "compile_kind",
            "checked", "wrong", "max_error", "result", "unchecked", "exact_checked",
            "group_members", "takes_part", "program", "unsampled", "lowered", "ops"]
CHECKING = ["check_elements"]  # how a case was checked (not a measurement setting)
FIXED = IDENTITY + SETTINGS + CHECKING + MEASURED
_UNITS = "_units"  # a row's parameter units, gathered into the run's (RunParts.units)
#: columns a cases frame may hold that are no workload's parameter
_NOT_PARAMS = frozenset((*FIXED, "run_id"))
SAMPLE_COLUMNS = ("case_id", "process", "phase", "iteration", "seconds", "device", "round")


def case_params(cases: pd.DataFrame) -> list[str]:
    """The workload-parameter columns of a cases frame, in order: every column but the
    fixed ones (the frame is built so, :func:`_rows_frame`)."""
    return [c for c in cases.columns if c not in _NOT_PARAMS]


def samples_frame(parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """Every file's sample columns as one frame: case ids and phases as categoricals
    (groupbys over millions of samples work on codes), process, iteration and round as
    int32, the device as a nullable integer."""
    cols = {c: np.concatenate([p[c] for p in parts]) if parts else np.array([], dtype=np.int64)
            for c in SAMPLE_COLUMNS if c not in ("case_id", "phase")}
    names = sorted({str(n) for p in parts for n in p["case_names"]})
    code_of = {n: i for i, n in enumerate(names)}
    codes = np.concatenate([np.array([code_of[str(n)] for n in p["case_names"]],
                                     dtype=np.int32)[p["case_code"]] for p in parts]) \
        if parts else np.array([], dtype=np.int32)
    phases = np.concatenate([p["phase_code"] for p in parts]) if parts \
        else np.array([], dtype=np.int8)
    device = cols["device"].astype(np.int64)
    return pd.DataFrame({
        "case_id": pd.Categorical.from_codes(codes, pd.Index(names, dtype=object)),
        "process": cols["process"].astype(np.int32),
        "phase": pd.Categorical.from_codes(phases, pd.Index(list(PHASES), dtype=object)),
        "iteration": cols["iteration"].astype(np.int32),
        "seconds": cols["seconds"].astype(np.float64),
        "device": pd.arrays.IntegerArray(device, device < 0),
        "round": cols["round"].astype(np.int32)}, columns=list(SAMPLE_COLUMNS))


#: files from which parsing is spread over the machine's cores (each parses whole files)
PARALLEL_FILES = 64


def _read_all(files: list[Path]) -> Iterator[tuple[dict[str, np.ndarray], list, list, list]]:
    """Every file's (sample columns, other records), in order: in this process for a few
    files, else in a pool of one process per core (spawned: they import numpy and
    podscale.core only). JSON parsing dominates a cold load and is per file."""
    workers = min(os.cpu_count() or 1, len(files) // PARALLEL_FILES)
    if workers < 2:
        yield from map(_parse, files)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(files) // (workers * 8))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(_parse, files, chunksize=chunk)


def _parse(path: Path) -> tuple[dict[str, np.ndarray], list[dict], list, list[str]]:
    """One record file: (sample columns, its case records as table rows, other records,
    the lines left out and why)."""
    problems: list[str] = []
    columns, records = read_columns(path, problems)
    rows = [_case_row(r) for r in records if isinstance(r, CaseRecord)]
    return columns, rows, [r for r in records if not isinstance(r, CaseRecord)], problems


def _from_records(files: list[Path]) -> tuple[dict[str, pd.DataFrame], dict]:
    """({samples, cases, envs, ledger}, {skipped, problems: lines left out, units}) parsed
    from the JSON Lines files."""
    parts, rows, other, problems = [], [], [], []
    for columns, case_rows, records, bad in _read_all(files):
        parts.append(columns)
        rows.extend(case_rows)
        other.extend(records)
        problems.extend(bad)
    case_df, units = _rows_frame(rows)
    envs = pd.DataFrame([vars(r) for r in other if isinstance(r, EnvRecord)])
    # cases the backend could not run: case id -> reason (no samples, no check)
    skipped = {r.case_id: r.reason for r in other if isinstance(r, SkipRecord)}
    return ({"samples": samples_frame(parts), "cases": case_df, "envs": envs,
             "ledger": ledger_frame(other)},
            {"skipped": skipped, "problems": problems, "units": units})


def ledger_frame(records: list) -> pd.DataFrame:
    """One row per process and layout of a launch: ``phase.<name>`` seconds and
    ``mark.<name>`` wall-clock times, ``rss.<name>`` MB and ``cpu.<name>`` CPU seconds
    (:class:`LedgerRecord`)."""
    rows = [{"process": r.process, "layout": r.layout, "round": r.round,
             **{f"phase.{k}": v for k, v in r.phases.items()},
             **{f"mark.{k}": v for k, v in r.marks.items()},
             **{f"rss.{k}": v for k, v in r.rss_mb.items()},
             **{f"cpu.{k}": v for k, v in r.cpu_s.items()}}
            for r in records if isinstance(r, LedgerRecord)]
    return pd.DataFrame(rows, columns=list(dict.fromkeys(
        ["process", "layout", "round", *(k for row in rows for k in row)])))


def _column(param: str) -> str:
    """A workload parameter's column: its name, or ``param.NAME`` where a fixed column has
    that name."""
    return f"param.{param}" if param in FIXED else param


def _case_row(r: CaseRecord) -> dict:
    c = r.case
    lay = c["layout"]
    layout = Layout.from_dict(lay)
    row = {"workload": c["workload"], "version": c["version"], "variant": c["variant"],
           "dtype": c["dtype"], "hosts": lay["hosts"], "devices_per_host": lay["devices_per_host"],
           "slices": layout.slices,
           "layout": layout.key,  # with the mesh split and the slices, as everywhere
           "mesh": "x".join(f"{n}{s}" for n, s in layout.axes),
           "timing": "each",  # runs before the timing methods timed every call waited on
           **c.get("settings", {})}
    for name, value in c.get("params", {}).items():
        row[_column(name)] = value
    row.update({k: getattr(r, k) for k in MEASURED})
    row[_UNITS] = {c["workload"]: {_column(k): v for k, v in (r.units or {}).items()}}
    return row


def _rows_frame(rows: list[dict]) -> tuple[pd.DataFrame, dict[str, dict[str, str]]]:
    """The cases frame, and each workload's units of its parameters."""
    units: dict[str, dict[str, str]] = {}  # workload -> parameter -> unit
    for row in rows:
        for workload, of in (row.pop(_UNITS, None) or {}).items():
            units.setdefault(workload, {}).update(of)
    fixed = set(FIXED)
    params = list(dict.fromkeys(k for row in rows for k in row if k not in fixed))
    return pd.DataFrame(rows, columns=IDENTITY + params + SETTINGS + CHECKING + MEASURED), units


class RunParts(NamedTuple):
    """What a run directory holds, as :class:`podscale.analysis.run.Run` is built from it."""

    manifest: Manifest
    samples: pd.DataFrame
    cases: pd.DataFrame
    envs: pd.DataFrame
    skipped: dict[str, str]
    problems: tuple[str, ...]  # record lines left out, each "file:line: why"
    ledger: pd.DataFrame
    units: dict[str, dict[str, str]]  # workload -> parameter column -> unit


def read_parts(run_dir: Path) -> RunParts:
    """A run's parts, for :meth:`podscale.analysis.run.Run.load`: through the run's
    columnar cache (:mod:`podscale.analysis.data.cache`) when it is current, which is written
    when it is not."""
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    manifest = read_manifest(run_dir)
    files = cache.record_files(run_dir)
    hit = cache.load(run_dir, files)
    if hit is None:
        hit = _from_records(files)
        if files:
            cache.save(run_dir, files, *hit)
    frames, facts = hit
    samples, case_df, envs = frames["samples"], frames["cases"], frames["envs"]
    if manifest.status == "complete" and samples.empty and case_df.empty and envs.empty:
        raise UsageError(f"{run_dir}: its manifest says complete, but its records hold "
                         f"nothing ({len(files)} record file(s), all empty or unreadable): "
                         "the run's data is lost (truncated or deleted); run it again")
    return RunParts(manifest, samples, case_df, envs, facts["skipped"],
                    tuple(facts["problems"]), frames["ledger"], facts["units"])
