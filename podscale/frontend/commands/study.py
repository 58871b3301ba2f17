"""``podscale study``: the default local scaling study and its report."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers
from podscale.frontend.gridargs import STUDY_FILE, add_grid_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("study", help="the default local scaling study and its report "
                                     "(grid: podscale/suites/study.toml)", description=__doc__)
    add_grid_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.actions import run_grid

    args.name = args.name or "study"
    return run_grid(args, STUDY_FILE, report=True)
