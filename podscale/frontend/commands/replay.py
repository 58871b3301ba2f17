"""``podscale replay WORKLOAD``: a real step's collectives, listed from its optimized HLO,
each replayed alone, their share of the step, and predictions for larger n."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers
from podscale.frontend.gridargs import add_grid_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="a real step's collectives: listed from its "
                                      "optimized HLO, each replayed alone, its share of "
                                      "the step, and predictions for larger n",
                       description=__doc__)
    p.add_argument("workloads", metavar="WORKLOAD",
                   help="one workload: file.py:NAME, pkg.module:NAME or a built-in name "
                        "(one case: one layout, one value each)")
    add_grid_args(p)
    p.add_argument("--predict", default="64,256",
                   help="participant counts to predict the step's communication at")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.core.case import parse_int_list
    from podscale.frontend.actions import prepare_run
    from podscale.frontend.replay import check_predict, replay

    predict = parse_int_list(args.predict, "--predict")
    check_predict(predict)  # before the grid: the option's own fault first
    return replay(prepare_run(args), args.out, args.name, predict)
