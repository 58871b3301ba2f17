"""Generated reports: one self-contained HTML file (plots embedded) and a Markdown summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from podscale.analysis.data.summary import Summary
from podscale.analysis.models.stats import labels
from podscale.analysis.render import modelplots, plots, sections
from podscale.analysis.render.analysed import Analysis, analyse
from podscale.analysis.render.formats import (
    ceiling_table,
    cell,
    fits_table,
    workload_table,
)
from podscale.analysis.render.sections import Doc, Section
from podscale.analysis.run import Run, as_run
from podscale.core import runfolder as rf
from podscale.core import xprof
from podscale.core.manifest import Manifest


def environment_table(manifest: Manifest, envs: pd.DataFrame,
                      status: str | None = None) -> pd.DataFrame:
    env = dict(manifest.environment)
    versions = env.pop("versions", {}) or {}
    rows = [(k, v) for k, v in env.items()] + [(f"version: {k}", v) for k, v in versions.items()]
    if not envs.empty:
        for col in ("platform", "device_kind", "jax", "jaxlib", "hostname", "xla_flags"):
            rows.append((f"workers: {col}", ", ".join(sorted({str(v) for v in envs[col]}))))
        rows.append(("workers: process counts", ", ".join(
            str(v) for v in sorted(set(envs["process_count"])))))
        rows.append(("workers: global device counts", ", ".join(
            str(v) for v in sorted(set(envs["global_device_count"])))))
    rows += [("run status", status or manifest.status),
             ("command", " ".join(manifest.command))]
    if manifest.error:
        rows.append(("error", manifest.error))
    return pd.DataFrame(rows, columns=["key", "value"])


def _trace_tables(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    steps, lag = run_dir / rf.TRACES / "steps.csv", run_dir / rf.TRACES / "stragglers.csv"
    if not steps.exists() and any(run_dir.glob(f"{rf.TRACES}/*/" + xprof.SESSION_GLOB)):
        from podscale.analysis.data.traces import load_traces, step_table, stragglers

        table = step_table(load_traces(run_dir))
        return table, stragglers(table)
    if not steps.exists():
        return pd.DataFrame(), pd.DataFrame()
    from podscale.analysis.data.traces import read_steps

    return read_steps(steps), pd.read_csv(lag) if lag.exists() else pd.DataFrame()


def algorithms(table: Summary) -> pd.DataFrame:
    """Cases that differ only in a workload's ``algorithm`` parameter, side by side: time
    per algorithm and each one relative to the first (e.g. hierarchical / flat)."""
    summary = table.frame
    if "algorithm" not in summary.columns or summary["algorithm"].nunique() < 2:
        return pd.DataFrame()
    df = summary.dropna(subset=["algorithm"])
    # the parameters of the workloads that have an algorithm (others' columns are empty)
    params = [c for c in table.param_columns if c != "algorithm" and df[c].notna().all()]
    keys = ["workload", "variant", "dtype", "hosts", "devices_per_host", "mesh", *params]
    df = df.assign(**{c: df[c].astype(str) for c in params})
    wide = df.pivot_table(index=keys, columns="algorithm", values="time_s", aggfunc="first")
    names = list(dict.fromkeys(df["algorithm"]))
    wide = wide.dropna(subset=names)
    if wide.empty:
        return pd.DataFrame()
    out = (wide[names] * 1e6).round(1).rename(columns=lambda a: f"{a} (us)")
    for a in names[1:]:
        out[f"{a} / {names[0]}"] = (wide[a] / wide[names[0]]).round(3)
    return out.reset_index()


VARIANTS_NOTE = (
    "since JAX 0.8 pmap is implemented with jit and shard_map (0.10 removed the old "
    "implementation), so both variants compile the same kind of program and their "
    "collectives should match (the per-case program fingerprint shows it). What this "
    "comparison still measures is the API path around it: pmap's host-local inputs and "
    "outputs, its per-call dispatch and argument handling, and its first call compiling "
    "(pmap's compile figure includes an execution); a difference here is overhead in "
    "that path, not a different collective")


def _plots(doc: Doc, a: Analysis, run_dir: Path,
           extra_sections: Sequence[Section]) -> None:
    summary = a.summary
    doc.heading("Time and bandwidth vs size")
    doc.figure(plots.bandwidth_vs_size(summary), "bandwidth vs size")
    doc.figure(plots.time_vs_size(summary), "time vs size")
    coll = plots.collective_busbw(a.table)
    if coll is not None:
        doc.heading("Collectives over mesh axes", "busbw (nccl-tests' definition, "
                    "analysis/models/bandwidth.py) vs the per-device buffer, one line per axes")
        doc.figure(coll, "collective busbw vs size")
    sections.scaling_section(doc, a.scaled)
    if not a.eff.empty:  # needs the same case at 1 and more hosts
        doc.heading("Scaling efficiency vs hosts",
                    "weak: same size per process, T(1)/T(H); strong: same total size, "
                    "T(1)/(H*T(H)), where the grid has the matching sizes")
        doc.figure(plots.scaling_efficiency(a.eff), "scaling efficiency")
    sections.pair_sections(doc, a)
    if not a.skew.empty:  # multi-host cases only
        doc.heading("Per-process skew", "each process's median time in each multi-host "
                    "case relative to the case's median over the processes taking part "
                    "(analysis/models/skew.py); the slowest processes named below")
        doc.figure(modelplots.process_skew(a.skew), "per-process skew")
        if not a.slow.empty:
            doc.table(a.slow.map(cell))
    if summary["variant"].nunique() > 1 and {"pmap", "shard_map"} <= set(summary["variant"]):
        doc.heading("pmap vs shard_map", VARIANTS_NOTE)
        doc.figure(plots.variant_comparison(summary), "pmap vs shard_map")
    doc.heading("Compile times", "ahead-of-time lower+compile only; pmap's figure is its "
                                 "first call (incl. execution and waiting for peers) and is "
                                 "left out of this plot (it is in the tables)")
    doc.figure(plots.compile_times(summary), "compile times")
    sections.ledger_section(doc, a.ledger)
    steps, lag = _trace_tables(run_dir)
    if not steps.empty:
        doc.heading("Trace-derived device time", "from the separate traced pass (XProf traces)")
        doc.figure(plots.trace_breakdown(steps), "trace breakdown")
        med = steps.groupby(["layout", "case_id"])[
            ["wall_us", "busy_us", "collective_us", "hidden_us", "host_us"]].median().round(1)
        doc.table(med.reset_index())
        if not lag.empty:
            doc.heading("Stragglers", "per step: process last at the collective, and its lag")
            doc.table(lag.round(1), md=False)
    for section in extra_sections:
        section(doc)


def _tables(doc: Doc, a: Analysis, across: str) -> None:
    summary = a.summary
    doc.heading("Tables", "every figure above, in full (collapsed: click to open)")
    if not a.fitted.empty:
        doc.heading("Latency-bandwidth fits", "t(S) = alpha + S/beta per size sweep over "
                    "round medians (analysis/models/fits.py); beta is a bus bandwidth for "
                    "collectives; S_half = alpha*beta, the size at half of beta; n½ (peak): "
                    "the size at half of the device's peak; alpha is of the method named "
                    "(device time: the operation's own latency), host the per-call cost "
                    "beside it (each - device)")
        doc.table(fits_table(a.fitted), collapsed=f"{len(a.fitted)} fit(s)")
    sections.scaling_tables(doc, a.scaled)
    doc.heading("Ceilings", "% of ceiling: busbw (collectives over 2+ participants) or GB/s "
                "(others) against the ceiling named per row; % of FLOP ceiling: GFLOP/s per "
                "device against the bf16 peak, or on CPU the run's best matmul "
                "(analysis/models/ceilings.py)")
    doc.table(ceiling_table(summary), collapsed="ceiling per case")
    algo = algorithms(a.table)
    if not algo.empty:
        doc.heading("Algorithms side by side", "the same case with each value of the "
                    "workload's algorithm parameter (e.g. all_reduce flat vs hierarchical: "
                    "reduce_scatter over the inner axes, all_reduce over hosts, all_gather)")
        doc.table(algo, collapsed=f"{len(algo)} case(s)")
    if not a.eff.empty:
        doc.heading("Scaling efficiency table")
        doc.table(a.eff.map(cell), collapsed=f"{len(a.eff)} row(s)")
    for workload, part in summary.groupby("workload", sort=False):
        kind = part["collective"].dropna()
        what = f"collective {kind.iloc[0]}" if len(kind) else "no collective"
        doc.heading(f"Workload {workload}", f"{what}; time: {labels(across)['time_s']}; "
                                            "bandwidths in GB/s.")
        doc.table(workload_table(a.table.of(part)), collapsed=f"{len(part)} case(s)")
    sections.program_section(doc, summary)
    if a.skipped:
        doc.heading("Skipped cases", "the backend does not implement them (no samples)")
        doc.table(pd.DataFrame(sorted(a.skipped.items()), columns=["case", "reason"]))
    doc.heading("Environment")
    doc.table(environment_table(a.manifest, a.envs, a.status))
    doc.heading("How statistics are derived")
    doc.table(pd.DataFrame(sorted(labels(across).items()), columns=["column", "derivation"]))


def build(run: Run | Path, across: str = "max",
          extra_sections: Sequence[Section] = ()) -> Doc:
    """The report top-down: Findings, then plots, then every table (collapsed)."""
    from podscale.analysis.verdicts.findings import degraded_findings

    run = as_run(run)
    run_dir = run.path
    doc = Doc(f"podscale report: {run.run_id}")
    if run.cases.empty:
        doc.heading("Results", "No case completed in this run.")
        doc.heading("Environment")
        doc.table(environment_table(run.manifest, run.envs, run.status_text))
        return doc
    a = analyse(run, across)
    doc.heading("Findings", "the facts that matter first; details below")
    status = [] if run.status == "complete" else [
        f"this run is {run.status_text}: what follows covers the cases it finished"]
    problems = run.problems_text()
    if problems:
        status.append(problems)
    from podscale.analysis.models.ledger import sentences as wall_time

    doc.bullets(status + degraded_findings(run.envs)
                + [f.text for f in a.findings()] + wall_time(a.ledger))
    if (run_dir / rf.HLO).is_dir():  # made by podscale replay
        from podscale.analysis.render.sections import replay_section

        replay_section(doc, run_dir)
    from podscale.analysis.render.comparesection import compare_section

    compare_section(doc, run_dir)  # each compare or ab of this run as B
    _plots(doc, a, run_dir, extra_sections)
    _tables(doc, a, across)
    return doc


def write_report(run: Run | Path, out: Path | None = None, across: str = "max",
                 extra_sections: Sequence[Section] = ()) -> tuple[Path, Path]:
    """Write ``report/index.html`` and ``report/summary.md`` for a run."""
    run = as_run(run)
    run_dir = run.path
    out = Path(out) if out else run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)  # a folder that cannot be made: before the work
    doc = build(run, across, extra_sections)
    (out / "index.html").write_text(doc.render(), encoding="utf-8")
    (out / "summary.md").write_text("\n".join(doc.md) + "\n", encoding="utf-8")
    (out / "report.json").write_text(json.dumps({"run_dir": str(run_dir), "across": across}))
    return out / "index.html", out / "summary.md"
