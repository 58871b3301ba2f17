"""``podscale replay WORKLOAD``: a real step's collectives, listed from its optimized HLO,
each replayed alone, their share of the step, and predictions for larger n.

``podscale replay RUN``: a run of ``podscale profile`` or of ``podscale attach`` under a
cluster launcher, which saved its step's program at its first capture: each collective of
that step replayed alone on the run's layout (``--rounds`` launches, started by
``--launcher``), beside its time in the captured steps (the interference factor)."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import add_grid_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="a real step's collectives: listed from its "
                                      "optimized HLO, each replayed alone, its share of "
                                      "the step, and predictions for larger n",
                       description=__doc__)
    p.add_argument("workloads", metavar="WORKLOAD|RUN",
                   help="one workload: file.py:NAME, pkg.module:NAME or a built-in name "
                        "(one case: one layout, one value each); or the run directory of "
                        "a profiled program with a capture window")
    add_grid_args(p)
    p.add_argument("--predict", default="64,256",
                   help="participant counts to predict the step's communication at")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.core.parsing import parse_int_list

    if Path(args.workloads).is_dir():
        return profiled(args, Path(args.workloads))
    from podscale.frontend.commands.gridargs import prepared_of
    from podscale.frontend.replay import check_predict, replay

    predict = parse_int_list(args.predict, "--predict")
    check_predict(predict)  # before the grid: the option's own fault first
    return replay(prepared_of(args), args.out, args.name, predict)


#: what a profiled run's replay takes from the run itself, not from the command line
FROM_THE_RUN = ("suite_file", "sizes", "param", "axes", "group_sizes", "hosts",
                "devices_per_host", "local_axes", "dtypes", "variants", "iters", "warmup",
                "sync", "timing", "traced_iters", "trace_dir", "name", "check_elements")


def profiled(args: argparse.Namespace, run_dir: Path) -> int:
    """``podscale replay RUN``: the saved step's collectives alone on the run's layout,
    then the run's step table with the interference factors."""
    from podscale.core import defaults
    from podscale.core.errors import UsageError
    from podscale.frontend.actions import show_profile
    from podscale.frontend.commands.gridargs import launch_options
    from podscale.frontend.profiling import replay_alone, saved_layout

    given = [k for k in FROM_THE_RUN if getattr(args, k, None) not in (None, False, [])]
    if given or args.profile:
        flags = ", ".join("--" + k.replace("_", "-") for k in given + ["profile"] * args.profile)
        raise UsageError(f"podscale replay RUN replays the run's own step on its own layout: "
                         f"leave out {flags}")
    rounds = defaults.ROUNDS if args.rounds is None else args.rounds
    if rounds < 1:
        raise UsageError(f"--rounds must be >= 1, got {rounds}")
    hosts, devices_per_host = saved_layout(run_dir)
    replay_alone(run_dir, hosts, devices_per_host, rounds, launch_options(args), args.force)
    show_profile(run_dir)
    print(f"# run directory: {run_dir}")
    return 0
