"""``podscale k8s``: print a Kubernetes headless Service and Indexed Job running
``podscale worker`` on every pod; pod 0 is the coordinator."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("k8s", help="print a Kubernetes Indexed Job running podscale worker",
                       description=__doc__)
    p.add_argument("--hosts", type=int, required=True, help="pods (processes)")
    p.add_argument("--image", required=True, help="container image with podscale installed")
    p.add_argument("--name", default="podscale", help="Job and Service name")
    p.add_argument("--namespace", default="default", help="Kubernetes namespace")
    p.add_argument("--gpus-per-host", type=int, default=0,
                   help="nvidia.com/gpu resources per pod (0: none requested)")
    add_pod_args(p)
    p.set_defaults(func=run)


def add_pod_args(p: argparse.ArgumentParser) -> None:
    """What every pod of a Kubernetes job runs, and where its run lands (``k8s``,
    ``jobset``, ``xpk``): the claim, the run directory, a program of the user's, the
    words after ``--``, ``--attach-args``."""
    from podscale.frontend.commands.captureargs import add_attach_args

    p.add_argument("--run-dir", default=None,
                   help="run directory in process 0's container (default: /results/NAME "
                        "with --results-pvc, else /tmp/podscale/NAME)")
    p.add_argument("--results-pvc", dest="results_pvc", default=None, metavar="CLAIM",
                   help="mount this PersistentVolumeClaim at /results for the gathered run; "
                        "without it process 0 prints the run at the end of its log "
                        "(podscale collect LOG)")
    p.add_argument("--program", default=None, metavar="SCRIPT",
                   help="run this program of yours under podscale attach on every pod (a "
                        "path in the image; needs --results-pvc) instead of podscale "
                        "worker; the words after -- are its own")
    p.add_argument("worker_args", nargs=argparse.REMAINDER,
                   help="after --: arguments for podscale worker (workloads, grid options)")
    add_attach_args(p)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.commands.jobwords import job_of
    from podscale.frontend.pods import k8s

    words, attach, _ = job_of("worker", args.worker_args, args.program, args.attach_args,
                              hosts=args.hosts)
    return k8s(args.name, args.image, args.hosts, words, namespace=args.namespace,
               run_dir=args.run_dir, results_pvc=args.results_pvc,
               gpus_per_host=args.gpus_per_host, program=args.program,
               attach=attach)
