"""``podscale bench-self``: measure podscale itself (:mod:`podscale.selfbench`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    from podscale.selfbench import STAGE_NAMES

    p = sub.add_parser("bench-self", help="measure podscale itself: harness overhead, "
                                          "sweep turnaround, scale, memory ceiling, report "
                                          "load, verdicts, asv", description=__doc__)
    p.add_argument("--out", type=Path, default=None,
                   help="write the figures as JSON (default: results/bench-self-<stamp>.json)")
    p.add_argument("--max-processes", type=int, default=128,
                   help="the scale stage doubles the process count up to this")
    p.add_argument("--only", default=None, metavar="STAGE,...",
                   help=f"run only these stages (default: all of {', '.join(STAGE_NAMES)})")
    p.add_argument("--platform", choices=["auto", "cpu", "tpu", "gpu"], default="auto",
                   help="auto (default): the stages that can (methods, study) measure this "
                        "machine's accelerator chips where it has them; cpu: none does. The "
                        "rest always simulate hosts on the CPU")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.selfbench import main

    return main(args.out, args.max_processes, args.only, args.platform)
