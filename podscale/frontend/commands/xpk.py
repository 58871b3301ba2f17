"""``podscale xpk``: the ``xpk workload create`` command of a multi-slice TPU job running
``podscale worker`` (or ``attach``) on every pod; xpk writes the JobSet that
``podscale jobset`` prints."""

from __future__ import annotations

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    from podscale.frontend.commands.jobset import common, run

    p = sub.add_parser("xpk", help="print the xpk workload create command of a multi-slice "
                                   "TPU job running podscale worker", description=__doc__)
    common(p)
    p.add_argument("--cluster", required=True, help="the GKE cluster xpk creates it on")
    p.add_argument("--project", default=None, help="Google Cloud project")
    p.add_argument("--zone", default=None, help="the cluster's zone")
    p.set_defaults(func=run, xpk=True)
