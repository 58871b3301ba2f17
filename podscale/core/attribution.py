"""Where one execution of a step's XLA program spent its time on one device, from the ops
its trace holds (definitions after HolisticTraceAnalysis's temporal breakdown and
nsys-jax's exposed/hidden communication; ``docs/profiling-programs.md`` states them):

- **span**: first op start to last op end; **busy**: the union of every op's interval;
  **idle**: span minus busy (the device between its own kernels, or waiting on the host).
- **collective**: the union of the collective ops' intervals (all-reduce, all-gather,
  reduce-scatter, all-to-all, collective-permute, send/recv: on a process that arrives
  early it holds the wait for the last one). **hidden**: the part of it overlapped by other ops;
  **exposed**: collective minus hidden.
- **callback**: the union of host-callback ops (``pure_callback``, ``io_callback``,
  ``debug_callback``, infeed/outfeed); **compute**: the union of every other op, less
  what overlaps a collective or callback. The parts add up:
  ``compute + callback + exposed + hidden + idle == span`` when callbacks and collectives
  do not overlap each other.

Pure Python on ``(start_ns, end_ns, name)`` triples: it runs in the process right after a
capture, and in tests on hand-built tables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

COLLECTIVE = re.compile(r"all[-_]?reduce|psum|all[-_]?gather|reduce[-_]scatter|"
                        r"all[-_]to[-_]all|collective[-_]permute|ppermute|send|recv|nccl",
                        re.I)
CALLBACK = re.compile(r"callback|xla_python|infeed|outfeed", re.I)
PARTS = ("compute", "callback", "exposed", "hidden", "idle")

Op = tuple[int, int, str]


def union(spans: Sequence[tuple[float, float]]) -> float:
    """The length of the union of ``[a, b)`` intervals."""
    total: float = 0
    end = float("-inf")
    for a, b in sorted(spans):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def kind(name: str) -> str:
    """``collective``, ``callback`` or ``compute``, by the op's name."""
    if COLLECTIVE.search(name):
        return "collective"
    return "callback" if CALLBACK.search(name) else "compute"


def attribute(ops: list[Op]) -> dict[str, float]:
    """One execution's span, busy, collective and the parts (``PARTS``), microseconds."""
    if not ops:
        return {"span_us": 0.0, "busy_us": 0.0, "collective_us": 0.0,
                **{f"{p}_us": 0.0 for p in PARTS}}
    spans: dict[str, list[tuple[int, int]]] = {"collective": [], "callback": [],
                                               "compute": []}
    for a, b, name in ops:
        spans[kind(name)].append((a, b))
    every = [(a, b) for a, b, _ in ops]
    span = max(b for _, b in every) - min(a for a, _ in every)
    busy = union(every)
    coll, calls = union(spans["collective"]), union(spans["callback"])
    others = spans["compute"] + spans["callback"]
    hidden = coll + union(others) - union(spans["collective"] + others)
    # compute: what only the computing ops cover
    compute = busy - union(spans["collective"] + spans["callback"])
    return {"span_us": span / 1e3, "busy_us": busy / 1e3, "collective_us": coll / 1e3,
            "compute_us": compute / 1e3, "callback_us": calls / 1e3,
            "exposed_us": (coll - hidden) / 1e3, "hidden_us": hidden / 1e3,
            "idle_us": (span - busy) / 1e3}


def op_totals(executions: list[list[Op]], keep: int | None) -> dict[str, list[float]]:
    """Per op name over the executions: [count, total µs], most time first; the ``keep``
    ops with the most time (None: every op)."""
    totals: dict[str, list[float]] = {}
    for ops in executions:
        for a, b, name in ops:
            t = totals.setdefault(name, [0, 0.0])
            t[0] += 1
            t[1] += (b - a) / 1e3
    top = sorted(totals.items(), key=lambda kv: -kv[1][1])[:keep]
    return {name: [int(c), round(us, 3)] for name, (c, us) in top}
