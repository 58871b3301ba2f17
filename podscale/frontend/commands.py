"""What the ``podscale`` commands do, given parsed arguments (see :mod:`podscale.frontend.cli`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core.case import Layout
from podscale.core.errors import UsageError, WrongResults
from podscale.frontend.gridargs import grids_from_args, launch_kwargs

MAX_LOCAL_PROCESSES = 256


def cmd_list(refs: str | None) -> int:
    """Every built-in workload (and any named ones) with its parameters and defaults."""
    from podscale.core.registry import builtins, resolve
    from podscale.core.workload import Workload

    found = dict(builtins())
    for ref in (r.strip() for r in (refs or "").split(",") if r.strip()):
        f = resolve(ref)
        found[f.source] = f
    for f in found.values():
        wl = f.workload
        per_case = type(wl).collective_of is not Workload.collective_of
        kind = f"collective {wl.collective}" if wl.collective else \
            "collective per case (its kind)" if per_case else "no collective"
        print(f"{wl.name}@{wl.version}  {wl.summary}")
        print(f"    {kind}; variants {', '.join(wl.variants)}; dtypes {', '.join(wl.dtypes)}; "
              f"source {f.source}")
        for p in wl.params:
            print(f"    --param {p.describe()}")
    return 0


def show(run_dir: Path) -> int:
    """Print the run's table; return how many output elements were wrong."""
    from analysis import load_run, summarize
    from analysis.table import render

    manifest, samples, cases, _ = load_run(run_dir)
    print(f"# run {manifest.run_id} ({manifest.status})")
    for case_id, reason in cases.attrs.get("skipped", {}).items():
        print(f"# skipped {case_id}: {reason}")
    if cases.empty:
        print("# no case completed")
        return 0
    print(render(summarize(samples, cases)))
    return int(cases["wrong"].sum())


def wrong_results(run_dir: Path) -> WrongResults:
    from analysis import load_run

    _, _, cases, _ = load_run(run_dir)
    bad = cases[cases["wrong"] > 0]
    return WrongResults(f"{int(bad['wrong'].sum())} wrong output element(s) in "
                        f"{bad['case_id'].nunique()} case(s), e.g. {bad['case_id'].iloc[0]} on "
                        f"process {int(bad['process'].iloc[0])}; results kept in {run_dir}")


def prepare_run(args: argparse.Namespace, default_file: Path | None = None) -> tuple:
    """(grids, cases, rounds, execute keyword arguments), every case and option validated
    before any process starts."""
    from podscale.core.grid import expand_all, spec_of

    gs, rounds = grids_from_args(args, default_file)
    cases = expand_all(gs)
    if not 0 <= args.coordinator_port < 65536:
        raise UsageError(f"bad --coordinator-port {args.coordinator_port}")
    if args.case_timeout <= 0:
        raise UsageError(f"--case-timeout must be > 0, got {args.case_timeout:g}")
    if args.trace_dir and args.launcher == "local" and max(c.hosts for c in cases) > 1:
        raise UsageError("--trace-dir names trace files by host; the local launcher's processes "
                         "share one host (leave it out: traces go to the run directory)")
    most = max(c.hosts for c in cases)
    if args.launcher == "local" and most > MAX_LOCAL_PROCESSES:
        raise UsageError(f"{most} hosts: the local launcher starts at most "
                         f"{MAX_LOCAL_PROCESSES} processes")
    kwargs = dict(spec=spec_of(gs), case_timeout=args.case_timeout,
                  port=args.coordinator_port, reuse=args.reuse, rounds=rounds,
                  trace_dir=args.trace_dir if args.profile else None, **launch_kwargs(args))
    return gs, cases, rounds, kwargs


def cmd_run(args: argparse.Namespace, default_file: Path | None = None,
            report: bool = False) -> int:
    from podscale.launch.runner import execute

    gs, cases, _, kwargs = prepare_run(args, default_file)
    name = args.name or "-".join(dict.fromkeys(c.workload for c in cases))
    run_dir = execute(cases, args.out, name, **kwargs)
    wrong = show(run_dir)
    if any(g.settings.traced_iters for g in gs):
        remote = args.trace_dir
        if remote and "://" in remote:
            print(f"# traces written under {remote}; copy them here and run: podscale trace "
                  f"{run_dir} --traces <copy>")
        else:
            trace(run_dir, Path(remote) if remote else None)
    if report:
        cmd_report(run_dir, None, "max")
    print(f"# results: {run_dir}")
    if wrong:
        raise wrong_results(run_dir)
    return 0


