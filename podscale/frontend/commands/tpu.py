"""``podscale tpu``: a study on a TPU VM pod: ``podscale worker --gather`` on every VM
(gcloud ssh), process 0's run copied back (gcloud scp), its report written here."""

from __future__ import annotations

import argparse

from podscale.core import defaults
from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("tpu", help="a TPU pod study: podscale worker on every VM (gcloud "
                                   "ssh), the run copied back (gcloud scp), its report here",
                       description=__doc__)
    p.add_argument("--tpu", required=True, help="TPU VM name")
    p.add_argument("--zone", required=True, help="the TPU's zone, e.g. us-central2-b")
    p.add_argument("--project", default=None, help="Google Cloud project (default: gcloud's)")
    p.add_argument("--run-dir", default=None,
                   help="run directory on the VMs (default: /tmp/podscale/<stamp>-tpu)")
    p.add_argument("--out", default=str(defaults.OUT),
                   help="where the run is copied to here")
    p.add_argument("--setup", default=None,
                   help="shell command run first on each worker, e.g. 'cd ~/podscale'")
    p.add_argument("--dry-run", action="store_true",
                   help="print every command it would run (quoted), run none")
    p.add_argument("--program", default=None, metavar="SCRIPT",
                   help="run this program of yours under podscale attach on every VM (a "
                        "path on the VMs) instead of podscale worker; the words after -- "
                        "are its own")
    p.add_argument("worker_args", nargs=argparse.REMAINDER,
                   help="after --: arguments for podscale worker (grid options)")
    from podscale.frontend.commands.captureargs import add_attach_args

    add_attach_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.commands.jobwords import job_of
    from podscale.frontend.pods import tpu

    words, attach, _ = job_of("worker", args.worker_args, args.program, args.attach_args)
    return tpu(args.tpu, args.zone, words, project=args.project,
               run_dir=args.run_dir, out=args.out, setup=args.setup, dry_run=args.dry_run,
               program=args.program, attach=attach)
