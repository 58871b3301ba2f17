"""Ceilings that know the torus: per TPU generation, the chips' ICI torus and where it
wraps, the links of a chip, each link's bandwidth with its source (both, where sources
disagree), and what a collective can reach over the axes it runs on.

A collective over physical axes each of ``length`` chips, ``wraps`` or not (W: one link's
bandwidth one way, the vendor's figure; nccl-tests' busbw, so comparable across n):

- all_gather, reduce_scatter, all_reduce, broadcast: a ring on every axis, both ways
  where the axis wraps (2 W), one way where it does not (W: the far end's data crosses
  every link of the line), summed over the axes (a 2-D or 3-D collective runs on all);
- all_to_all: the bisection: a cut across the longest axis crosses (chips / length)
  lines, twice where it wraps, and a quarter of n x S crosses it each way; busbw
  4 x links cut x W (n - 1) / n^2;
- sendrecv (ppermute): one link one way, W;
- a floor of hops x the per-hop latency (n - 1 hops on a line, n / 2 on a ring), the
  scaling book's ~1 us.

Wraparound: v5e and v6e wrap an axis only at the pod's 16; v4, v5p and TPU7x wrap every
axis of a slice of whole 4x4x4 cubes (their optical switches), none below a cube.
``podscale ceilings`` prints these; docs/models.md reproduces published figures with them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

BOOK = "the scaling book (jax-ml.github.io/scaling-book/tpus)"


@dataclass(frozen=True)
class Figure:
    """One number with where it comes from."""

    value: float
    source: str


@dataclass(frozen=True)
class Generation:
    """One TPU generation's interconnect (GB/s; ``link``: one link, one way, the first
    figure the one used)."""

    name: str
    key: str
    pattern: str  # regex on jax's device_kind
    pod: tuple[int, ...]  # the largest slice's torus
    wrap: str  # "16" (an axis wraps at 16 chips) or "cube" (whole 4x4x4 cubes)
    links: Figure  # ICI links per chip
    link: tuple[Figure, ...]
    chips_per_host: int
    dcn_host_gbps: Figure
    hop_us: Figure = Figure(1.0, BOOK)

    @property
    def w(self) -> float:
        return self.link[0].value


def _cloud(page: str, chip: float, ports: int) -> Figure:
    return Figure(chip / ports / 2, f"cloud.google.com/tpu/docs/{page}: {chip:g} GB/s a "
                                    f"chip both ways over {ports} ports")


GENERATIONS: tuple[Generation, ...] = (
    Generation("TPU v4", "v4", r"TPU v4", (16, 16, 16), "cube", Figure(6, "3D torus"),
               (Figure(45, "cloud.google.com/tpu/docs/v4: 1.1 PB/s all-reduce a pod of 4096 "
                           "chips, 6 links each; the scaling book's too"),),
               4, Figure(25, BOOK + ": DCN ~2.5e10 B/s a host")),
    Generation("TPU v5e", "v5e", r"TPU v5 ?lite|TPU v5e", (16, 16), "16",
               Figure(4, "cloud.google.com/tpu/docs/v5e: 4 ICI ports"),
               (_cloud("v5e", 400, 4), Figure(45, BOOK)), 8,
               Figure(25, "cloud.google.com/tpu/docs/v5e: 2 x 100 Gbps NICs a host")),
    Generation("TPU v5p", "v5p", r"TPU v5p|TPU v5$", (16, 20, 28), "cube",
               Figure(6, "3D torus"), (_cloud("v5p", 1200, 6), Figure(90, BOOK)), 4,
               Figure(25, "cloud.google.com/tpu/docs/v5p: 50 Gbps DCN a chip")),
    Generation("TPU v6e", "v6e", r"TPU v6 ?lite|TPU v6e|Trillium", (16, 16), "16",
               Figure(4, "cloud.google.com/tpu/docs/v6e: 4 ICI ports"),
               (_cloud("v6e", 800, 4), Figure(90, BOOK)), 8,
               Figure(100, "cloud.google.com/tpu/docs/v6e: 4 x 200 Gbps NICs a host")),
    Generation("TPU7x", "tpu7x", r"TPU ?7x|Ironwood", (16, 24, 24), "cube",
               Figure(6, "3D torus (its docs give no port count)"),
               (_cloud("tpu7x", 1200, 6),), 4,
               Figure(50, "cloud.google.com/tpu/docs/tpu7x: 100 Gbps DCN a chip")),
)


def generation(kind: str | None) -> Generation | None:
    """The generation of a device kind (jax's ``device_kind``) or key (``v5e``)."""
    for g in GENERATIONS:
        if kind and (kind.lower() == g.key or re.search(g.pattern, kind, re.IGNORECASE)):
            return g
    return None


def wraps(gen: Generation, topology: tuple[int, ...]) -> tuple[bool, ...]:
    """Which axes of a slice of this torus shape wrap around."""
    if gen.wrap == "16":
        return tuple(d == 16 for d in topology)
    cubes = len(topology) == 3 and all(d % 4 == 0 for d in topology)
    return tuple(cubes for _ in topology)


def span(gen: Generation, topology: tuple[int, ...], n: int) -> list[tuple[int, bool]]:
    """(length, wraps) of each physical axis a group of n consecutive chips of the slice
    runs over, filling the axes in order (as a 1-D mesh over the slice is laid out)."""
    out, left = [], n
    for d, w in zip(topology, wraps(gen, topology)):
        if left <= 1:
            break
        take = min(d, left)
        out.append((take, w and take == d))
        left = math.ceil(left / take)
    return out


def bound(gen: Generation, collective: str, axes: list[tuple[int, bool]],
          link: float | None = None) -> tuple[float, str]:
    """(the busbw ceiling in GB/s, how it is reached) of a collective over ``axes``."""
    w = link or gen.w
    n = math.prod(length for length, _ in axes)
    if not axes or n < 2:
        return math.nan, "one chip: nothing crosses a link"
    where = " x ".join(f"{length}{' (wraps)' if wr else ''}" for length, wr in axes)
    if collective == "all_to_all":
        length, wr = max(axes)
        cut = n // length * (2 if wr else 1)
        return 4 * cut * w * (n - 1) / n ** 2, f"bisection of {where}: {cut} link(s) cut"
    if collective == "sendrecv":
        return w, f"one link one way on {where}"
    rings = sum(2 if wr else 1 for _, wr in axes)
    how = " + ".join(f"a ring {'both ways' if wr else 'one way'} on {length}"
                     f"{' (wraps)' if wr else ''}" for length, wr in axes)
    return rings * w, how


def hops(axes: list[tuple[int, bool]]) -> int:
    """The longest path: n / 2 hops around a wrapped axis, n - 1 along a line."""
    return sum(length // 2 if wr else length - 1 for length, wr in axes)


def time_bound(gen: Generation, collective: str, axes: list[tuple[int, bool]],
               bus_bytes: float, link: float | None = None) -> float:
    """The least time (s) of a collective putting ``bus_bytes`` (S x bus factor) on the
    bus: the bandwidth's time plus the hops' latency."""
    ceiling, _ = bound(gen, collective, axes, link)
    return bus_bytes / (ceiling * 1e9) + hops(axes) * gen.hop_us.value * 1e-6


def pod_figures(gen: Generation, link: float | None = None) -> dict[str, float]:
    """A full pod's published figures computed from the torus: all-reduce bandwidth
    (chips x links x W), bisection (the cut across the longest axis, one way) and DCN
    (hosts x a host's NICs), in GB/s."""
    w = link or gen.w
    chips = math.prod(gen.pod)
    length, wr = max(zip(gen.pod, wraps(gen, gen.pod)))
    return {"chips": chips, "allreduce_gbps": chips * gen.links.value * w,
            "bisection_gbps": chips // length * (2 if wr else 1) * w,
            "dcn_gbps": chips / gen.chips_per_host * gen.dcn_host_gbps.value}


def over(gen: Generation, topology: tuple[int, ...], letters: str | None
         ) -> list[tuple[int, bool]]:
    """(length, wraps) of the slice's axes named by ``letters`` (``x``, ``yz``; None:
    every axis longer than one chip)."""
    names = "xyz"[:len(topology)]
    chosen = letters or "".join(a for a, d in zip(names, topology) if d > 1)
    bad = [c for c in chosen if c not in names]
    if bad or len(set(chosen)) != len(chosen):
        raise ValueError(f"axes {letters!r}: a {'x'.join(map(str, topology))} slice has "
                         f"axes {', '.join(names)}")
    w = wraps(gen, topology)
    return [(topology[names.index(c)], w[names.index(c)]) for c in chosen]


def collective_time(gen: Generation, collective: str, axes: list[tuple[int, bool]],
                    shard: int) -> list[tuple[Figure, float, float]]:
    """(link figure, busbw ceiling GB/s, least time s) of a collective over ``axes`` of
    a ``shard`` of bytes on each chip (an all_gather's input, a reduce_scatter's output,
    every other collective's buffer), once per link figure."""
    from podscale.analysis.models.bandwidth import bus_factor

    n = math.prod(length for length, _ in axes)
    whole = shard * n if collective in ("all_gather", "reduce_scatter") else shard
    bus = whole * (bus_factor(collective, n) or 1.0)
    return [(f, bound(gen, collective, axes, f.value)[0],
             time_bound(gen, collective, axes, bus, f.value)) for f in gen.link]
