"""``podscale compare A B``: per-case verdicts (slower, faster, ~, noisy) from the rounds of
two runs, and alpha/beta of A vs B per size sweep."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.verdictargs import add_verdict_args


def register(sub: Subparsers) -> None:
    p = sub.add_parser("compare", help="regression table between two runs",
                       description=__doc__)
    p.add_argument("run_a", type=Path, metavar="A", help="the baseline run directory")
    p.add_argument("run_b", type=Path, metavar="B", help="the run judged against A")
    add_verdict_args(p)
    p.add_argument("--force", action="store_true",
                   help="compare even when the environments or settings differ")
    p.add_argument("--out", type=Path, default=None,
                   help="write the table here (default: B/compare-<A>.csv/.txt)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.analysis import load_run
    from podscale.frontend.commands.verdictargs import verdict_of
    from podscale.frontend.comparing import write_compare

    verdict = verdict_of(args)
    from podscale.core.manifest import run_kind

    profiled = [run_kind(d) == "profile" for d in (args.run_a, args.run_b)]
    if any(profiled):
        if not all(profiled):
            from podscale.core.errors import UsageError

            raise UsageError("one run is a profiled program and the other is not: compare "
                             "two profiles of one program, or two benchmark runs")
        from podscale.analysis.profile.summary import summarize_profile
        from podscale.analysis.verdicts.profilecompare import compare_steps, differences

        sa, sb = summarize_profile(args.run_a), summarize_profile(args.run_b)
        for line in differences(sa, sb):
            print(f"# A and B differ: {line}")
        print(compare_steps(sa, sb, verdict.threshold).sentence())
        from podscale.analysis.profile.badput import changes

        for line in changes(sa, sb, verdict.threshold):
            print(f"# badput: {line}")
        from podscale.frontend.commands.profile import ops_said

        print(ops_said([sa], [sb]))
        return 0
    a, b = load_run(args.run_a), load_run(args.run_b)
    table, notes = verdict.compare(a, b, force=args.force)
    return write_compare(table, notes, a, b, verdict, args.out)
