"""A capture window's trace, reduced in the process that wrote it to one row per step,
with ``jax.profiler.ProfileData`` (no pandas, no xprof in the process): each step's
executions of the step's XLA module per device, their span, busy time (the union of op
times), collective time and op count, and the parts of :mod:`podscale.core.attribution`
(compute, callback, exposed and hidden collective, idle) of the device whose execution
ended last; and, for the window, every op's count and time (the op diff compares whole
lists: an op both processes ran is never "0" on one for being outside its top)."""

from __future__ import annotations

from pathlib import Path

from podscale.core.attribution import COLLECTIVE, attribute, op_totals, union
from podscale.startup.xspace import executions

#: ops per capture window whose counts and times the record keeps (None: every one)
OPS_KEPT: int | None = None


def reduce_steps(xplane: Path, name: str | None, first: int, skew_us: int = 0,
                 module: str | None = None, keep: tuple[int, int | None] = (0, None)
                 ) -> tuple[list[dict], dict[str, list[float]], float | None]:
    """One row per captured step: the executions of the step's XLA module (``module``, as
    its compiled program names it, else ``jit_<name>``, else the module with the most op
    time: a pmap's is ``jit__fun``) per device, numbered from ``first`` in order of their
    start, only those numbered in ``keep`` = [from, to) (a session opened before the step
    was known holds earlier ones, one closed after its end later ones): span, busy (union
    of op time), collective time and the parts (µs), and each collective op of the device
    that ended last as [name, start, duration] (µs; the start on this process's clock,
    which reads the wall clock plus ``skew_us``); the window's op totals
    (:func:`podscale.core.attribution.op_totals`); and the trace's origin on this process's
    clock (µs; its events count from it), where it says."""
    found, began = executions(xplane)
    execs = [(e.module, e.device, e.ops) for e in found]
    spent: dict[str, int] = {}  # op time per module
    for m, _, ops in execs:
        spent[m] = spent.get(m, 0) + sum(b - a for a, b, _ in ops)
    wanted = next((m for m in (module, f"jit_{name}" if name else None) if m in spent),
                  max(spent, key=lambda m: spent[m], default=None))
    per_device: dict[str, list[list[tuple[int, int, str]]]] = {}
    for m, device, ops in execs:
        if m == wanted:
            per_device.setdefault(device, []).append(ops)
    rows: dict[int, dict] = {}
    skip = max(keep[0] - first, 0)
    upto = None if keep[1] is None else max(keep[1] - first, 0)
    for runs in per_device.values():
        runs[:] = sorted(runs, key=lambda o: o[0][0])[skip:upto]
        for i, ops in enumerate(runs, start=skip):
            row = rows.setdefault(first + i, {"step": first + i, "module": wanted,
                                              "devices": 0, "start_ns": ops[0][0],
                                              "end_ns": 0, "busy_us": 0.0,
                                              "collective_us": 0.0, "ops": 0})
            spans = [(a, b) for a, b, _ in ops]
            end = max(b for _, b in spans)
            row["devices"] += 1
            row["start_ns"] = min(row["start_ns"], ops[0][0])
            row["busy_us"] = max(row["busy_us"], union(spans) / 1e3)
            row["collective_us"] = max(row["collective_us"], union(
                [(a, b) for a, b, n in ops if COLLECTIVE.search(n)]) / 1e3)
            row["ops"] += len(ops)
            if end > row["end_ns"]:  # the device that ended last: its parts
                parts = attribute(ops)
                row.update({k: round(v, 3) for k, v in parts.items()
                            if k not in ("busy_us", "collective_us")})
                row["end_ns"] = end
                if began is not None:  # on this process's clock
                    row["end_us"] = round((began + end) / 1e3 + skew_us, 1)
                row["collectives"] = [] if began is None else [
                    [n, round((began + a) / 1e3 + skew_us, 1), round((b - a) / 1e3, 1)]
                    for a, b, n in ops if COLLECTIVE.search(n)]
    return [rows[k] for k in sorted(rows)], \
        op_totals([ops for runs in per_device.values() for ops in runs], OPS_KEPT), \
        None if began is None else round(began / 1e3 + skew_us, 1)
