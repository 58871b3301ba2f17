"""A run's figures in the formats the places users keep numbers read: CI benchmark
dashboards (github-action-benchmark, Bencher, Google Benchmark's JSON), Prometheus
(OpenMetrics), every CI system (JUnit XML), asv's own results, and a digest for agents and
scripts. Every format is made from the same rows (:mod:`.rows`): one per case, its name the
case id (stable across runs, so a dashboard's series continue), its figures with units and
the range of the round medians, the run's platform, device kind, layout and slices,
timing method, versions, commit, and the command that reproduces the case. The
command line names the formats (``podscale/frontend/commands/verdictargs.DOCUMENTS``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podscale.analysis.export.rows import RunFacts

def document(rows: list, facts: RunFacts, fmt: str, figures: tuple[str, ...] = ("time",),
             verdicts: bool = False) -> str:
    """One format's document of the rows (text: JSON, OpenMetrics or XML)."""
    import json

    if fmt == "github-action-benchmark":
        from podscale.analysis.export.dashboards import github_action_benchmark

        return json.dumps(github_action_benchmark(rows, facts, figures), indent=1) + "\n"
    if fmt == "bencher":
        from podscale.analysis.export.dashboards import bencher

        return json.dumps(bencher(rows, facts), indent=1) + "\n"
    if fmt == "google-benchmark":
        from podscale.analysis.export.dashboards import google_benchmark

        return json.dumps(google_benchmark(rows, facts), indent=1) + "\n"
    if fmt == "openmetrics":
        from podscale.analysis.export.openmetrics import openmetrics

        return openmetrics(rows, facts, verdicts)
    if fmt == "junit":
        from podscale.analysis.export.junit import junit

        return junit(rows, facts)
    raise ValueError(f"no document format {fmt!r}")
