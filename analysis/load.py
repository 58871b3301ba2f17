"""Run directories -> tidy pandas DataFrames. Never imports JAX.

Case columns come from the records: the case's workload, version, variant, dtype and
layout, then one column per workload parameter (whatever the workloads declared; a
parameter whose name collides with a fixed column is prefixed ``param.``), then the
measurement settings, work and correctness check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from podscale.analysis import cache
from podscale.core.case import layout_key
from podscale.core.errors import UsageError
from podscale.core.records import (
    CaseRecord,
    EnvRecord,
    Manifest,
    SkipRecord,
    from_dict,
    read_columns,
    read_manifest,
    to_dict,
)

IDENTITY = ["workload", "version", "variant", "dtype", "hosts", "devices_per_host", "layout",
            "mesh"]
SETTINGS = ["iters", "warmup", "sync", "traced_iters"]
MEASURED = ["case_id", "process", "round", "bytes_per_process", "flops_per_process",
            "bytes_per_device", "collective", "participants", "hosts_per_group", "compile_kind",
            "checked", "wrong", "max_error", "result"]
FIXED = IDENTITY + SETTINGS + MEASURED
SAMPLE_COLUMNS = ("case_id", "process", "phase", "iteration", "seconds", "device", "round")


def param_columns(df: pd.DataFrame) -> list[str]:
    """The workload-parameter columns of a cases or summary table (``attrs["params"]``)."""
    return [c for c in df.attrs.get("params", []) if c in df.columns]


def _records(run_dir: Path) -> tuple[pd.DataFrame, list]:
    """(every sample as one frame, the other records), through the run's columnar cache
    (``analysis/cache.py``) when it is current, written when it is not."""
    files = sorted((run_dir / "records").glob("*/process-*.jsonl"))
    hit = cache.load(run_dir, files)
    if hit is not None:
        cols, dicts = hit
        other = [from_dict(d) for d in dicts]
    else:
        parts, other = [], []
        for path in files:
            columns, records = read_columns(path)
            parts.append(columns)
            other.extend(records)
        cols = {c: np.concatenate([p[c] for p in parts]) if parts else np.array([])
                for c in SAMPLE_COLUMNS}
        if files:
            cache.save(run_dir, files, cols, [to_dict(r) for r in other])
    return pd.DataFrame(cols, columns=list(SAMPLE_COLUMNS)), other


def _case_row(r: CaseRecord, names: list[str]) -> dict:
    c = r.case
    lay = c["layout"]
    axes = [["hosts", lay["hosts"]], *lay.get("local_axes", [])]
    row = {"workload": c["workload"], "version": c["version"], "variant": c["variant"],
           "dtype": c["dtype"], "hosts": lay["hosts"], "devices_per_host": lay["devices_per_host"],
           "layout": layout_key(lay["hosts"], lay["devices_per_host"]),
           "mesh": "x".join(f"{n}{s}" for n, s in axes), **c.get("settings", {})}
    for name, value in c.get("params", {}).items():
        row[names[name]] = value
    row.update({k: getattr(r, k) for k in MEASURED})
    return row


def cases_frame(cases: list[CaseRecord]) -> pd.DataFrame:
    params = list(dict.fromkeys(k for r in cases for k in r.case.get("params", {})))
    names = {p: (f"param.{p}" if p in FIXED else p) for p in params}
    df = pd.DataFrame([_case_row(r, names) for r in cases],
                      columns=IDENTITY + list(names.values()) + SETTINGS + MEASURED)
    df.attrs["params"] = list(names.values())
    return df


def read_parts(run_dir: Path) -> tuple[Manifest, pd.DataFrame, pd.DataFrame, pd.DataFrame,
                                        dict[str, str]]:
    """(manifest, samples, cases, envs, skipped) of one run directory, for
    :meth:`podscale.analysis.run.Run.load`."""
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    manifest = read_manifest(run_dir)
    samples, records = _records(run_dir)
    case_df = cases_frame([r for r in records if isinstance(r, CaseRecord)])
    envs = pd.DataFrame([vars(r) for r in records if isinstance(r, EnvRecord)])
    # cases the backend could not run: case id -> reason (no samples, no check)
    skipped = {r.case_id: r.reason for r in records if isinstance(r, SkipRecord)}
    for df in (samples, case_df, envs):
        df.attrs["run_id"] = manifest.run_id
    return manifest, samples, case_df, envs, skipped
