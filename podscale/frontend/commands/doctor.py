"""``podscale doctor``: what this machine gives a benchmark, on one screen: JAX and its
runtime packages, the device nodes, what JAX lists (asked in a child process, which then
frees the chips), the platform --platform auto takes, the cluster JAX would join, the TPU
runtime's start-up costs, and each problem with its fix. Exits 1 where the machine has
chips JAX cannot use, else 0."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("doctor", help="what this machine gives a benchmark: JAX, its "
                                      "runtime, the chips, the platform and cluster taken",
                       description=__doc__)
    p.add_argument("--json", action="store_true",
                   help="the same as one JSON object, for scripts")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds JAX may take to list the devices")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from podscale.core import lines
    from podscale.core.errors import UsageError
    from podscale.launch.chips import nodes
    from podscale.launch.doctor import examine

    if not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout}: want seconds > 0")
    nodes()  # a malformed PODSCALE_ACCELERATORS is one line, exit 2
    report = examine(args.timeout)
    if args.json:
        print(json.dumps({"rows": dict(report.rows), "problems": list(report.problems),
                          "unusable": report.unusable}, indent=1))
    else:
        lines.say(report.text())
    return 1 if report.unusable else 0
