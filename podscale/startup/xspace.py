"""A profiler trace's XLA executions, read in the process that wrote it with
``jax.profiler.ProfileData`` (no pandas, no xprof): the timing method ``device``
(:mod:`podscale.worker.devicetime`) and ``podscale attach``'s capture windows
(:mod:`podscale.attach.stepreduce`) both reduce a trace from here."""

from __future__ import annotations

from bisect import bisect_left
from pathlib import Path
from typing import NamedTuple

from podscale.core import xprof

#: an op event: (start ns, end ns, name)
Op = tuple[int, int, str]


class Execution(NamedTuple):
    """One execution of an XLA module on one device: its span (ns, on the trace's clock)
    and its op events. ``span`` is the module's own event where the device reports one
    (``XLA Modules``: TPU, GPU), else the hull of its ops (the CPU client)."""

    module: str
    device: str
    start: int
    end: int
    ops: list[Op]
    #: True where ``start``/``end`` are the module's own event, False where its ops' hull
    spanned: bool = True

    @property
    def device_ns(self) -> int:
        """The execution's time on its device: the module's span where the device reports
        one, else the union of its op events (on CPU, ops of one execution may overlap)."""
        from podscale.core.attribution import union

        return self.end - self.start if self.spanned else \
            int(union([(a, b) for a, b, _ in self.ops]))

    @property
    def ordinal(self) -> int | None:
        """The device's number within its process (``/device:TPU:3`` -> 3; the CPU
        client's ``device_ordinal``), or None."""
        tail = self.device.rsplit(":", 1)[-1].split()[-1]
        return int(tail) if tail.isdigit() else None


def op_name(text: str) -> str:
    """An op's name as HLO names it: a TPU trace's op event carries the instruction's
    text (``%fusion.3 = bf16[...] fusion(...), kind=kLoop``), the name is its left side."""
    head, eq, _ = text.partition(" = ")
    return head.strip().lstrip("%") if eq else text


def executions(xplane: Path | str) -> tuple[list[Execution], int | None]:
    """Every XLA execution the trace holds: from device planes' ``XLA Modules`` and ``XLA
    Ops`` lines (TPU, GPU), else from op events that name their ``hlo_module`` (the CPU
    client: one execution per module, device and ``run_id``); and the session's start on
    the wall clock (ns; event times count from it), if it says."""
    from jax.profiler import ProfileData

    found: list[Execution] = []
    runs: dict[tuple[str, int, int], list[Op]] = {}
    began: int | None = None
    for plane in ProfileData.from_file(str(xplane)).planes:
        start = dict(plane.stats).get(xprof.PROFILE_START)
        if start is not None:
            began = int(start)
        lines = {line.name: list(line.events) for line in plane.lines}
        if xprof.MODULES_LINE in lines:
            ops = sorted((int(e.start_ns), int(e.start_ns + e.duration_ns), op_name(e.name))
                         for e in lines.get(xprof.OPS_LINE, []))
            starts = [o[0] for o in ops]
            for ev in lines[xprof.MODULES_LINE]:
                a, b = int(ev.start_ns), int(ev.start_ns + ev.duration_ns)
                inside = ops[bisect_left(starts, a):bisect_left(starts, b)]
                found.append(Execution(ev.name.split("(")[0], plane.name, a, b,
                                       inside or [(a, b, ev.name)]))
            continue
        for events in lines.values():
            for ev in events:
                stats = dict(ev.stats)
                if stats.get(xprof.HLO_MODULE) is None or ev.name.startswith("end:"):
                    continue
                start = int(ev.start_ns)
                runs.setdefault((str(stats[xprof.HLO_MODULE]),
                                 int(stats.get(xprof.DEVICE_ORDINAL, 0)),
                                 int(stats.get(xprof.RUN_ID, 0))), []).append(
                    (start, start + int(ev.duration_ns), ev.name))
    if not found:
        for (m, d, _), ops in runs.items():
            ops.sort()
            found.append(Execution(m, f"ordinal {d}", ops[0][0], max(b for _, b, _ in ops),
                                   ops, spanned=False))
    return found, began
