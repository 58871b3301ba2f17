"""``podscale run``: run workloads over a grid of parameters and layouts."""

from __future__ import annotations

import argparse

from podscale.core.errors import UsageError
from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import add_format, add_grid_args, prepared_of


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help="run workloads over a grid of parameters and layouts",
                       description=__doc__)
    p.add_argument("workloads", nargs="?", default=None,
                   help="comma-separated workloads: built-in names (podscale list), "
                        "path/to/file.py:NAME or pkg.module:NAME (or --suite-file)")
    add_grid_args(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print each launch and each process's environment (its share of "
                        "this machine's chips), and start nothing")
    p.add_argument("--report", action="store_true",
                   help="write the report at the end (RUN/report/index.html)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.actions import run_grid

    if args.workloads is None and args.suite_file is None:
        raise UsageError("name the workloads (e.g. dot,psum; podscale list) or give "
                         "--suite-file")
    prepared = prepared_of(args)
    if args.dry_run:
        from podscale.launch.dryrun import print_dry_run

        return print_dry_run(prepared.cases, prepared.options, prepared.reuse)
    return run_grid(prepared, args.out, args.name, fmt=args.format,
                    trace_dir=args.trace_dir, report=args.report)
