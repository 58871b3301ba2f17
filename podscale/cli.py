"""The ``podscale`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from podscale.cases import (
    DTYPES,
    SUITES,
    VARIANTS,
    SuiteSpec,
    parse_int_list,
    parse_names,
    parse_size,
)
from podscale.errors import PodscaleError, UsageError

MAX_LOCAL_PROCESSES = 256
STUDY_FILE = Path(__file__).resolve().parents[1] / "suites" / "study.toml"
GRID_DEFAULTS = {"suites": "dot,psum", "sizes": "4K,64K,1M", "hosts": "1,2",
                 "devices_per_host": "1,2", "dtypes": "float32", "variants": "pmap,shard_map",
                 "iters": 20, "warmup": 3, "sync": "each", "traced_iters": 3}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def _grid_args(p: argparse.ArgumentParser) -> None:
    """Grid options; None means: from --suite-file, else GRID_DEFAULTS."""
    p.add_argument("--suite-file", type=Path, default=None,
                   help="TOML parameter grid (see suites/study.toml); options below override")
    p.add_argument("--sizes", help="elements per process, comma-separated (K/M/G or 2**N)")
    p.add_argument("--hosts", help="process (simulated host) counts, e.g. 1,2,4")
    p.add_argument("--devices-per-host", dest="devices_per_host",
                   help="CPU devices per process, e.g. 1,2,4")
    p.add_argument("--dtypes", help=f"of {', '.join(DTYPES)}")
    p.add_argument("--variants", help=f"of {', '.join(VARIANTS)}")
    p.add_argument("--iters", type=int)
    p.add_argument("--warmup", type=int)
    p.add_argument("--sync", choices=["each", "once"],
                   help="barrier before each timed iteration (default), or once before the loop")
    p.add_argument("--profile", action="store_true",
                   help="after the timed iterations, trace a separate pass per process")
    p.add_argument("--traced-iters", dest="traced_iters", type=int,
                   help="iterations in the traced pass (default 3)")
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--name", default=None, help="run name (default: the suites)")
    p.add_argument("--case-timeout", type=float, default=300.0,
                   help="stop the run when no process makes progress for this many seconds")
    p.add_argument("--coordinator-port", type=int, default=0,
                   help="coordinator port on 127.0.0.1 (default: any free port; a busy one "
                        "is replaced by a free one)")
    p.add_argument("--no-reuse", dest="reuse", action="store_false",
                   help="start fresh processes for every layout instead of running smaller "
                        "devices-per-host layouts on device subsets of the same processes")
    _launcher_args(p)


def _launcher_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--launcher", choices=["local", "mpirun", "srun"], default="local",
                   help="local: one process per simulated host on this machine; mpirun/srun: "
                        "that launcher starts the workers, which auto-detect the cluster")
    p.add_argument("--launcher-args", default="",
                   help="extra words for mpirun/srun, e.g. \"--mca btl_tcp_if_include lo\"")
    p.add_argument("--platform", choices=["cpu", "auto"], default=None,
                   help="cpu: simulate --devices-per-host CPU devices per process with gloo "
                        "(default with --launcher local); auto: whatever JAX finds")


def _launch_kwargs(args: argparse.Namespace) -> dict:
    import shlex

    platform = args.platform or ("cpu" if args.launcher == "local" else "auto")
    if args.launcher == "local" and platform != "cpu":
        raise UsageError("the local launcher simulates hosts on the CPU; use --platform cpu")
    try:
        extra = shlex.split(args.launcher_args)
    except ValueError as exc:
        raise UsageError(f"bad --launcher-args: {exc}") from None
    return {"launcher": args.launcher, "launcher_args": extra,
            "simulate_cpu": platform == "cpu"}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="podscale", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run suites over a grid of sizes and device layouts")
    run.add_argument("suites", nargs="?", default=None,
                     help=f"comma-separated suites of: {', '.join(SUITES)} (or --suite-file)")
    _grid_args(run)
    study = sub.add_parser("study", help="the default local scaling study and its report "
                                         "(grid: suites/study.toml)")
    _grid_args(study)
    seed = sub.add_parser("seed", help="run the reference program (listing 7.30) and check it")
    seed.add_argument("--hosts", type=int, default=2)
    seed.add_argument("--devices-per-host", type=int, default=4)
    seed.add_argument("--out", type=Path, default=Path("results"))
    seed.add_argument("--case-timeout", type=float, default=300.0)
    _launcher_args(seed)
    report = sub.add_parser("report", help="write an HTML report and a Markdown summary")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--out", type=Path, default=None, help="default: RUN_DIR/report")
    report.add_argument("--asv", type=Path, default=None, metavar="RESULTS_DIR",
                        help="add asv history from this results dir (e.g. .asv/results)")
    report.add_argument("--across", choices=["max", "mean", "min"], default="max",
                        help="aggregate over processes per iteration (default: max)")
    compare = sub.add_parser("compare", help="regression table between two runs")
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    compare.add_argument("--threshold", type=float, default=0.05,
                         help="relative change that counts (default 0.05)")
    compare.add_argument("--alpha", type=float, default=0.05, help="significance level")
    compare.add_argument("--force", action="store_true",
                         help="compare even when the environments differ")
    compare.add_argument("--out", type=Path, default=None,
                         help="write the table here (default: RUN_B/compare-<A>.csv/.txt)")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when any case is slower")
    host = sub.add_parser("worker", help="run on every host of a cluster job (mpirun, srun, "
                                         "TPU VMs, Kubernetes): join it and run the grid")
    host.add_argument("--run-dir", type=Path, required=True,
                      help="the run directory (same path on every host; shared, or see --gather)")
    host.add_argument("--gather", action="store_true",
                      help="process 0 gathers every process's records (no shared filesystem)")
    _grid_args(host)
    tpu = sub.add_parser("tpu", help="run `podscale worker` on every TPU VM of a pod via gcloud")
    tpu.add_argument("--tpu", required=True, help="TPU VM name")
    tpu.add_argument("--zone", required=True)
    tpu.add_argument("--project", default=None)
    tpu.add_argument("--run-dir", default="results/tpu-run")
    tpu.add_argument("--setup", default=None,
                     help="shell command run first on each worker, e.g. 'cd ~/podscale'")
    tpu.add_argument("--dry-run", action="store_true", help="print the gcloud command only")
    tpu.add_argument("worker_args", nargs=argparse.REMAINDER,
                     help="after --: arguments for podscale worker (grid options)")
    k8s = sub.add_parser("k8s", help="print a Kubernetes Indexed Job running podscale worker")
    k8s.add_argument("--hosts", type=int, required=True)
    k8s.add_argument("--image", required=True)
    k8s.add_argument("--name", default="podscale")
    k8s.add_argument("--namespace", default="default")
    k8s.add_argument("--run-dir", default="/results/podscale-run")
    k8s.add_argument("--gpus-per-host", type=int, default=0)
    k8s.add_argument("worker_args", nargs=argparse.REMAINDER)
    sbatch = sub.add_parser("sbatch", help="print an sbatch script running podscale via srun")
    sbatch.add_argument("--nodes", type=int, required=True)
    sbatch.add_argument("--time", default="01:00:00")
    sbatch.add_argument("--partition", default=None)
    sbatch.add_argument("--gpus-per-node", type=int, default=None)
    sbatch.add_argument("run_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for podscale run (suites and grid options)")
    selfb = sub.add_parser("bench-self", help="measure podscale itself: harness overhead, "
                                               "sweep turnaround, scale, memory ceiling")
    selfb.add_argument("--out", type=Path, default=None,
                       help="write the figures as JSON (default: results/bench-self-<stamp>.json)")
    selfb.add_argument("--max-processes", type=int, default=32)
    trace = sub.add_parser("trace", help="parse a run's profiler traces; merged timeline")
    trace.add_argument("run_dir", type=Path)
    show = sub.add_parser("show", help="print the result table of a run")
    show.add_argument("run_dir", type=Path)
    return parser


def grid(args: argparse.Namespace, default_file: Path | None = None) -> dict:
    """Grid values: command line, else the suite file, else GRID_DEFAULTS."""
    from podscale import suitefile

    path = args.suite_file or default_file
    values = dict(GRID_DEFAULTS, **(suitefile.load(path) if path else {}))
    for key in GRID_DEFAULTS:
        if getattr(args, key, None) is not None:
            values[key] = getattr(args, key)
    return values


def spec_from_args(args: argparse.Namespace, default_file: Path | None = None) -> SuiteSpec:
    g = grid(args, default_file)
    if args.profile and g["traced_iters"] < 1:
        raise UsageError(f"--traced-iters must be >= 1 with --profile, got {g['traced_iters']}")
    return SuiteSpec(
        suites=parse_names(g["suites"], "suite", SUITES),
        sizes=[parse_size(s) for s in str(g["sizes"]).split(",") if s.strip()],
        hosts=parse_int_list(str(g["hosts"]), "hosts"),
        devices_per_host=parse_int_list(str(g["devices_per_host"]), "devices-per-host"),
        dtypes=parse_names(g["dtypes"], "dtype", DTYPES),
        variants=parse_names(g["variants"], "variant", VARIANTS),
        iters=g["iters"],
        warmup=g["warmup"],
        extra={
            "sync_each": g["sync"] == "each",
            "traced_iters": g["traced_iters"] if args.profile else 0,
        },
    )


def show(run_dir: Path) -> None:
    from analysis import load_run, summarize
    from analysis.table import render

    manifest, samples, cases, _ = load_run(run_dir)
    print(f"# run {manifest.run_id} ({manifest.status})")
    if cases.empty:
        print("# no case completed")
        return
    print(render(summarize(samples, cases)))


def cmd_run(args: argparse.Namespace, default_file: Path | None = None,
            report: bool = False) -> int:
    from podscale.cases import expand
    from podscale.runner import execute

    spec = spec_from_args(args, default_file)
    expand(spec)  # validate every case before starting any process
    if not 0 <= args.coordinator_port < 65536:
        raise UsageError(f"bad --coordinator-port {args.coordinator_port}")
    if args.case_timeout <= 0:
        raise UsageError(f"--case-timeout must be > 0, got {args.case_timeout:g}")
    if max(spec.hosts) > MAX_LOCAL_PROCESSES:
        raise UsageError(f"{max(spec.hosts)} hosts: the local launcher starts at most "
                         f"{MAX_LOCAL_PROCESSES} processes")
    run_dir = execute(spec, args.out, args.name or "-".join(spec.suites),
                      case_timeout=args.case_timeout, port=args.coordinator_port,
                      reuse=args.reuse, **_launch_kwargs(args))
    show(run_dir)
    if spec.extra.get("traced_iters"):
        trace(run_dir)
    if report:
        cmd_report(run_dir, None, "max")
    print(f"# results: {run_dir}")
    return 0


def trace(run_dir: Path) -> None:
    from analysis.traces import load_traces, step_table, stragglers, write_merged
    from analysis.traces import summary as trace_summary

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: no such run directory")
    loaded = load_traces(run_dir)
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
    from podscale.runner import execute
    from podscale.seedcheck import report

    if 1_000_000 % args.devices_per_host:
        raise UsageError(f"1,000,000 rows are not divisible by {args.devices_per_host} devices")
    spec = SuiteSpec(suites=["dot"], hosts=[args.hosts], devices_per_host=[args.devices_per_host])
    run_dir = execute(spec, args.out, "seed", case_timeout=args.case_timeout, mode="seed",
                      progress=lambda m: None, **_launch_kwargs(args))
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


def cmd_compare(args: argparse.Namespace) -> int:
    from analysis.compare import compare, render

    if args.threshold < 0 or not 0 < args.alpha < 1:
        raise UsageError("--threshold must be >= 0 and --alpha within (0, 1)")
    table, notes = compare(args.run_a, args.run_b, threshold=args.threshold, alpha=args.alpha,
                           force=args.force)
    text = render(table, notes, args.run_a.name, args.run_b.name, args.threshold)
    print(text)
    out = args.out or args.run_b / f"compare-{args.run_a.name}"
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".txt").write_text(text + "\n")
    print(f"# written: {out.with_suffix('.csv')}")
    slower = (table["verdict"] == "slower").any()
    return 1 if slower and args.fail_on_regression else 0


def _rest(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else words


def cmd_worker(args: argparse.Namespace) -> int:
    from podscale.worker import host_main

    spec = spec_from_args(args)
    cpu = max(spec.devices_per_host) if args.platform == "cpu" else None
    return host_main(spec, args.run_dir, gather=args.gather, cpu_devices=cpu)


def cmd_generate(args: argparse.Namespace) -> int:
    import shlex
    import shutil
    import subprocess

    from podscale import generators

    if args.command == "sbatch":
        if args.nodes < 1:
            raise UsageError("--nodes must be >= 1")
        print(generators.sbatch_script(args.nodes, _rest(args.run_args), time_limit=args.time,
                                       partition=args.partition,
                                       devices_per_host=args.gpus_per_node), end="")
        return 0
    if args.command == "k8s":
        if args.hosts < 1:
            raise UsageError("--hosts must be >= 1")
        res = {"nvidia.com/gpu": args.gpus_per_host} if args.gpus_per_host else None
        print(generators.k8s_manifest(args.name, args.image, args.hosts, args.run_dir,
                                      _rest(args.worker_args), namespace=args.namespace,
                                      resources=res), end="")
        return 0
    argv = generators.tpu_command(args.tpu, args.zone, args.project, args.run_dir,
                                  _rest(args.worker_args), args.setup)
    if args.dry_run:
        print(shlex.join(argv))
        return 0
    if shutil.which("gcloud") is None:
        raise UsageError("gcloud not found on PATH (use --dry-run to print the command)")
    return subprocess.call(argv)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "run":
            if args.suites is None and args.suite_file is None:
                raise UsageError("name the suites (e.g. dot,psum) or give --suite-file")
            return cmd_run(args)
        if args.command == "study":
            args.name = args.name or "study"
            return cmd_run(args, STUDY_FILE, report=True)
        if args.command == "seed":
            return cmd_seed(args)
        if args.command == "report":
            return cmd_report(args.run_dir, args.out, args.across, args.asv)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "worker":
            return cmd_worker(args)
        if args.command in ("tpu", "k8s", "sbatch"):
            return cmd_generate(args)
        if args.command == "bench-self":
            from datetime import datetime

            from podscale.selfbench import run_all

            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            run_all(args.out or Path("results") / f"bench-self-{stamp}.json",
                    max_processes=args.max_processes)
            return 0
        if args.command == "trace":
            trace(args.run_dir)
            return 0
        show(args.run_dir)
        return 0
    except PodscaleError as exc:
        print(f"podscale: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("podscale: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
