"""A run as export rows: per case its stable name, labels, figures (value, and the range
of its round medians) and correctness; the run's own facts once (:class:`RunFacts`); and,
against another run, each case's verdict (``podscale compare``'s, unchanged)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from podscale.analysis.export.repro import command_of
from podscale.analysis.run import Run, as_run

#: figure -> (summary column, unit, bigger is better)
FIGURES = {"time": ("time_s", "s", False), "busbw": ("busbw", "GB/s", True),
           "bandwidth": ("gbps", "GB/s", True), "flops": ("gflops", "GFLOP/s", True)}
LABELS = ("workload", "variant", "dtype", "layout", "hosts", "devices_per_host", "slices")


@dataclass(frozen=True)
class Figure:
    """One figure of a case: its value and the range of the rounds' medians."""

    key: str
    unit: str
    value: float
    lo: float
    hi: float
    bigger_is_better: bool

    def __post_init__(self) -> None:
        if not self.lo <= self.value <= self.hi:
            raise ValueError(f"{self.key}: {self.value} outside {self.lo}..{self.hi}")


@dataclass(frozen=True)
class Row:
    """One case as every export carries it."""

    name: str
    labels: dict[str, str]
    figures: tuple[Figure, ...]
    wrong: int
    checked: int
    command: str
    verdict: str | None = None
    ratio: float | None = None
    interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class RunFacts:
    """What every row of a run shares."""

    run_id: str
    status: str
    commit: str | None
    dirty: bool
    created: str
    machine: str
    platform: str
    device_kind: str | None
    method: str
    versions: dict[str, str | None] = field(default_factory=dict)

    def labels(self) -> dict[str, str]:
        return {"platform": self.platform, "device_kind": self.device_kind or "",
                "method": self.method, "commit": (self.commit or "")[:12],
                "machine": self.machine}


def facts(run: Run) -> RunFacts:
    m, env = run.manifest, run.manifest.environment or {}
    platform = str(run.envs["platform"].iloc[0]) if not run.envs.empty and \
        "platform" in run.envs.columns else str(m.spec.get("platform", ""))
    return RunFacts(m.run_id, m.status, env.get("git_commit"), bool(env.get("git_dirty")),
                    m.created, str(env.get("hostname", "")), platform, run.device_kind,
                    run.prefer[0], dict(env.get("versions") or {}))


def _span(rounds: pd.Series, value: float, column: str) -> tuple[float, float]:
    """The range of a figure over the round medians (a rate's from the times'), always
    holding the value."""
    if column == "time_s" or rounds.empty:
        lo, hi = (rounds.min(), rounds.max()) if len(rounds) else (value, value)
    else:  # a rate: value x (headline time / a round's time)
        t = rounds.median()
        lo, hi = value * t / rounds.max(), value * t / rounds.min()
    return float(min(lo, value)), float(max(hi, value))


def rows(run_dir: str | Path | Run) -> tuple[list[Row], RunFacts]:
    """Every case of a run, in case-id order, and the run's facts."""
    run = as_run(run_dir)
    summary = run.summary().sort_values("case_id")
    rm = run.round_medians().groupby("case_id")["median"]
    params = [c for c in run.params if c != "size"]
    out = []
    for r in summary.to_dict("records"):
        rounds = rm.get_group(r["case_id"]) if r["case_id"] in rm.groups else pd.Series()
        figs = []
        for key, (col, unit, bigger) in FIGURES.items():
            v = r.get(col)
            if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or (
                    key != "time" and v <= 0):
                continue
            lo, hi = _span(rounds, float(v), col)
            figs.append(Figure(key, unit, float(v), lo, hi, bigger))
        labels = {k: str(r[k]) for k in (*LABELS, "size", *params)
                  if k in r and pd.notna(r[k])}
        out.append(Row(str(r["case_id"]), labels, tuple(figs), int(r.get("wrong") or 0),
                       int(r.get("checked") or 0), command_of(r, params, run.manifest)))
    return out, facts(run)


def with_verdicts(b_rows: list[Row], table: pd.DataFrame) -> list[Row]:
    """B's rows with ``podscale compare``'s verdict, ratio and 95% interval per case."""
    from dataclasses import replace

    by = table.set_index("case_id")
    return [replace(r, verdict=str(by.at[r.name, "verdict"]), ratio=float(by.at[r.name,
                    "ratio"]), interval=(float(by.at[r.name, "ci_lo"]),
                                         float(by.at[r.name, "ci_hi"])))
            if r.name in by.index else r for r in b_rows]
