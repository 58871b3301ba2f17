"""``podscale digest``: a run as one small JSON document for an agent or a script
(``podscale.digest/1``): the command that reproduces it, commit, versions, machine,
platform; per case the figures with units and the rounds' range, correctness, verdicts
(``--against A``) and a reproduce command; every Finding with a stable code, severity,
its numbers and the next command. ``--schema`` prints its JSON Schema (docs/agents.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("digest", help="a run as one small JSON document for agents and "
                                      "scripts (podscale.digest/1)", description=__doc__)
    p.add_argument("run", type=Path, nargs="?", default=None, help="the run directory")
    p.add_argument("--schema", action="store_true", help="print the digest's JSON Schema")
    p.add_argument("--against", type=Path, default=None, metavar="RUN_A",
                   help="each case's verdict against this run (podscale compare's)")
    p.add_argument("--most", type=int, default=None,
                   help="cases at most (default 100; the wrong and the regressed first, the "
                        "rest counted in cases_left_out)")
    p.add_argument("--indent", type=int, default=None,
                   help="indent the JSON (default: compact, the smallest document)")
    from podscale.frontend.commands.verdictargs import add_verdict_args

    add_verdict_args(p, formats=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.analysis.export.digest import MOST_CASES, SCHEMA_FILE, digest
    from podscale.core.errors import UsageError

    if args.schema:
        print(SCHEMA_FILE.read_text(), end="")
        return 0
    if args.run is None:
        raise UsageError("give a run directory (or --schema)")
    most = MOST_CASES if args.most is None else args.most
    if most < 1:
        raise UsageError(f"--most {most}: want 1 or more")
    from podscale.analysis import load_run
    from podscale.frontend.commands.verdictargs import verdict_of

    run_b, run_a, table = load_run(args.run), None, None
    if args.against:
        run_a = load_run(args.against)
        table, _ = verdict_of(args).compare(run_a, run_b)
    doc = digest(run_b, run_a, table, most)
    print(json.dumps(doc, indent=args.indent, default=str,
                     separators=None if args.indent else (",", ":")))
    return 0
