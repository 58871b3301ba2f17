"""``podscale fit RUN``: latency-bandwidth fits t = alpha + S/beta per size sweep."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.core.errors import UsageError
from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("fit", help="latency-bandwidth fits t = alpha + S/beta per size "
                                   "sweep (writes RUN/fits.csv)", description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN", help="a run directory")
    p.add_argument("--out", type=Path, default=None, help="CSV file (default: RUN/fits.csv)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.analysis import load_run
    from podscale.analysis.models.fits import fits
    from podscale.analysis.render.text import fits_text

    loaded = load_run(args.run_dir)
    if loaded.cases.empty:
        raise UsageError(f"{args.run_dir}: no case completed in this run "
                         f"({loaded.manifest.status}): nothing to fit")
    table = fits(loaded.samples, loaded.table(), rm=loaded.round_medians())
    if table.empty:
        raise UsageError(f"{args.run_dir}: no size sweep to fit (every case needs 3 or more "
                         "sizes at the same other parameters)")
    print(fits_text(table))
    out = args.out or loaded.path / "fits.csv"
    table.to_csv(out, index=False)
    print(f"# written: {out}")
    return 0
