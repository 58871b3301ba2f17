"""``podscale seed``: the reference program (pmap(vmap(vdot)) and a psum over
per-process vectors, seed 42 + 10*process_index), run as written and checked in float64."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core import defaults
from podscale.core.errors import UsageError
from podscale.core.lines import commented
from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.argtypes import seconds
from podscale.frontend.commands.gridargs import add_launcher_args

#: a seed worker's peak RSS, measured (``seed/process-<i>.json``'s ``peak_rss_mb``): 432-447
#: MB at 2, 4 and 16 processes of 4 devices (2,000,000 x 3 float32 vectors, their float64
#: copies, JAX and the CPU client); the 282 MB assumed before admitted 64 processes here
SEED_MB = 450


def register(sub: Subparsers) -> None:
    p = sub.add_parser("seed", help="run the reference program and check it",
                       description=__doc__)
    p.add_argument("--hosts", type=int, default=None,
                   help=f"processes (default: {defaults.SEED_HOSTS} simulated hosts; 1 on "
                        "this machine's chips)")
    p.add_argument("--devices-per-host", type=int, default=None,
                   help="devices per process, dividing 1,000,000 rows (default: "
                        f"{defaults.SEED_DEVICES_PER_HOST} simulated; every chip of this "
                        "machine's)")
    p.add_argument("--out", type=Path, default=defaults.OUT,
                   help="folder the run directory is made in")
    p.add_argument("--case-timeout", type=seconds, default=defaults.CASE_TIMEOUT,
                   help="stop the run when no process makes progress for this many seconds")
    add_launcher_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.core.case import Layout
    from podscale.frontend.commands.gridargs import launch_options
    from podscale.frontend.seedcheck import report
    from podscale.launch.runner import execute

    options = launch_options(args, program="podscale.worker.seed:main")
    chips = options.chips
    hosts = args.hosts if args.hosts is not None else 1 if chips else defaults.SEED_HOSTS
    devices = args.devices_per_host if args.devices_per_host is not None else \
        chips.count // hosts if chips else defaults.SEED_DEVICES_PER_HOST
    if devices < 1 or 1_000_000 % devices:
        raise UsageError(f"1,000,000 rows are not divisible by {devices} devices")
    layout = Layout(hosts, devices)
    from podscale.launch.fitting import check_processes

    check_processes(hosts, devices, options, force=args.force, process_mb=SEED_MB,
                    basis=f"{SEED_MB} MB per seed process, measured")
    if options.note:  # no progress is printed: said here, once
        print(commented(f"note: {options.note}"), flush=True)
    run_dir = execute([], args.out, "seed", options, mode="seed", layouts=[layout],
                      progress=None)
    return report(run_dir)
