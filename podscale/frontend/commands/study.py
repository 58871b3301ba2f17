"""``podscale study``: the default local scaling study and its report."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import STUDY_FILE, add_grid_args, prepared_of


def register(sub: Subparsers) -> None:
    p = sub.add_parser("study", help="the default local scaling study and its report "
                                     "(grid: podscale/suites/study.toml)", description=__doc__)
    add_grid_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.actions import run_grid

    return run_grid(prepared_of(args, STUDY_FILE), args.out, args.name or "study",
                    trace_dir=args.trace_dir, report=True)
