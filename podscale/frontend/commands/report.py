"""``podscale report RUN``: Findings, plots and tables as HTML, and a Markdown summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="write an HTML report and a Markdown summary",
                       description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN", help="a run directory")
    p.add_argument("--out", type=Path, default=None,
                   help="folder to write to (default: RUN/report)")
    p.add_argument("--asv", type=Path, default=None, metavar="RESULTS_DIR",
                   help="add asv history from this results folder (e.g. .asv/results)")
    p.add_argument("--across", choices=["max", "mean", "min"], default="max",
                   help="aggregate over processes per iteration")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.actions import write_report

    return write_report(args.run_dir, args.out, args.across, args.asv)
