"""``podscale export``: a run's figures where users keep numbers — CI dashboards
(github-action-benchmark, Bencher, Google Benchmark's JSON), Prometheus (OpenMetrics),
every CI system (JUnit XML) and asv's own results folder — one row per case, named by its
case id (stable across runs), with platform, device kind, layout, slices, timing method,
versions, commit and the command that reproduces it. ``--against A``: each case's verdict
against run A, as ``podscale compare`` judges it (JUnit fails the slower cases)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from podscale.frontend.commands import Subparsers
from podscale.frontend.commands.verdictargs import DOCUMENTS, add_verdict_args, verdict_of

FORMATS = (*DOCUMENTS, "asv")  # asv: a results folder, not a document
FIGURES = ("time", "busbw", "bandwidth", "flops")


def register(sub: Subparsers) -> None:
    p = sub.add_parser("export", help="a run's figures for CI dashboards, Prometheus, JUnit "
                                      "or asv", description=__doc__)
    p.add_argument("run", type=Path, help="the run directory")
    p.add_argument("--format", dest="fmt", required=True, choices=FORMATS, metavar="FORMAT",
                   help=f"one of {', '.join(FORMATS)}")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="write here (default: stdout; asv: the results folder, default "
                        ".asv/results)")
    p.add_argument("--against", type=Path, default=None, metavar="RUN_A",
                   help="each case's verdict against this run (podscale compare's)")
    p.add_argument("--figures", default="time",
                   help="github-action-benchmark: the figures, of time (smaller is better) "
                        "or busbw, bandwidth, flops (bigger is better), one direction a file")
    p.add_argument("--machine", default=None,
                   help="asv: the machine the results are filed under (default: the run's "
                        "host)")
    p.add_argument("--commit", default=None,
                   help="asv: the commit they are filed under (default: the run's)")
    add_verdict_args(p, formats=False)
    p.set_defaults(func=run)


def _figures(text: str) -> tuple[str, ...]:
    from podscale.core.errors import UsageError

    names = tuple(w for w in text.split(",") if w)
    bad = [n for n in names if n not in FIGURES]
    if bad or not names:
        raise UsageError(f"bad --figures {text!r}: of {', '.join(FIGURES)}")
    if "time" in names and len(names) > 1:
        raise UsageError("--figures: time (smaller is better) and rates (bigger is better) "
                         "go to separate files, one direction each")
    return names


def run(args: argparse.Namespace) -> int:
    from podscale.core.errors import UsageError

    figures = _figures(args.figures)
    if args.fmt == "asv" and args.against:
        raise UsageError("--against: asv compares commits itself (asv compare)")
    verdict = verdict_of(args)
    from podscale.analysis import load_run
    from podscale.analysis.export.rows import rows, with_verdicts

    run_b = load_run(args.run)
    found, facts = rows(run_b)
    if not found:
        raise UsageError(f"{args.run}: no case to export")
    if args.against:
        table, _ = verdict.compare(load_run(args.against), run_b)
        found = with_verdicts(found, table)
    if args.fmt == "asv":
        from podscale.analysis.export.asvexport import write_asv

        try:
            path = write_asv(found, facts, args.output or Path(".asv/results"),
                             machine=args.machine or facts.machine or "podscale",
                             commit=args.commit)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print(f"# asv results: {path} ({len(found)} case(s))")
        return 0
    from podscale.analysis.export import document

    text = document(found, facts, args.fmt, figures, verdicts=args.against is not None)
    if args.output:
        args.output.write_text(text)
        print(f"# written: {args.output} ({len(found)} case(s))", file=sys.stderr)
    else:
        sys.stdout.write(text)
    slower = any(r.verdict == "slower" for r in found)
    return 1 if slower and verdict.fail_on_regression else 0
