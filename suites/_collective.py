"""Shared machinery of the collective workloads: the ``axes`` parameter, groups, and a
float64 reference computed from every process's gathered inputs.

``size`` is the per-device send buffer in bytes (``4KiB``, ``1M``). ``axes`` names the
mesh axes the collective runs over (``hosts``, ``local``, ``hosts+local`` = ``all``, or any
subset of a 3-D mesh's axes joined with ``+``; ``--param axes=hosts,local,all`` sweeps three
values); the devices that share coordinates on the other axes form a
group of n = product of the named axes' sizes, and all groups run at the same time. Within
a group, device ranks are row-major over the named axes in the order given.
"""

from __future__ import annotations

import math

import numpy as np

from podscale.core.errors import UsageError
from podscale.core.workload import Expected, Param, Work
from suites.common import Mapped, cast, exact, gather_processes, normals

AXES = Param("axes", "all", "str", help="mesh axes to run over: all, hosts, local, a+b, ...")
SIZE = Param("size", 4096, "size", help="per-device send buffer in bytes")


def group_ranks(case, process: int, axes: tuple[str, ...]) -> list[int]:
    """Rank within its group of each of ``process``'s devices (row-major over ``axes``)."""
    names = case.layout.axis_names
    sizes = [s for _, s in case.layout.axes]
    coords = np.unravel_index(process * case.devices_per_host
                              + np.arange(case.devices_per_host), sizes)
    idx = [names.index(a) for a in axes]
    return [int(r) for r in np.ravel_multi_index([coords[i] for i in idx],
                                                 [sizes[i] for i in idx])]


class Collective(Mapped):
    """Base of one-file collective workloads: subclasses give ``body`` and ``combine``."""

    split_param = None
    params = (SIZE, AXES)
    #: nccl-tests' S for algbw, in multiples of the send buffer: "send" or "recv" (n x send)
    s_buffer = "send"
    #: how many chunks the send buffer is cut into (the group size n, or 1)
    chunked = False

    def reduce_axes(self, case) -> tuple[str, ...]:
        text = case.p["axes"]
        if text == "all":
            return case.layout.axis_names
        return tuple(a.strip() for a in text.split("+") if a.strip())

    def group_size(self, case) -> int:
        sizes = dict(case.layout.axes)
        return math.prod(sizes[a] for a in self.reduce_axes(case))

    def elements(self, case) -> int:
        return case.p["size"] // case.itemsize

    def validate(self, case) -> None:
        names = case.layout.axis_names
        axes = self.reduce_axes(case)
        unknown = [a for a in axes if a not in names]
        if unknown or not axes or len(set(axes)) != len(axes):
            raise UsageError(f"{self.name}: axes {case.p['axes']!r} are not distinct axes of "
                             f"the mesh {','.join(names)}")
        n, g = self.elements(case), self.group_size(case)
        if n < 1 or case.p["size"] % case.itemsize:
            raise UsageError(f"{self.name}: size {case.p['size']} bytes is not a whole number "
                             f"of {case.dtype} elements")
        if self.chunked and n % g:
            raise UsageError(f"{self.name}: {n} elements per device do not split into "
                             f"{g} chunks (the group size)")
        super().validate(case)

    def inputs(self, ctx):
        shape = (ctx.local_devices, self.elements(ctx.case))
        return (cast(normals(ctx.process, shape), ctx.case.dtype),)

    def combine(self, x: np.ndarray, case) -> tuple[np.ndarray, np.ndarray]:
        """(expected, error bound) from the group's inputs ``x`` of shape (..., n, m)."""
        raise NotImplementedError

    def reference(self, ctx, local):
        case = ctx.case
        mesh_shape = [s for _, s in case.layout.axes]
        everything = exact(gather_processes(local[0])).reshape(*mesh_shape, -1)
        names = case.layout.axis_names
        red = [names.index(a) for a in self.reduce_axes(case)]
        other = [i for i in range(len(names)) if i not in red]
        order = other + red + [len(names)]
        grouped = everything.transpose(order)
        keep = grouped.shape[: len(other)]
        value, bound = self.combine(grouped.reshape(*keep, -1, grouped.shape[-1]), case)
        back = np.argsort(order)

        def mine(a: np.ndarray) -> np.ndarray:
            a = a.reshape(*keep, *[mesh_shape[i] for i in red], a.shape[-1]).transpose(back)
            return a[ctx.process].reshape(ctx.local_devices, -1)

        return Expected(mine(value), mine(bound))

    def work(self, case):
        send = case.p["size"]
        n = self.group_size(case)
        s = send * n if self.s_buffer == "recv" else send
        return Work(send * case.devices_per_host, 0, s, n)
