"""``podscale trace RUN``: parse a run's profiler traces into per-step tables, stragglers
and a merged timeline (chrome://tracing, Perfetto); open the XSpace files in XProf."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("trace", help="parse a run's profiler traces; merged timeline",
                       description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN", help="a run made with --profile")
    p.add_argument("--traces", type=Path, default=None,
                   help="where the XSpace files are (a local copy of --trace-dir); "
                        "default: RUN/traces")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.tracing import trace

    trace(args.run_dir, args.traces)
    return 0