def trace(run_dir: Path, traces: Path | None = None) -> None:
    from analysis.traces import load_traces, step_table, stragglers, write_merged
    from analysis.traces import summary as trace_summary

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    loaded = load_traces(run_dir, traces)
    if not loaded:
        raise UsageError(f"{run_dir}: no traces (run with --profile)")
    table = step_table(loaded)
    table.to_csv(run_dir / "traces" / "steps.csv", index=False)
    lag = stragglers(table)
    lag.to_csv(run_dir / "traces" / "stragglers.csv", index=False)
    print(trace_summary(table, lag))
    for path in write_merged(run_dir, loaded):
        print(f"# merged timeline (chrome://tracing, ui.perfetto.dev): {path}")
    print(f"# XProf: tensorboard --logdir {run_dir / 'traces'}  (or: xprof {run_dir / 'traces'})")


def cmd_seed(args: argparse.Namespace) -> int:
    from podscale.frontend.seedcheck import report
    from podscale.launch.runner import execute

    if 1_000_000 % args.devices_per_host:
        raise UsageError(f"1,000,000 rows are not divisible by {args.devices_per_host} devices")
    layout = Layout(args.hosts, args.devices_per_host)
    run_dir = execute([], args.out, "seed", case_timeout=args.case_timeout, mode="seed",
                      layouts=[layout], progress=None, **launch_kwargs(args))
    return report(run_dir)


def cmd_report(run_dir: Path, out: Path | None, across: str, asv: Path | None = None) -> int:
    from analysis.report import write_report

    sections = []
    if asv is not None:
        from analysis.asvresults import history_section

        sections.append(history_section(asv))
    html_path, md_path = write_report(run_dir, out, across, sections)
    print(f"# report: {html_path}")
    print(f"# summary: {md_path}")
    return 0


def cmd_fit(run_dir: Path, out: Path | None = None) -> int:
    """Print the run's latency-bandwidth fits and write them as CSV."""
    from analysis import load_run, summarize
    from analysis.fits import fits, render

    _, samples, cases, _ = load_run(run_dir)
    table = fits(samples, summarize(samples, cases))
    if table.empty:
        raise UsageError(f"{run_dir}: no size sweep to fit (every case needs 2 or more "
                         "sizes at the same other parameters)")
    print(render(table))
    out = out or run_dir / "fits.csv"
    table.to_csv(out, index=False)
    print(f"# written: {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from analysis.compare import compare

    if args.threshold < 0 or not 0 < args.alpha < 1:
        raise UsageError("--threshold must be >= 0 and --alpha within (0, 1)")
    table, notes = compare(args.run_a, args.run_b, threshold=args.threshold, alpha=args.alpha,
                           force=args.force, correction=args.correction, paired=args.paired)
    return write_compare(table, notes, args.run_a, args.run_b, args, args.out)


def write_compare(table, notes: list[str], run_a: Path, run_b: Path,
                  args: argparse.Namespace, out: Path | None = None) -> int:
    """Print and write the comparison (default: RUN_B/compare-<A>.csv/.txt); the exit code
    (1 if a case is slower and --fail-on-regression)."""
    from analysis import fitcompare
    from analysis.compare import render

    text = render(table, notes, run_a.name, run_b.name, args.threshold, args.correction)
    changes = fitcompare.compare_fits(run_a, run_b)
    text += "\n" + fitcompare.render(changes)
    print(text)
    out = out or run_b / f"compare-{run_a.name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    changes.to_csv(out.with_name(out.name + "-fits.csv"), index=False)
    out.with_suffix(".txt").write_text(text + "\n")
    print(f"# written: {out.with_suffix('.csv')} and {out.name}-fits.csv")
    slower = (table["verdict"] == "slower").any()
    return 1 if slower and args.fail_on_regression else 0


def cmd_worker(args: argparse.Namespace) -> int:
    from podscale.worker.host import host_main

    gs, rounds = grids_from_args(args)
    cpu = max(d for g in gs for d in g.devices_per_host) if args.platform == "cpu" else None
    return host_main(gs, args.run_dir, rounds=rounds, gather=args.gather or args.print_run,
                     cpu_devices=cpu, trace_dir=args.trace_dir if args.profile else None,
                     print_run=args.print_run)
