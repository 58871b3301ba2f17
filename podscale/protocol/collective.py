"""Shared machinery of the collective workloads: the ``axes`` and ``group`` parameters,
the groups they make, a float64 reference of a sample of elements gathered from every
rank (O(k) per device, never the whole buffers), and an exact check in closed form
(:mod:`podscale.protocol.exact`) that covers every element with no communication.

``size`` is the per-device send buffer in bytes (``4KiB``, ``1M``). ``axes`` names the
mesh axes the collective runs over (``hosts``, ``local``, ``hosts+local`` = ``all``, or any
subset of a 3-D mesh's axes joined with ``+``; ``--param axes=hosts,local,all`` sweeps three
values); the devices that share coordinates on the other axes form a group of n = product
of the named axes' sizes, and all groups run at the same time. Within a group, device ranks
are row-major over the named axes in the order given.

``group`` (``--group-sizes 2,4,all``) cuts each of those groups into groups of N, all
running at once, so one job measures a collective at several participant counts:
``N`` takes N consecutive ranks (row-major over the named axes: with ``axes=all`` on
``hosts x local``, a group of N <= devices per host stays inside one host, a larger one
takes whole hosts that are neighbours along the ``hosts`` axis — the groups a physical
mesh or torus wires together); ``N:strided`` takes every (n/N)-th rank (ranks i, i+n/N,
...: far apart on the mesh, as a group of one device per host is, not what the topology
wires together). Such cases run in the ``shard_map`` variant over a mesh of the groups.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from podscale.core.case import DCN_AXIS, ICI, Case
from podscale.core.errors import UsageError
from podscale.core.workload import Context, ExactCheck, Expected, Param, Work
from podscale.protocol.exact import RULES, rule_inputs, rule_outputs
from podscale.protocol.mapped import Mapped, cast, gather_elements, normals

AXES = Param("axes", "all", "str", help="mesh axes to run over: all, hosts, local, a+b, "
                                        "...; with slices, dcn (across them) and ici (every "
                                        "axis inside one)")
SIZE = Param("size", 4096, "size", help="per-device send buffer in bytes", unit="B")
GROUP = Param("group", "all", "str", help="participants per group: all, N (N consecutive "
                                          "ranks) or N:strided; groups run at once")
MEMBERS = "members"  # the mesh axis a grouped collective runs over
#: ``Collective.exact_rule``'s default: the rule is found from the collective's reference
DETECT = "detect"


def parse_group(text: str) -> tuple[int | None, bool]:
    """``all`` -> (None, False); ``4`` -> (4, False); ``4:strided`` -> (4, True)."""
    if text == "all":
        return None, False
    size, _, how = str(text).partition(":")
    if not size.isdigit() or int(size) < 2 or how not in ("", "strided", "contiguous"):
        raise UsageError(f"bad group {text!r}: use all, N (>= 2) or N:strided")
    return int(size), how == "strided"


class Collective(Mapped):
    """Base of one-file collective workloads: subclasses give ``body`` and ``combine``."""

    split_param = None
    params = (SIZE, AXES, GROUP)
    #: nccl-tests' S for algbw, in multiples of the send buffer: "send" or "recv" (n x send)
    s_buffer = "send"
    #: how many chunks the send buffer is cut into (the group size n, or 1)
    chunked = False
    #: the exact check's closed form (a rule of :mod:`podscale.protocol.exact`); DETECT
    #: (the default): the rule :meth:`combine` follows, found by running it on each rule's
    #: exact inputs (:meth:`detected_rule`); None: no exact pass
    exact_rule: str | None = DETECT
    #: whether :meth:`combine` takes a sample of positions (False: every element is
    #: gathered, for collectives whose output layout depends on the whole buffer)
    sampled = True

    @abc.abstractmethod
    def combine(self, x: np.ndarray, case: Case) -> tuple[np.ndarray, np.ndarray]:
        """The reference of one or more groups.

        Args: x: float64 inputs of shape (groups, n, k) — each rank's elements at the
        compared positions (a sample, with a chunked collective's chunk structure kept);
        case: the case.
        Returns: (expected, bound), broadcastable to (groups, n, k_out): k_out = k for
        element-wise results, n·k for gathered ones (rank-major), k/n for scattered
        ones."""

    def is_chunked(self, case: Case) -> bool:
        """Whether ``case``'s buffer is cut into n chunks (default: ``chunked``)."""
        return self.chunked

    def rule(self, case: Case) -> str | None:
        """The exact rule of ``case`` (default: ``exact_rule``, detected where DETECT)."""
        return self.detected_rule(case) if self.exact_rule == DETECT else self.exact_rule

    def detected_rule(self, case: Case) -> str | None:
        """The rule whose closed form :meth:`combine` reproduces bit for bit on the rule's
        own exact inputs (a group's buffers of 8 elements per rank, on the host), or None
        where none does: then only the float check runs, and the run says so."""
        cache = self.__dict__.setdefault("_detected", {})
        if case.id not in cache:
            cache[case.id] = _detect(self, case)
        return cache[case.id]

    def perm(self, case: Case) -> list[tuple[int, int]]:
        """(source, target) ranks of a permute, for the body and the exact check."""
        return []

    def reduce_axes(self, case: Case) -> tuple[str, ...]:
        """The mesh axes ``axes`` names: ``all``, names joined with ``+``; ``ici``: every
        axis inside a slice (all but ``dcn``)."""
        text, names = case.p["axes"], case.layout.axis_names
        if text == "all":
            return names
        out: list[str] = []
        for a in (a.strip() for a in text.split("+") if a.strip()):
            out += [n for n in names if n != DCN_AXIS] if a == ICI else [a]
        return tuple(out)

    def axes_size(self, case: Case) -> int:
        """Devices that share coordinates on every other axis (the ungrouped n)."""
        sizes = dict(case.layout.axes)
        return math.prod(sizes[a] for a in self.reduce_axes(case))

    def grouped(self, case: Case) -> bool:
        return "group" in case.p and parse_group(case.p["group"])[0] is not None

    def group_size(self, case: Case) -> int:
        size = parse_group(case.p["group"])[0] if "group" in case.p else None
        return size or self.axes_size(case)

    def groups(self, case: Case) -> np.ndarray:
        """Every group's global device indices (process-major: process x devices per host
        + local index), shape (groups, n), in rank order."""
        names = case.layout.axis_names
        sizes = [s for _, s in case.layout.axes]
        red = [names.index(a) for a in self.reduce_axes(case)]
        other = [i for i in range(len(names)) if i not in red]
        n = self.axes_size(case)
        idx: np.ndarray = np.arange(case.layout.devices).reshape(sizes).transpose(
            other + red).reshape(-1, n)
        size, strided = parse_group(case.p["group"]) if "group" in case.p else (None, False)
        if size is None or size == n:
            return idx
        if strided:
            idx = idx.reshape(-1, size, n // size).swapaxes(1, 2)
        return idx.reshape(-1, size)

    def hosts_per_group(self, case: Case) -> int:
        """The most processes (hosts) one group spans."""
        return max(len(set(g)) for g in self.groups(case) // case.devices_per_host)

    def elements(self, case: Case) -> int:
        return case.p["size"] // case.itemsize

    def unsupported_case(self, case: Case) -> str | None:
        if self.grouped(case) and case.variant == "pmap":
            return f"{self.name}: groups of a size run in shard_map only"
        if DCN_AXIS in str(case.p.get("axes", "")).split("+") and case.layout.slices == 1:
            return f"{self.name}: axes dcn need 2 or more slices (--slices)"
        return None

    def check_case(self, case: Case) -> None:
        names = case.layout.axis_names
        axes = self.reduce_axes(case)
        unknown = [a for a in axes if a not in names]
        if unknown or not axes or len(set(axes)) != len(axes):
            raise UsageError(f"{self.name}: axes {case.p['axes']!r} are not distinct axes of "
                             f"the mesh {','.join(names)}")
        if "group" in case.p:
            size, _ = parse_group(case.p["group"])
            if size is not None and self.axes_size(case) % size:
                raise UsageError(f"{self.name}: group {size} does not divide the "
                                 f"{self.axes_size(case)} devices of axes {case.p['axes']}")
        n, g = self.elements(case), self.group_size(case)
        if n < 1 or case.p["size"] % case.itemsize:
            raise UsageError(f"{self.name}: size {case.p['size']} bytes is not a whole number "
                             f"of {case.dtype} elements")
        if self.is_chunked(case) and n % g:
            raise UsageError(f"{self.name}: {n} elements per device do not split into "
                             f"{g} chunks (the group size)")
        rule = self.rule(case)
        if rule is not None and rule not in RULES:
            raise UsageError(f"{self.name}: exact rule {rule!r} is not one of "
                             f"{', '.join(RULES)} (or None)")

    def mesh_of(self, ctx: Context) -> tuple[Any, tuple[str, ...]]:
        """Grouped cases run over a mesh of the groups (``groups`` x ``members``)."""
        if not self.grouped(ctx.case):
            return ctx.mesh, tuple(self.reduce_axes(ctx.case))
        from jax.sharding import Mesh

        devices = np.array(ctx.devices, dtype=object)  # process-major, as the groups
        return Mesh(devices[self.groups(ctx.case)], ("groups", MEMBERS)), (MEMBERS,)

    def inputs(self, ctx: Context) -> tuple[np.ndarray, ...]:
        shape = (ctx.local_devices, self.elements(ctx.case))
        return (cast(normals(ctx.process, shape), ctx.case.dtype),)

    def ranks(self, ctx: Context) -> np.ndarray:
        """Each of this process's devices' rank within its group."""
        idx = self.groups(ctx.case)
        rank_of = np.empty(idx.size, int)
        rank_of[idx] = np.arange(idx.shape[1])[None, :]
        d = ctx.local_devices
        return rank_of[ctx.process * d:(ctx.process + 1) * d]

    def exact_check(self, ctx: Context) -> ExactCheck | None:
        """Inputs and outputs of :meth:`rule` by rank within the group, in closed form."""
        case = ctx.case
        rule = self.rule(case)
        if rule is None:
            return None
        ranks, n, m = self.ranks(ctx), self.group_size(case), self.elements(case)
        inputs = cast(rule_inputs(rule, ranks, n, m, case.dtype), case.dtype)
        value = rule_outputs(rule, ranks, n, m, case.dtype, self.perm(case))
        return ExactCheck((inputs,), Expected(value, 0.0))

    def reference(self, ctx: Context, local: Sequence[np.ndarray]) -> Expected:
        """:meth:`combine` over the groups that hold this process's devices, of the
        elements at ``ctx.sample`` positions gathered from every device (O(k) each); only
        this process's devices' rows kept."""
        case = ctx.case
        m, n = self.elements(case), self.group_size(case)
        chunks = n if self.is_chunked(case) else 1
        positions = ctx.sample(m, chunks) if self.sampled else np.arange(m)
        everything = gather_elements(local[0], positions)  # (devices, k)
        idx = self.groups(case)
        row_of, rank_of = np.empty(idx.size, int), np.empty(idx.size, int)
        row_of[idx] = np.arange(len(idx))[:, None]
        rank_of[idx] = np.arange(idx.shape[1])[None, :]
        d = ctx.local_devices
        mine = np.arange(ctx.process * d, (ctx.process + 1) * d)
        rows = np.unique(row_of[mine])
        value, bound = self.combine(everything[idx[rows]], case)  # (my groups, n, k_out)
        at = np.searchsorted(rows, row_of[mine])

        def pick(a: np.ndarray) -> np.ndarray:
            a = np.broadcast_to(a, value.shape)
            return np.stack([a[g, r] for g, r in zip(at, rank_of[mine])])

        out = _output_positions(positions, m, n, value.shape[-1], self.name)
        return Expected(pick(value), pick(bound), out)

    def work(self, case: Case) -> Work:
        send = case.p["size"]
        n = self.group_size(case)
        s = send * n if self.s_buffer == "recv" else send
        return Work(send * case.devices_per_host, 0, s, n,
                    hosts_per_group=self.hosts_per_group(case))


def _output_positions(positions: np.ndarray, m: int, n: int, k_out: int,
                      name: str) -> np.ndarray | None:
    """Where along the output the sampled reference's ``k_out`` values lie (None: all)."""
    k = positions.size
    if k == m:
        return None
    if k_out == k:  # element-wise, or chunk structure kept (all_to_all)
        return positions
    if k_out == n * k:  # gathered, rank-major
        return (np.arange(n)[:, None] * m + positions[None, :]).reshape(-1)
    if k_out * n == k:  # scattered: the offsets within a chunk
        return positions[:k_out]
    raise ValueError(f"{name}: combine returned {k_out} values per rank for {k} sampled "
                     f"elements (expected {k}, {n * k} or {k // n})")


def _detect(c: Collective, case: Case) -> str | None:
    """:meth:`Collective.detected_rule` (a reference that fails on these inputs: None)."""
    n = c.group_size(case)
    m = 8 * n
    ranks = np.arange(n)
    for rule in RULES:
        try:
            x = rule_inputs(rule, ranks, n, m, case.dtype)
            value, _ = c.combine(np.asarray(x, np.float64)[None], case)
            want = rule_outputs(rule, ranks, n, m, case.dtype, c.perm(case))
            got = np.broadcast_to(np.asarray(value, np.float64)[0], want.shape)
        except Exception:  # noqa: BLE001 - shapes of another rule, or the user's error
            continue
        if np.array_equal(got, want):
            return rule
    return None
