"""``podscale history RUN... | FOLDER``: the same cases across many runs, with change
points; drift of the whole run told apart from one case's change."""

from __future__ import annotations

import argparse
from pathlib import Path

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("history", help="the same cases across many runs: change points, "
                                       "drift", description=__doc__)
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN",
                   help="run directories, or folders of runs (e.g. results/)")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for history.csv, history-drift.csv and history.png")
    p.add_argument("--judge", choices=["auto", "each", "chain", "device"], default="auto",
                   help="the timing method whose times are followed; auto: each run's "
                        "headline (device, else chain, else each), a series per method "
                        "(default: auto)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.analysis.render.modelplots import history_trend
    from podscale.analysis.render.text import history_text
    from podscale.analysis.verdicts import history

    df, skipped = history.gather(args.runs, args.judge)
    found = history.analyse(df)
    print(history_text(df, found, skipped))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        found["changes"].to_csv(args.out / "history.csv", index=False)
        found["drift"].to_csv(args.out / "history-drift.csv", index=False)
        if len(found["changes"]) or len(found["drift"]):
            history_trend(found, args.out)
        print(f"# written: {args.out}/history.csv, history-drift.csv")
    return 0
