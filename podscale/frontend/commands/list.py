"""``podscale list``: every workload with its parameters and defaults."""

from __future__ import annotations

import argparse

from podscale.frontend.commands import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("list", help="every workload with its parameters and defaults",
                       description=__doc__)
    p.add_argument("workloads", nargs="?", default=None,
                   help="also describe these (file.py:NAME, pkg.module:NAME)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from podscale.core.registry import builtins, resolve
    from podscale.core.workload import Workload

    found = dict(builtins())
    for ref in (r.strip() for r in (args.workloads or "").split(",") if r.strip()):
        f = resolve(ref)
        found[f.source] = f
    for f in found.values():
        wl = f.workload
        per_case = type(wl).collective_of is not Workload.collective_of
        kind = f"collective {wl.collective}" if wl.collective else \
            "collective per case (its kind)" if per_case else "no collective"
        say(f"{wl.name}@{wl.version}  {wl.summary}")
        say(f"{kind}; variants {', '.join(wl.variants)}; dtypes {', '.join(wl.dtypes)}",
            "    ")
        say(f"source {f.source}", "    ")
        for p in wl.params:
            say(f"--param {p.describe()}", "    ", "        ")
    return 0


def say(text: str, first: str = "", rest: str = "      ", columns: int = 100) -> None:
    """A line of the listing, wrapped to ``columns`` (the help's width)."""
    import textwrap

    print("\n".join(textwrap.wrap(text, columns, initial_indent=first,
                                   subsequent_indent=rest or first, break_long_words=False,
                                   break_on_hyphens=False)))
