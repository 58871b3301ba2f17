"""``podscale ceilings``: what a TPU slice's interconnect allows, each figure with its
source: the generation's torus and where it wraps, a link's bandwidth (both figures where
sources disagree), a pod's all-reduce, bisection and DCN bandwidth, and a collective's
ceiling and least time over the slice's axes. Without a generation: this machine's chips,
the peaks read from them (``get_tpu_info()``) beside the documented ones."""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING

from podscale.frontend.commands import Subparsers

if TYPE_CHECKING:
    from podscale.analysis.models import torus

COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast",
               "sendrecv")


def register(sub: Subparsers) -> None:
    p = sub.add_parser("ceilings", help="a TPU slice's interconnect ceilings and their "
                                        "sources; a collective's least time on it",
                       description=__doc__)
    p.add_argument("tpu", nargs="?", default=None,
                   help="a generation (v4, v5e, v5p, v6e, tpu7x) or TPU type (v5litepod-32, "
                        "tpu7x-128); default: this machine's chips")
    p.add_argument("--topology", default=None,
                   help="the slice's chips as AxB or AxBxC (default: the type's usual one, "
                        "else the pod's)")
    p.add_argument("--collective", choices=COLLECTIVES, default=None, metavar="NAME",
                   help=f"also the least time of this collective on the slice: one of "
                        f"{', '.join(COLLECTIVES)}")
    p.add_argument("--over", default=None, metavar="AXES",
                   help="the slice's axes the collective runs over: x, y, z or several "
                        "(xy) (default: all)")
    p.add_argument("--shard", default="8MiB",
                   help="bytes on each chip: an all_gather's input, a reduce_scatter's "
                        "output, other collectives' buffer (4096, 64K, 8MiB)")
    p.set_defaults(func=run)


def _slice(tpu: str, topology: str | None) -> tuple[torus.Generation, tuple[int, ...]]:
    from podscale.analysis.models import torus
    from podscale.core.errors import UsageError

    key = re.sub(r"-\d+$", "", tpu).replace("v5litepod", "v5e")
    gen = torus.generation(key)
    if gen is None:
        raise UsageError(f"unknown TPU {tpu!r}: name a generation ("
                         f"{', '.join(g.key for g in torus.GENERATIONS)}) or a TPU type")
    if topology is None and re.search(r"-\d+$", tpu):
        from podscale.launch.jobset import tpu_slice

        topology = tpu_slice(tpu.replace("v5e-", "v5litepod-")).topology
    text = topology or "x".join(map(str, gen.pod))
    dims = text.split("x")
    if len(dims) != len(gen.pod) or not all(d.isdigit() and int(d) >= 1 for d in dims) \
            or max(int(d) for d in dims) > max(gen.pod):
        raise UsageError(f"--topology {text}: a {gen.name} slice is {len(gen.pod)}-D, "
                         f"each axis 1 to {max(gen.pod)} chips, e.g. "
                         f"{'x'.join(map(str, gen.pod))}")
    shape = tuple(int(d) for d in dims)
    return gen, shape


def run(args: argparse.Namespace) -> int:
    from podscale.core import lines
    from podscale.core.errors import UsageError
    from podscale.core.parsing import parse_size

    try:
        shard = parse_size(args.shard)
    except ValueError as exc:
        raise UsageError(f"--shard {args.shard}: {exc}") from None
    if args.tpu is None:
        from podscale.frontend.ceilingtext import this_machine

        tpu, topology, said = this_machine()
        if tpu is None:
            raise UsageError(said)
        lines.say(said)
        args.tpu, args.topology = tpu, args.topology or topology
    gen, shape = _slice(args.tpu, args.topology)
    from podscale.analysis.models import torus
    from podscale.frontend.ceilingtext import collective_lines, slice_lines

    out = slice_lines(gen, shape)
    if args.collective:
        try:
            axes = torus.over(gen, shape, args.over)
        except ValueError as exc:
            raise UsageError(f"--over: {exc}") from None
        out += collective_lines(gen, args.collective, axes, shard)
    lines.say("\n".join(out))
    return 0
