"""Run directories -> tidy pandas DataFrames. Never imports JAX."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from podscale.errors import UsageError
from podscale.records import CaseRecord, EnvRecord, Manifest, Sample, read_manifest, read_records

CASE_COLUMNS = ["suite", "variant", "dtype", "size", "hosts", "devices_per_host"]


def _records(run_dir: Path) -> list:
    files = sorted((run_dir / "records").glob("*/process-*.jsonl"))
    out: list = []
    for path in files:
        out.extend(read_records(path))
    return out


def load_run(run_dir: str | Path) -> tuple[Manifest, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(manifest, samples, cases, envs) of one run, each a tidy DataFrame."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    manifest = read_manifest(run_dir)
    records = _records(run_dir)
    samples = pd.DataFrame(
        [vars(r) for r in records if isinstance(r, Sample)],
        columns=["case_id", "process", "phase", "iteration", "seconds", "device"],
    )
    cases = [r for r in records if isinstance(r, CaseRecord)]
    case_df = pd.DataFrame(
        [{**{k: r.params[k] for k in CASE_COLUMNS}, **{k: v for k, v in vars(r).items()
                                                       if k != "params"}} for r in cases],
        columns=CASE_COLUMNS + ["case_id", "process", "bytes_per_process", "flops_per_process",
                                "bytes_per_device", "checked", "wrong", "max_error", "result"],
    )
    envs = pd.DataFrame([vars(r) for r in records if isinstance(r, EnvRecord)])
    for df in (samples, case_df, envs):
        df.attrs["run_id"] = manifest.run_id
    return manifest, samples, case_df, envs


def load_many(run_dirs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(samples, cases) of several runs concatenated, each row tagged with its run_id."""
    samples, cases = [], []
    for run_dir in run_dirs:
        manifest, s, c, _ = load_run(run_dir)
        samples.append(s.assign(run_id=manifest.run_id))
        cases.append(c.assign(run_id=manifest.run_id))
    return pd.concat(samples, ignore_index=True), pd.concat(cases, ignore_index=True)


def load(run_dir: str | Path) -> pd.DataFrame:
    """One row per raw sample, joined with its case parameters and the run id."""
    manifest, samples, cases, _ = load_run(run_dir)
    params = cases.drop_duplicates("case_id")[
        ["case_id", *CASE_COLUMNS, "bytes_per_process", "flops_per_process", "bytes_per_device"]
    ]
    df = samples.merge(params, on="case_id", how="left")
    df.insert(0, "run_id", manifest.run_id)
    return df
