"""``podscale study``: the default local scaling study and its report."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import STUDY_FILE, add_grid_args, prepared_of


def register(sub: Subparsers) -> None:
    p = sub.add_parser("study", help="the default local scaling study and its report "
                                     "(grid: podscale/suites/study.toml)", description=__doc__)
    add_grid_args(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print each launch and each process's environment (its share of "
                        "this machine's chips), and start nothing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """The study on this machine's chips where it has some (``study_chips.toml``, its
    device counts up to the machine's), else simulated hosts (``study.toml``)."""
    from podscale.frontend.actions import run_grid
    from podscale.frontend.commands.gridargs import launch_options

    chips = launch_options(args).chips
    study = STUDY_FILE if chips is None else STUDY_FILE.with_name("study_chips.toml")
    prepared = prepared_of(args, study)
    if args.dry_run:
        from podscale.launch.dryrun import print_dry_run

        return print_dry_run(prepared.cases, prepared.options, prepared.reuse)
    return run_grid(prepared, args.out, args.name or "study", trace_dir=args.trace_dir,
                    report=True)
