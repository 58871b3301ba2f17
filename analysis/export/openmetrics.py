"""A run as OpenMetrics text: a gauge family per figure (``podscale_case_time_seconds``,
``..._busbw_bytes_per_second``, ``..._bandwidth_bytes_per_second``,
``..._compute_flops_per_second``), each case's median and its rounds' least and greatest
(``stat``), labelled with the case's keys and the run's platform, device kind, method,
commit and machine; the wrong results per case; the run's facts as an info metric."""

from __future__ import annotations

from collections.abc import Sequence

from podscale.analysis.export.rows import Row, RunFacts
from podscale.core.openmetrics import Family, text

#: figure -> (family name, unit, scale to the base unit, help)
FAMILIES = {"time": ("podscale_case_time_seconds", "seconds", 1.0,
                     "a case's time (the run's headline method), seconds"),
            "busbw": ("podscale_case_busbw_bytes_per_second", "bytes_per_second", 1e9,
                      "a collective's bus bandwidth (nccl-tests' busbw)"),
            "bandwidth": ("podscale_case_bandwidth_bytes_per_second", "bytes_per_second",
                          1e9, "a case's bytes per second per process"),
            "flops": ("podscale_case_compute_flops_per_second", "flops_per_second", 1e9,
                      "a case's floating-point operations per second per process")}


def openmetrics(rows: Sequence[Row], facts: RunFacts,
                verdicts: bool = False) -> str:
    """The run (and, from a comparison, each case's B/A ratio) as OpenMetrics text."""
    run = facts.labels()
    samples: dict[str, list] = {k: [] for k in FAMILIES}
    wrong, ratio = [], []
    for row in rows:
        labels = {"case": row.name, **row.labels, **run}
        for f in row.figures:
            _, _, scale, _ = FAMILIES[f.key]
            for stat, v in (("median", f.value), ("round_min", f.lo), ("round_max", f.hi)):
                samples[f.key].append(({**labels, "stat": stat}, v * scale))
        wrong.append((labels, float(row.wrong)))
        if verdicts and row.ratio is not None:
            ratio.append(({**labels, "verdict": row.verdict or ""}, row.ratio))
    families = [Family(name, "gauge", help_, unit, tuple(samples[k]))
                for k, (name, unit, _, help_) in FAMILIES.items() if samples[k]]
    families.append(Family("podscale_case_wrong", "gauge",
                           "results outside their tolerance, per case", "", tuple(wrong)))
    if ratio:
        families.append(Family("podscale_case_ratio", "gauge",
                               "B/A time ratio of a comparison, with its verdict", "",
                               tuple(ratio)))
    info = {"run_id": facts.run_id, "status": facts.status, **run,
            **{k: v for k, v in facts.versions.items() if v}}
    families.append(Family("podscale_run", "info", "the run's facts", "", ((info, 1.0),)))
    return text(families)
