"""The ``podscale`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from podscale.core.errors import PodscaleError, UsageError
from podscale.frontend.ab import ROUNDS as AB_ROUNDS
from podscale.frontend.commands import (
    cmd_compare,
    cmd_fit,
    cmd_list,
    cmd_report,
    cmd_run,
    cmd_seed,
    cmd_worker,
    show,
    trace,
)
from podscale.frontend.gridargs import STUDY_FILE, add_grid_args, add_launcher_args


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def _verdict_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threshold", type=float, default=0.05,
                   help="relative change that counts (default 0.05)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--correction", choices=["bh", "holm", "none"], default="bh",
                   help="adjust p-values for the many cases tested at once: "
                        "Benjamini-Hochberg (default), Holm, or none")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any case is slower")
    p.add_argument("--paired", action="store_true",
                   help="runs of one podscale ab: a paired t-test, round i of A with round "
                        "i of B (default: Welch's t-test over the rounds)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="podscale", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run workloads over a grid of parameters and layouts")
    run.add_argument("workloads", nargs="?", default=None,
                     help="comma-separated workloads: built-in names (podscale list), "
                          "path/to/file.py:NAME or pkg.module:NAME (or --suite-file)")
    add_grid_args(run)
    run.add_argument("--report", action="store_true",
                     help="write the report at the end (RUN/report/index.html)")
    rep = sub.add_parser("replay", help="a real step's collectives: listed from its "
                                        "optimized HLO, each replayed alone, its share of "
                                        "the step, and predictions for larger n")
    rep.add_argument("workloads", help="one workload: file.py:NAME, pkg.module:NAME or a "
                                       "built-in name (one case: one layout, one value each)")
    add_grid_args(rep)
    rep.add_argument("--predict", default="64,256",
                     help="participant counts to predict the step's communication at")
    lst = sub.add_parser("list", help="every workload with its parameters and defaults")
    lst.add_argument("workloads", nargs="?", default=None,
                     help="also describe these (file.py:NAME, pkg.module:NAME)")
    study = sub.add_parser("study", help="the default local scaling study and its report "
                                         "(grid: suites/study.toml)")
    add_grid_args(study)
    seed = sub.add_parser("seed", help="run the reference program (listing 7.30) and check it")
    seed.add_argument("--hosts", type=int, default=2)
    seed.add_argument("--devices-per-host", type=int, default=4)
    seed.add_argument("--out", type=Path, default=Path("results"))
    seed.add_argument("--case-timeout", type=float, default=300.0)
    add_launcher_args(seed)
    report = sub.add_parser("report", help="write an HTML report and a Markdown summary")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--out", type=Path, default=None, help="default: RUN_DIR/report")
    report.add_argument("--asv", type=Path, default=None, metavar="RESULTS_DIR",
                        help="add asv history from this results dir (e.g. .asv/results)")
    report.add_argument("--across", choices=["max", "mean", "min"], default="max",
                        help="aggregate over processes per iteration (default: max)")
    fit = sub.add_parser("fit", help="latency-bandwidth fits t = alpha + S/beta per size "
                                     "sweep (writes RUN_DIR/fits.csv)")
    fit.add_argument("run_dir", type=Path)
    fit.add_argument("--out", type=Path, default=None, help="default: RUN_DIR/fits.csv")
    compare = sub.add_parser("compare", help="regression table between two runs")
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    _verdict_args(compare)
    compare.add_argument("--force", action="store_true",
                         help="compare even when the environments differ")
    compare.add_argument("--out", type=Path, default=None,
                         help="write the table here (default: RUN_B/compare-<A>.csv/.txt)")
    ab = sub.add_parser("ab", help="one grid as two arms (A, B) whose launches alternate in "
                                   "time (drift falls on both alike), then compared")
    ab.add_argument("workloads", help="comma-separated workloads, as for podscale run")
    ab.add_argument("--env-a", action="append", default=None, metavar="NAME=VALUE",
                    help="environment variable arm A's processes set (repeatable)")
    ab.add_argument("--env-b", action="append", default=None, metavar="NAME=VALUE",
                    help="environment variable arm B's processes set (repeatable), e.g. "
                         "XLA_FLAGS=...; with none on either side: an A/A run")
    add_grid_args(ab, rounds=AB_ROUNDS)
    _verdict_args(ab)

    host = sub.add_parser("worker", help="run on every host of a cluster job (mpirun, srun, "
                                         "TPU VMs, Kubernetes): join it and run the grid")
    host.add_argument("--run-dir", type=Path, required=True,
                      help="the run directory (same path on every host; shared, or see --gather)")
    host.add_argument("--gather", action="store_true",
                      help="process 0 gathers every process's records (no shared filesystem)")
    host.add_argument("--print-run", dest="print_run", action="store_true",
                      help="with --gather (implied): process 0 ends its output with the run "
                           "as a checksummed text block, for podscale collect LOG (jobs whose "
                           "only way out is their log)")
    host.add_argument("workloads", nargs="?", default=None,
                      help="comma-separated workloads, as for podscale run (or --suite-file)")
    add_grid_args(host)
    tpu = sub.add_parser("tpu", help="a TPU pod study: podscale worker on every VM (gcloud "
                                     "ssh), the run copied back (gcloud scp), its report here")
    tpu.add_argument("--tpu", required=True, help="TPU VM name")
    tpu.add_argument("--zone", required=True)
    tpu.add_argument("--project", default=None)
    tpu.add_argument("--run-dir", default=None,
                     help="run directory on the VMs (default /tmp/podscale/<stamp>-tpu)")
    tpu.add_argument("--out", default="results",
                     help="where the run is copied to here (default: results)")
    tpu.add_argument("--setup", default=None,
                     help="shell command run first on each worker, e.g. 'cd ~/podscale'")
    tpu.add_argument("--dry-run", action="store_true",
                     help="print every command it would run (quoted), run none")
    tpu.add_argument("worker_args", nargs=argparse.REMAINDER,
                     help="after --: arguments for podscale worker (grid options)")
    k8s = sub.add_parser("k8s", help="print a Kubernetes Indexed Job running podscale worker")
    k8s.add_argument("--hosts", type=int, required=True)
    k8s.add_argument("--image", required=True)
    k8s.add_argument("--name", default="podscale")
    k8s.add_argument("--namespace", default="default")
    k8s.add_argument("--run-dir", default=None,
                     help="run directory in process 0's container (default /results/NAME "
                          "with --results-pvc, else /tmp/podscale/NAME)")
    k8s.add_argument("--results-pvc", dest="results_pvc", default=None, metavar="CLAIM",
                     help="mount this PersistentVolumeClaim at /results for the gathered run; "
                          "without it process 0 prints the run at the end of its log "
                          "(podscale collect LOG)")
    k8s.add_argument("--gpus-per-host", type=int, default=0)
    k8s.add_argument("worker_args", nargs=argparse.REMAINDER)
    sbatch = sub.add_parser("sbatch", help="print an sbatch script running podscale via srun")
    sbatch.add_argument("--nodes", type=int, required=True)
    sbatch.add_argument("--time", default="01:00:00")
    sbatch.add_argument("--partition", default=None)
    sbatch.add_argument("--gpus-per-node", type=int, default=None)
    sbatch.add_argument("run_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for podscale run (workloads, grid options)")
    collect = sub.add_parser("collect", help="a run directory back from a job's log (the "
                                             "block podscale worker --print-run printed)")
    collect.add_argument("log", help="the log file (e.g. kubectl logs of process 0), or -")
    collect.add_argument("--out", type=Path, default=Path("results"))
    collect.add_argument("--no-report", dest="report", action="store_false",
                         help="do not write the report")
    selfb = sub.add_parser("bench-self", help="measure podscale itself: harness overhead, "
                                               "sweep turnaround, scale, memory ceiling")
    selfb.add_argument("--out", type=Path, default=None,
                       help="write the figures as JSON (default: results/bench-self-<stamp>.json)")
    selfb.add_argument("--max-processes", type=int, default=128,
                       help="the scale stage doubles the process count up to this")
    selfb.add_argument("--only", default=None, metavar="STAGE,...",
                       help="run only these stages: harness, turnaround, memory, scale, report, "
                            "verdicts, asv, asv-detect")
    trace = sub.add_parser("trace", help="parse a run's profiler traces; merged timeline")
    trace.add_argument("run_dir", type=Path)
    trace.add_argument("--traces", type=Path, default=None,
                       help="where the XSpace files are (a local copy of --trace-dir); "
                            "default RUN_DIR/traces")
    show = sub.add_parser("show", help="print the result table of a run")
    show.add_argument("run_dir", type=Path)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "run":
            if args.workloads is None and args.suite_file is None:
                raise UsageError("name the workloads (e.g. dot,psum; podscale list) or give "
                                 "--suite-file")
            return cmd_run(args, report=args.report)
        if args.command == "list":
            return cmd_list(args.workloads)
        if args.command == "study":
            args.name = args.name or "study"
            return cmd_run(args, STUDY_FILE, report=True)
        if args.command == "seed":
            return cmd_seed(args)
        if args.command == "report":
            return cmd_report(args.run_dir, args.out, args.across, args.asv)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "fit":
            return cmd_fit(args.run_dir, args.out)
        if args.command == "ab":
            from podscale.frontend.ab import cmd_ab

            return cmd_ab(args)
        if args.command == "worker":
            return cmd_worker(args)
        if args.command == "replay":
            from podscale.frontend.replay import cmd_replay

            return cmd_replay(args)
        if args.command in ("tpu", "k8s", "sbatch", "collect"):
            from podscale.frontend import pods

            return getattr(pods, f"cmd_{args.command}")(args)
        if args.command == "bench-self":
            from datetime import datetime

            from podscale.frontend.selfbench import STAGES, run_all

            only = tuple(w.strip() for w in (args.only or ",".join(STAGES)).split(",")
                         if w.strip())
            bad = [w for w in only if w not in STAGES]
            if bad or not only:
                raise UsageError(f"unknown bench-self stage {bad[0] if bad else ''!r} "
                                 f"(known: {', '.join(STAGES)})")
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            run_all(args.out or Path("results") / f"bench-self-{stamp}.json",
                    max_processes=args.max_processes, only=only)
            return 0
        if args.command == "trace":
            trace(args.run_dir, args.traces)
            return 0
        show(args.run_dir)
        return 0
    except PodscaleError as exc:
        print(f"podscale: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("podscale: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line, the traceback on request
        if os.environ.get("PODSCALE_DEBUG"):
            raise
        print(f"podscale: internal error: {type(exc).__name__}: {exc} "
              "(set PODSCALE_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
