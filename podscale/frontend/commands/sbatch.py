"""``podscale sbatch``: print a Slurm batch script that runs ``podscale run --launcher
srun --report`` inside the allocation."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("sbatch", help="print an sbatch script running podscale via srun",
                       description=__doc__)
    p.add_argument("--nodes", type=int, required=True, help="nodes to allocate")
    p.add_argument("--time", default="01:00:00", help="Slurm time limit")
    p.add_argument("--partition", default=None, help="Slurm partition (default: Slurm's)")
    p.add_argument("--gpus-per-node", type=int, default=None,
                   help="GPUs per node to request (default: none requested)")
    p.add_argument("--program", default=None, metavar="SCRIPT",
                   help="run this program of yours under podscale attach on every node "
                        "instead of podscale run; the words after -- are its own")
    p.add_argument("--run-dir", default=None,
                   help="with --program: the run directory's base on the shared filesystem "
                        "(default: results/<script>-slurm; the job id is appended)")
    p.add_argument("run_args", nargs=argparse.REMAINDER,
                   help="after --: arguments for podscale run (workloads, grid options)")
    from podscale.frontend.commands.captureargs import add_attach_args

    add_attach_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.commands.jobwords import job_of
    from podscale.frontend.pods import sbatch

    words, attach, replay = job_of("run", args.run_args, args.program, args.attach_args,
                                   nodes=args.nodes)
    return sbatch(args.nodes, words, time_limit=args.time, partition=args.partition,
                  gpus_per_node=args.gpus_per_node, program=args.program,
                  run_dir=args.run_dir, attach=attach, replay=replay)
