"""A cluster over time: the same cases across many runs (nightly health checks, before and
after maintenance), with change points, drift of the whole run told apart from one case's
change, and runs of other settings or hardware kept apart.

Each run keeps a compact summary next to its records (``RUN/cache/summary.json``: one row
per case, written at the end of ``podscale run`` or on first use, keyed like the column
cache so it is rebuilt when the records change). JSON per run was chosen by measuring:
1,000 runs x 200 cases read in 1.0 s, against 2.0 s for one Parquet file per run with
pandas and 0.9 s for a pyarrow dataset over them (docs/performance.md) — no new
dependency for a tenth of a second.

Per group (hardware, settings), with runs in time order and t the case's time:
``drift`` is each run's median over cases of log t minus the case's median over runs (a
change every case shares: the machine, the software stack); its change points are the
run-wide events. Each case's residual (log t minus its run's drift) is searched for its
own change points (:mod:`podscale.analysis.models.changepoints`), so a drift of every case is one
drift event, not 200 changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from podscale.analysis.data import cache
from podscale.analysis.models.changepoints import change_points
from podscale.core import runfolder as rf
from podscale.core.errors import PodscaleError, UsageError

if TYPE_CHECKING:
    from podscale.analysis.run import Run

STORE = "summary.json"
KEEP = ["case_id", "workload", "variant", "dtype", "layout", "time_s", "round_cv",
        "rounds", "busbw", "iters", "warmup", "sync", "method", "each_s", "chain_s",
        "device_s"]


META = ("run_id", "created", "hardware", "host", "status")
#: the store's form: a store of another is built anew (2: the hardware key names the
#: chips a process has and the software that decides their timings)
FORM = 2


def hardware(env: Any, environment: dict) -> str:
    """A series' machine: platform, device kind and devices per process, the CPU model and
    frequency governor of a CPU simulation, and the jax, jaxlib and libtpu releases. A
    run whose key differs starts a series of its own (a CPU simulation never continues a
    TPU's series, nor a v5e's a v6e's)."""
    platform = str(env.get("platform", ""))
    out = f"{platform}:{env.get('device_kind', '')}"
    devices = env.get("local_device_count", env.get("local_devices"))
    if devices is not None and devices == devices:
        out += f" x{int(devices)}"
    if platform == "cpu" and environment.get("cpu_model"):
        out += f" [{environment['cpu_model']}" + (
            f", {environment['cpu_governor']}" if environment.get("cpu_governor") else "") + "]"
    versions = environment.get("versions", {})
    soft = [f"{n} {versions[n]}" for n in ("jax", "jaxlib", "libtpu") if versions.get(n)]
    return out + (f" ({', '.join(soft)})" if soft else "")


def _meta(run: Run) -> dict:
    env = run.envs.iloc[0] if len(run.envs) else {}
    return {"run_id": run.run_id, "created": run.manifest.created,
            "hardware": hardware(env, run.manifest.environment),
            "host": run.manifest.environment.get("hostname", ""), "status": run.status}


def run_summary(run_dir: Path) -> dict:
    """The run's store (``meta``, ``columns``, ``rows``: one per case), built from its
    records when missing or stale."""
    store = run_dir / cache.NAME / STORE
    key = _key(run_dir)
    try:
        data = json.loads(store.read_text(encoding="utf-8"))
        if data["key"] == key and data["columns"] == KEEP and data.get("form") == FORM:
            return data
    except (OSError, ValueError, KeyError):
        pass
    return write_summary(run_dir, key)


def write_summary(run_dir: Path, key: str | None = None,
                  run: Run | None = None) -> dict:
    """Build and keep the run's store (podscale run does at its end, with its ``run``)."""
    from podscale.analysis.run import load_run
    from podscale.core.manifest import run_kind

    if run_kind(run_dir) == "profile":  # a profiled program: its step is the one case
        return _write(run_dir, key, *_profiled(run_dir))
    run = load_run(run_dir) if run is None else run
    summary = run.summary() if len(run.cases) else pd.DataFrame(columns=KEEP)
    rows = summary.reindex(columns=KEEP)
    return _write(run_dir, key, _meta(run), json.loads(rows.to_json(orient="values")))


def _profiled(run_dir: Path) -> tuple[dict, list[list]]:
    from podscale.analysis.profile.summary import summarize_profile
    from podscale.analysis.verdicts.profilecompare import history_row

    s = summarize_profile(run_dir)
    row = history_row(s)
    m = s.profile.manifest
    env = s.profile.processes.iloc[0] if len(s.profile.processes) else {}
    meta = {"run_id": m.run_id, "created": m.created,
            "hardware": hardware(env, m.environment),
            "host": m.environment.get("hostname", ""), "status": m.status}
    return meta, [[row[k] for k in KEEP]] if row["time_s"] is not None else []


def _key(run_dir: Path) -> str:
    """The store's key: its record files (a profiled program's, or a run's) as they are."""
    profiled = sorted((run_dir / rf.PROFILE).glob(rf.process_glob(".jsonl")))
    return cache.key(profiled or cache.record_files(run_dir), run_dir)


def _write(run_dir: Path, key: str | None, meta: dict, rows: list[list]) -> dict:
    payload = {"key": key or _key(run_dir), "meta": meta, "columns": KEEP, "rows": rows,
               "form": FORM}
    try:
        (run_dir / cache.NAME).mkdir(exist_ok=True)
        (run_dir / cache.NAME / STORE).write_text(json.dumps(payload), encoding="utf-8")
    except OSError:
        pass
    return payload


def run_dirs(paths: list[Path]) -> list[Path]:
    """Run directories named, or found one level inside a folder of runs."""
    found: list[Path] = []
    for p in paths:
        if (p / "run.json").is_file():
            found.append(p)
        elif p.is_dir():
            found += sorted(q.parent for q in p.glob("*/run.json"))
        else:
            raise UsageError(f"{p}: not a run directory or a folder of runs")
    if len(found) < 2:
        raise UsageError(f"history needs 2 or more runs, found {len(found)} in "
                         f"{', '.join(map(str, paths))}")
    return found


class Collected(NamedTuple):
    """Every readable run's cases (:func:`collect`'s frame), and the runs left out, each
    named with why."""

    frame: pd.DataFrame
    skipped: list[str]


def collect(paths: list[Path], judge: str = "auto") -> pd.DataFrame:
    """:func:`gather`'s frame."""
    return gather(paths, judge).frame


def gather(paths: list[Path], judge: str = "auto") -> Collected:
    """Every case of every run: one row per (run, case), runs in time order (``order``),
    ``time_s`` of the timing method judged (``auto``: each run's headline, device else
    chain else each; or each, chain, device: runs without it leave the case out). The
    method is part of a series' settings, so a run timed otherwise starts a series of its
    own rather than a change. A run that cannot be read, or has no completed case, is left
    out and named (``skipped``)."""
    rows: list[list] = []
    skipped: list[str] = []
    dirs = run_dirs(paths)
    for d in dirs:
        try:
            data = run_summary(d)
        except (PodscaleError, OSError, ValueError, KeyError) as exc:
            skipped.append(f"{d} ({type(exc).__name__}: {str(exc)[:120]})")
            continue
        meta = {**data["meta"], "run_id": d.name}  # a run's folder names it (copies apart)
        if not data["rows"]:  # stopped before its first case ended: nothing to follow
            skipped.append(f"{d} (no completed case: {meta.get('status') or 'unknown'})")
            continue
        extra = [meta.get(k, "") for k in META]
        rows += [row + extra for row in data["rows"]]
    if len(dirs) - len(skipped) < 2:
        raise UsageError(f"history needs 2 or more runs with a completed case; {len(skipped)} "
                         f"of {len(dirs)} have none or could not be read: {'; '.join(skipped)}")
    df = pd.DataFrame(rows, columns=KEEP + list(META))
    if judge != "auto":  # one method's time, where the run has it; runs without it named
        df = df.assign(time_s=df[f"{judge}_s"], method=judge)
        held = set(df.dropna(subset=["time_s"])["run_id"])
        lacking = sorted(set(df["run_id"]) - held)
        skipped += [f"{r} (no {judge} times)" for r in lacking]
        df = df.dropna(subset=["time_s"])
        if len(held) < 2:
            raise UsageError(f"history --judge {judge} needs 2 or more runs that time it; "
                             f"{len(held)} do" + (f" ({', '.join(lacking)} do not)"
                                                  if lacking else ""))
    df["settings"] = (df["iters"].astype(str) + "/" + df["warmup"].astype(str) + "/" +
                      df["sync"].astype(str) + "/" + df["method"].fillna("each").astype(str))
    created = df.drop_duplicates("run_id").sort_values(["created", "run_id"])["run_id"]
    df["order"] = df["run_id"].map({r: i for i, r in enumerate(created)})
    return Collected(df.sort_values(["order", "case_id"], kind="stable").reset_index(drop=True),
                     skipped)


def analyse(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``drift``: run-wide level changes per hardware group; ``changes``: one case's own
    change points after its run's drift is removed; ``series``: log deviations (plots)."""
    drifts, changes, series = [], [], {}
    for hw, g in df.groupby("hardware", sort=True):
        wide = g.pivot_table(index="order", columns=["case_id", "settings"], values="time_s",
                             aggfunc="first")
        runs = g.drop_duplicates("order").set_index("order")["run_id"]
        dev = np.log(wide) - np.log(wide).median(axis=0)
        drift = dev.median(axis=1)
        resid = dev.sub(drift, axis=0)
        series[hw] = (drift, resid)
        for at in change_points(drift.to_numpy()):
            before, after = drift.iloc[:at], drift.iloc[at:]
            drifts.append({"hardware": hw, "at": int(drift.index[at]),
                           "run_id": runs[drift.index[at]],
                           "ratio": float(np.exp(after.median() - before.median())),
                           "cases": wide.shape[1]})
        for col in resid.columns:
            x = resid[col].dropna()
            for at in change_points(x.to_numpy()):
                t = wide[col].dropna()
                order = int(x.index[at])
                changes.append({"hardware": hw, "case_id": col[0], "settings": col[1],
                                "at": order, "run_id": runs[order],
                                "before_s": float(t[t.index < order].median()),
                                "after_s": float(t[t.index >= order].median()),
                                "ratio": float(np.exp(x.iloc[at:].median() -
                                                      x.iloc[:at].median()))})
    return {"drift": pd.DataFrame(drifts, columns=["hardware", "at", "run_id", "ratio",
                                                   "cases"]),
            "changes": pd.DataFrame(changes, columns=["hardware", "case_id", "settings", "at",
                                                      "run_id", "before_s", "after_s",
                                                      "ratio"]),
            "series": series}
