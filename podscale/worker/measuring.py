"""One case measured on this process: its devices and mesh, the warm-up and ``each``
samples, the ``chain`` and ``device`` passes (how many calls they keep in flight), and the
step that keeps its last timed outputs for the check."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podscale.core import lines
from podscale.core.case import Case
from podscale.core.records import Sample
from podscale.core.timing import chain, depth_for, measure
from podscale.core.workload import Context
from podscale.startup import ledger

if TYPE_CHECKING:
    from podscale.startup.runtime import Runtime
    from podscale.worker.compiling import Compiled


def say(rt: Runtime, message: str) -> None:
    lines.say(f"[podscale p{rt.process}] {message}", err=True)


def case_devices(case: Case) -> list:
    """The global devices a case runs on: the first ``devices_per_host`` local devices of
    every process, so one set of processes can serve every smaller layout."""
    import jax

    by_process: dict[int, list] = {}
    for d in sorted(jax.devices(), key=lambda d: (d.process_index, d.id)):
        by_process.setdefault(d.process_index, []).append(d)
    return [d for p in sorted(by_process) for d in by_process[p][: case.devices_per_host]]


def context(case: Case, rt: Runtime) -> Context:
    """The case's devices as a mesh with the layout's named axes (hosts first)."""
    import numpy as np
    from jax.sharding import Mesh

    devices = case_devices(case)
    shape = [size for _, size in case.layout.axes]
    mesh = Mesh(np.array(devices, dtype=object).reshape(shape), case.layout.axis_names)
    return Context(case, rt.process, rt.process_count, devices, mesh)


def measure_each(case: Case, index: int, step: Callable[[], Any], rt: Runtime,
             round_: int, iters: int) -> list[Sample]:
    """Warm-up and ``each`` samples of one case (none of ``each`` where the case's timing
    leaves it out); progress marked at every barrier (outside the clocked region)."""
    say(rt, f"case {case.id}: measure")
    rt.mark(index, case.id, "warmup")
    calls = itertools.count()

    def barrier() -> None:  # before timed iteration k (or once, before the loop)
        rt.mark(index, case.id, "timed", next(calls))
        with ledger.phase("barrier"):
            rt.barrier(f"case {case.id}")

    out = [Sample(case.id, rt.process, t.phase, t.iteration, t.seconds, round=round_)
           for t in measure(step, clock=time.perf_counter, barrier=barrier,
                            warmup=case.settings.warmup, iters=iters,
                            sync_each=case.settings.sync == "each")]
    for s in out:
        ledger.add(s.phase, s.seconds)
    return out


def passes(case: Case, index: int, compiled: Compiled, launch: Callable[[], Any],
            rt: Runtime, round_: int, depth: int
            ) -> tuple[list[Sample], dict[str, list[float]] | None]:
    """The case's ``chain`` and ``device`` samples, where its timing names them: the
    step launched back to back (``launch``: dispatch without waiting, at most ``depth``
    in flight), every process starting together at a barrier; and the device pass's ops
    (per op: count and µs per execution; None without one)."""
    methods, length = case.settings.methods, case.settings.iters

    def barrier(what: str) -> Callable[[], None]:
        def meet() -> None:
            rt.mark(index, case.id, what)
            with ledger.phase("barrier"):
                rt.barrier(f"{what} {case.id}")
        return meet

    out: list[Sample] = []
    ops = None
    if "chain" in methods:
        with ledger.phase("chain"):
            out += [Sample(case.id, rt.process, t.phase, t.iteration, t.seconds, round=round_)
                    for t in chain(launch, compiled.wait, clock=time.perf_counter,
                                   barrier=barrier("chain"), length=length, depth=depth)]
    if "device" in methods:
        from podscale.worker.devicetime import device_pass

        rt.mark(index, case.id, "device")
        with ledger.phase("device"):
            got = device_pass(case.id, rt.process, launch, compiled.wait, barrier("device"),
                              length, (d.id for d in case_devices(case)), compiled.module,
                              round_, depth)
        if got.note:
            say(rt, f"case {case.id}: {got.note}")
        out, ops = out + got.samples, got.ops
    return out, ops


#: calls a chain or device pass keeps in flight where XLA:CPU's collectives between
#: processes (gloo) run on several devices per process: none beyond the one dispatched
#: (each waited on before the next). Calls overlapping there stall now and then inside a
#: dispatch, on every process: ``podscale run psum --hosts 2 --devices-per-host 2 --sizes
#: 1M`` hung at 50 calls in flight, at 16, and at 2 over 400 iterations
CPU_COLLECTIVE_DEPTH = 0


def depth(bytes_per_call: int, rt: Runtime) -> int:
    """How many calls a chain or device pass keeps in flight (:func:`depth_for`), at most
    :data:`CPU_COLLECTIVE_DEPTH` on simulated hosts of several CPU devices each."""
    import jax

    depth = depth_for(bytes_per_call)
    if rt.process_count > 1 and rt.local_device_count > 1 and jax.default_backend() == "cpu":
        return min(depth, CPU_COLLECTIVE_DEPTH)
    return depth


class KeepLast:
    """The step, keeping the outputs of its ``calls``-th call (the last timed iteration):
    the float check compares those, so checking runs no extra collective."""

    def __init__(self, step: Callable[[], Any], calls: int) -> None:
        self.step, self.left, self.kept = step, calls, None

    def __call__(self) -> Any:
        out = self.step()
        self.left -= 1
        if not self.left:
            self.kept = out
        return out
