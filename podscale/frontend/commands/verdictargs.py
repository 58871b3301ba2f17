"""How ``compare`` and ``ab`` judge a change, declared (``add_verdict_args``) and read back
as a :class:`~podscale.frontend.comparing.Verdict`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from podscale.core import defaults

#: the export formats that are one document (:func:`podscale.analysis.export.document`)
DOCUMENTS = ("github-action-benchmark", "bencher", "google-benchmark", "openmetrics",
             "junit")
#: what compare and ab print: their text, their JSON, or an export of B with verdicts
FORMATS = ("text", "json", *DOCUMENTS)

if TYPE_CHECKING:
    from podscale.frontend.comparing import Verdict


def add_verdict_args(p: argparse.ArgumentParser, formats: bool = True) -> None:
    """How ``compare`` and ``ab`` judge a change (``formats``: and what they print)."""
    p.add_argument("--threshold", type=float, default=defaults.THRESHOLD,
                   help="relative change that counts")
    p.add_argument("--alpha", type=float, default=defaults.ALPHA, help="significance level")
    p.add_argument("--correction", choices=["bh", "holm", "none"], default="bh",
                   help="adjust p-values for the many cases tested at once: "
                        "Benjamini-Hochberg (bh), Holm, or none")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any case is slower")
    p.add_argument("--paired", action="store_true",
                   help="runs of one podscale ab: a paired t-test, round i of A with round "
                        "i of B (default: Welch's t-test over the rounds)")
    if formats:
        p.add_argument("--format", dest="fmt", choices=FORMATS, default="text",
                       metavar="FORMAT",
                       help=f"one of {', '.join(FORMATS)}; "
                            "text: the tables for people; json: one document of the case "
                            "verdicts, the programs' and the ops' changes and the fits, for "
                            "scripts (everything else then goes to stderr); the others: B's "
                            "cases with their verdicts as podscale export writes them")
    p.add_argument("--noise-from", type=Path, default=None, metavar="DIR",
                   help="a folder of runs with no change between them (A/A): each case is "
                        "judged beyond the larger of --threshold and its run-to-run spread "
                        "there (95th percentile); a quiet --fail-on-regression gate")
    p.add_argument("--judge", dest="judge", default="auto", metavar="METHOD",
                   help="the timing method judged: each, chain or device; auto: device, "
                        "else chain, else each, the best both runs hold (chain on CPU) "
                        "(default: auto)")


def verdict_of(args: argparse.Namespace) -> Verdict:
    """:func:`add_verdict_args`' options as a :class:`Verdict` (validated)."""
    from podscale.frontend.comparing import Verdict

    return Verdict(args.threshold, args.alpha, args.correction, args.paired,
                   args.fail_on_regression, args.judge, getattr(args, "fmt", "text")
                   if getattr(args, "fmt", "text") in FORMATS else "text", args.noise_from)
