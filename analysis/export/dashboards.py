"""JSON for CI benchmark dashboards: github-action-benchmark's custom tools (an array of
name, unit, value, range, extra; one direction per file), Bencher's Metric Format (a
benchmark per case, a measure per figure with its value and the rounds' bounds) and Google
Benchmark's JSON (context and benchmarks), which many dashboards' adapters read."""

from __future__ import annotations

import platform as host
from collections.abc import Sequence

from podscale.analysis.export.rows import Figure, Row, RunFacts

#: Bencher's measure per figure: its built-in ``latency`` (ns), else a slug of our own
BENCHER_MEASURES = {"time": ("latency", 1e9), "busbw": ("busbw-gb-s", 1.0),
                    "bandwidth": ("bandwidth-gb-s", 1.0), "flops": ("gflop-s", 1.0)}


def _shown(f: Figure) -> tuple[float, float, float, str]:
    """(value, lo, hi, unit) as a dashboard shows it: times in microseconds."""
    if f.unit == "s":
        return f.value * 1e6, f.lo * 1e6, f.hi * 1e6, "us"
    return f.value, f.lo, f.hi, f.unit


def _extra(row: Row, facts: RunFacts) -> str:
    labels: dict[str, str] = dict(facts.labels())
    labels.update({k: row.labels[k] for k in ("layout", "slices") if k in row.labels})
    versions = " ".join(f"{k}={v}" for k, v in facts.versions.items() if v)
    return (" ".join(f"{k}={v}" for k, v in labels.items()) + f"\nversions: {versions}\n"
            f"wrong: {row.wrong} of {row.checked}\nreproduce: {row.command}")


def github_action_benchmark(rows: Sequence[Row], facts: RunFacts,
                            figures: Sequence[str] = ("time",)) -> list[dict]:
    """github-action-benchmark's ``customSmallerIsBetter`` (times) or
    ``customBiggerIsBetter`` (rates) input: one entry per case and figure asked for."""
    out = []
    for row in rows:
        for f in row.figures:
            if f.key not in figures:
                continue
            v, lo, hi, unit = _shown(f)
            name = row.name if len(figures) == 1 else f"{row.name} [{f.key}]"
            out.append({"name": name, "unit": unit, "value": v,
                        "range": f"± {max(v - lo, hi - v):.6g}", "extra": _extra(row, facts)})
    return out


def bencher(rows: Sequence[Row], facts: RunFacts) -> dict:
    """Bencher Metric Format: {case: {measure: {value, lower_value, upper_value}}}."""
    out: dict[str, dict] = {}
    for row in rows:
        for f in row.figures:
            slug, scale = BENCHER_MEASURES[f.key]
            out.setdefault(row.name, {})[slug] = {
                "value": f.value * scale, "lower_value": f.lo * scale,
                "upper_value": f.hi * scale}
    return out


def google_benchmark(rows: Sequence[Row], facts: RunFacts) -> dict:
    """Google Benchmark's JSON: a context (the machine and the run's facts) and one
    benchmark per case, real time in microseconds, the rates as counters."""
    import os

    context = {"date": facts.created, "host_name": facts.machine or host.node(),
               "executable": "podscale", "num_cpus": os.cpu_count() or 1,
               "mhz_per_cpu": 0, "cpu_scaling_enabled": False, "caches": [],
               "library_build_type": "release", "json_schema_version": 1,
               **{f"podscale_{k}": v for k, v in facts.labels().items()}}
    out = []
    for i, row in enumerate(rows):
        times = [f for f in row.figures if f.key == "time"]
        if not times:
            continue
        t = times[0].value * 1e6
        entry = {"name": row.name, "family_index": i, "per_family_instance_index": 0,
                 "run_name": row.name, "run_type": "iteration", "repetitions": 1,
                 "repetition_index": 0, "threads": 1, "iterations": 1, "real_time": t,
                 "cpu_time": t, "time_unit": "us", "label": row.command}
        entry.update({f"{f.key}_{f.unit.replace('/', 'p')}": f.value
                      for f in row.figures if f.key != "time"})
        out.append(entry)
    return {"context": context, "benchmarks": out}
