"""``podscale worker``: what every host of a cluster job runs (mpirun, srun, TPU VMs,
Kubernetes): join the job with ``jax.distributed.initialize()`` and run the grid."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core import defaults
from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import add_grid_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("worker", help="run on every host of a cluster job (mpirun, srun, "
                                      "TPU VMs, Kubernetes): join it and run the grid",
                       description=__doc__)
    p.add_argument("--run-dir", type=Path, required=True,
                   help="the run directory (same path on every host; shared, or see --gather)")
    p.add_argument("--gather", action="store_true",
                   help="process 0 gathers every process's records (no shared filesystem)")
    p.add_argument("--print-run", dest="print_run", action="store_true",
                   help="with --gather (implied): process 0 ends its output with the run "
                        "as a checksummed text block, for podscale collect LOG (jobs whose "
                        "only way out is their log)")
    p.add_argument("workloads", nargs="?", default=None,
                   help="comma-separated workloads, as for podscale run (or --suite-file)")
    add_grid_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.core.parsing import parse_int_list
    from podscale.frontend.commands.gridargs import grids_from_args
    from podscale.worker.host import host_main

    if args.run_dir.exists() and not args.run_dir.is_dir():
        from podscale.core.errors import UsageError

        raise UsageError(f"--run-dir {args.run_dir} is a file, not a directory")
    _refuse_ignored(args)
    if args.platform in ("tpu", "gpu"):  # JAX takes that platform, or fails loudly
        import os

        from podscale.launch.platform import require

        os.environ["JAX_PLATFORMS"] = require(args.platform)
    gs, rounds = grids_from_args(args)
    cpu = max(d for g in gs for d in g.devices_per_host) if args.platform == "cpu" else None
    asked = tuple(parse_int_list(args.hosts, "hosts")) if args.hosts else None
    if asked and len(set(asked)) > 1:
        from podscale.core.errors import UsageError

        raise UsageError(f"--hosts {args.hosts}: a job has one process count, and podscale "
                         "worker runs the cases of its own (leave --hosts out)")
    return host_main(gs, args.run_dir, rounds=rounds, gather=args.gather or args.print_run,
                     cpu_devices=cpu, trace_dir=args.trace_dir if args.profile else None,
                     print_run=args.print_run, hosts=asked, case_timeout=args.case_timeout,
                     fit_devices=args.devices_per_host is None)


#: options podscale worker shares with podscale run but has no use for: the job's
#: launcher started it, its run directory is --run-dir, its coordinator the cluster's
IGNORED = {"out": ("--out", defaults.OUT), "name": ("--name", None),
           "launcher": ("--launcher", "local"), "launcher_args": ("--launcher-args", ""),
           "coordinator_port": ("--coordinator-port", 0), "reuse": ("--no-reuse", True),
           "force": ("--force", False)}


def _refuse_ignored(args: argparse.Namespace) -> None:
    """A worker option that would be ignored is refused in one line, not dropped."""
    from podscale.core.errors import UsageError

    given = [flag for dest, (flag, default) in IGNORED.items()
             if getattr(args, dest, default) != default]
    if given:
        raise UsageError(f"{', '.join(given)}: podscale run's, not podscale worker's (the "
                         "job's launcher starts each worker; its records go to --run-dir)")
