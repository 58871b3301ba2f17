"""asv results -> pandas, read with asv's own result API, and a report section."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from podscale.core.errors import UsageError

if TYPE_CHECKING:
    from podscale.analysis.render.sections import Doc, Section

COLUMNS = ["machine", "commit", "date", "env", "benchmark", "params", "value", "unit",
           "q_25", "q_75", "samples"]


def load_asv(results_dir: str | Path) -> pd.DataFrame:
    """One row per (machine, commit, environment, benchmark, parameter combination);
    ``samples``: how many samples asv kept statistics of (none: a bare value)."""
    from asv import results as asv_results

    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise UsageError(f"{results_dir}: no asv results directory")
    meta_path = results_dir / "benchmarks.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    rows = []
    for root, filename, machine in asv_results.iter_results_paths(str(results_dir)):
        res = asv_results.Results.load(str(Path(root) / filename), machine_name=machine)
        date = datetime.fromtimestamp(res.date / 1000, tz=UTC) if res.date else None
        for key in res.get_all_result_keys():
            params = res.get_result_params(key)
            names = meta.get(key, {}).get("param_names", [f"p{i}" for i in range(len(params))])
            values = res.get_result_value(key, params)
            stats = res.get_result_stats(key, params)
            combos = list(itertools.product(*params)) if params else [()]
            if not params:
                values, stats = [values], [stats]
            for combo, value, st in zip(combos, values, stats):
                rows.append({
                    "machine": machine, "commit": res.commit_hash, "date": date,
                    "env": res.env_name, "benchmark": key,
                    "params": ", ".join(f"{n}={v}" for n, v in zip(names, combo)),
                    "value": value, "unit": meta.get(key, {}).get("unit", ""),
                    "q_25": (st or {}).get("q_25"), "q_75": (st or {}).get("q_75"),
                    "samples": (st or {}).get("repeat"),
                })
    return pd.DataFrame(rows, columns=COLUMNS)


def history_section(results_dir: str | Path) -> Section:
    """A report section (callable on the report document) with asv history across commits."""
    df = load_asv(results_dir).dropna(subset=["value"])

    def section(doc: Doc) -> None:
        doc.heading("asv history across commits",
                    f"from {results_dir}: value relative to the earliest commit, per benchmark "
                    "and parameters")
        if df.empty:
            doc.heading("asv", "No asv results found.")
            return
        from podscale.analysis.render import plots

        # a series of one commit has no history: a panel of one point each says nothing
        commits = df.groupby(["benchmark", "params"])["commit"].transform("nunique")
        drawn = df[commits >= 2]
        if drawn.empty:
            doc.bullets([f"each of the {df.groupby(['benchmark', 'params']).ngroups} series "
                         "has one commit so far: no history to draw (the latest values "
                         "below)"])
        else:
            doc.figure(plots.asv_history(drawn), "asv history")
        latest = (df.sort_values("date").groupby(["benchmark", "params"]).tail(1)
                  [["benchmark", "params", "value", "unit", "commit", "machine"]])
        latest = latest.assign(commit=latest["commit"].str[:8],
                               value=latest["value"].map(lambda v: f"{v:.4g}"))
        doc.table(latest)

    return section
