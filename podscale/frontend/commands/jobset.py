"""``podscale jobset``: a multi-slice TPU job on GKE, as a JobSet (``kubectl apply -f``;
``podscale xpk`` prints the ``xpk workload create`` command that makes one,
:mod:`podscale.launch.jobset`); every pod runs ``podscale worker`` (or ``attach``)."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers


def common(p: argparse.ArgumentParser) -> None:
    """The options ``jobset`` and ``xpk`` share: the slices, their TPU type, the image, the
    run's home, the program; the words after ``--``."""
    p.add_argument("--slices", type=int, required=True, help="TPU slices (one job each)")
    p.add_argument("--hosts", type=int, default=None,
                   help="hosts (pods) per slice: the TPU type's (checked where given)")
    p.add_argument("--tpu-type", dest="tpu_type", required=True,
                   help="each slice's TPU type, e.g. v5p-16, v5litepod-16, v6e-8")
    p.add_argument("--topology", default=None,
                   help="each slice's topology where not the usual one (e.g. 4x4x8)")
    p.add_argument("--image", required=True, help="container image with podscale installed")
    p.add_argument("--name", default="podscale", help="JobSet (workload) name")
    from podscale.frontend.commands.k8s import add_pod_args

    add_pod_args(p)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("jobset", help="print a multi-slice TPU JobSet running podscale "
                                      "worker on every pod", description=__doc__)
    common(p)
    p.add_argument("--namespace", default="default", help="Kubernetes namespace")
    p.set_defaults(func=run, xpk=False)


def run(args: argparse.Namespace) -> int:
    from podscale.core.errors import UsageError
    from podscale.frontend.commands.jobwords import job_of
    from podscale.launch import k8snames
    from podscale.launch.generators import pod_words
    from podscale.launch.jobset import JOB, XPK_JOB, jobset_manifest, tpu_slice, xpk_command

    if args.slices < 1:
        raise UsageError(f"--slices {args.slices}: want 1 or more")
    if args.xpk and (args.results_pvc or args.program):
        raise UsageError(f"podscale xpk {'--results-pvc' if args.results_pvc else '--program'}:"
                         " xpk workload create mounts no PersistentVolumeClaim, so process 0's"
                         " run would stay on its pod's own disk; podscale jobset --results-pvc"
                         " CLAIM prints a JobSet that mounts it (kubectl apply -f), or leave it"
                         " out: the run comes home through process 0's log (podscale collect)")
    tpu = tpu_slice(args.tpu_type, args.topology)
    k8snames.check_jobset(args.name, getattr(args, "namespace", "default"), args.image,
                          args.slices, tpu.hosts, XPK_JOB if args.xpk else JOB,
                          args.results_pvc)
    if args.xpk:
        k8snames.cluster(args.cluster)
        for flag, value in (("--project", args.project), ("--zone", args.zone)):
            if value is not None:
                k8snames.label(value, flag, letter_first=False)
    if args.hosts is not None and args.hosts != tpu.hosts:
        raise UsageError(f"--hosts {args.hosts}: a {tpu.tpu_type} slice ({tpu.topology}, "
                         f"{tpu.chips} chips) has {tpu.hosts} host(s)")
    words, attach, _ = job_of("worker", args.worker_args, args.program, args.attach_args,
                              hosts=tpu.hosts, slices=args.slices)
    run_words, run_dir = pod_words(args.name, words, args.results_pvc, args.run_dir,
                                   [*attach, args.program] if args.program else ())
    if args.xpk:
        print(xpk_command(args.name, args.image, args.slices, tpu, run_words,
                          cluster=args.cluster, project=args.project, zone=args.zone), end="")
    else:
        print(jobset_manifest(args.name, args.image, args.slices, tpu, run_words,
                              namespace=args.namespace, results_pvc=args.results_pvc,
                              run_dir=run_dir), end="")
    return 0
