"""``podscale ab``: one grid as two arms (A, B) whose launches alternate in time, so drift
falls on both alike, then compared as ``podscale compare`` does. For your own program:
``podscale profile --env-b NAME=VALUE | --args-b 'ARGS' --rounds R SCRIPT [ARGS...]``."""

from __future__ import annotations

import argparse

from podscale.core import defaults
from podscale.core.errors import UsageError
from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.gridargs import add_grid_args
from podscale.frontend.commands.verdictargs import add_verdict_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("ab", help="one grid as two arms (A, B) whose launches alternate in "
                                  "time (drift falls on both alike), then compared",
                       description=__doc__)
    p.add_argument("workloads", help="comma-separated workloads, as for podscale run")
    p.add_argument("--env-a", action="append", default=None, metavar="NAME=VALUE",
                   help="environment variable arm A's processes set (repeatable)")
    p.add_argument("--env-b", action="append", default=None, metavar="NAME=VALUE",
                   help="environment variable arm B's processes set (repeatable), e.g. "
                        "XLA_FLAGS=...; with none on either side: an A/A run")
    add_grid_args(p, rounds=defaults.AB_ROUNDS)
    add_verdict_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.frontend.ab import ROUNDS, ab, parse_env
    from podscale.frontend.commands.gridargs import prepared_of
    from podscale.frontend.commands.verdictargs import verdict_of

    verdict = verdict_of(args)
    env_a, env_b = parse_env(args.env_a, "--env-a"), parse_env(args.env_b, "--env-b")
    if args.rounds is None:
        args.rounds = ROUNDS
    prepared = prepared_of(args)
    if verdict.method != "auto":  # checked with --timing before anything launches
        lacking = sorted({c.settings.timing for c in prepared.cases
                          if verdict.method not in c.settings.methods})
        if lacking:
            raise UsageError(f"--judge {verdict.method} judges a method the cases do not "
                             f"time (--timing {', '.join(lacking)}): add it to --timing, or "
                             "judge one they time")
    return ab(prepared, env_a, env_b, args.out, args.name, verdict)
