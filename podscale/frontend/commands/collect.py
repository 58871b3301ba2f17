"""``podscale collect LOG``: a run directory back from a job's log (the checksummed block
``podscale worker --print-run`` printed), and its report."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core import defaults
from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("collect", help="a run directory back from a job's log (the "
                                       "block podscale worker --print-run printed)",
                       description=__doc__)
    p.add_argument("log", help="the log file (e.g. kubectl logs of process 0), or -")
    p.add_argument("--out", type=Path, default=defaults.OUT,
                   help="folder the run directory is made in")
    p.add_argument("--no-report", dest="report", action="store_false",
                   help="do not write the report")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.pods import collect

    return collect(args.log, args.out, report=args.report)
