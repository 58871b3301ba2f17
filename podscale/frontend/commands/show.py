"""``podscale show RUN``: print the result table of a finished (or failed) run."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("show", help="print the result table of a run", description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN",
                   help="a run directory (results/<stamp>-<name>), finished or not")
    from podscale.frontend.commands.gridargs import add_format

    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.analysis import load_run
    from podscale.core.manifest import run_kind
    from podscale.frontend.actions import show, show_profile

    if run_kind(args.run_dir) == "profile":  # a profiled program, not workloads
        show_profile(args.run_dir, args.format)
        return 0
    show(load_run(args.run_dir), args.format)
    return 0
