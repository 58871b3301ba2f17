"""The timing method ``device``: each execution's time on the device, from a profiler trace.

The case's compiled step is launched back to back under ``jax.profiler`` (all processes
meet at a barrier inside the session first; on CPU, whose client runs executions
concurrently, each call is waited on and the processes meet before each). The session's
XSpace is reduced in this process (:mod:`podscale.startup.xspace`) to the executions of
the case's own XLA module, each one a raw sample of phase ``device`` tagged with its
device. On TPU and GPU an execution's time is its module's span on the device's timeline;
on CPU, where the client records ops but no module, the union of its ops (AMB's
``xprof_timing`` reads the same events). The trace is written to a private temporary
directory and removed.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from podscale.core import xprof
from podscale.core.records import Sample
from podscale.core.timing import back_to_back
from podscale.startup.xspace import Execution, executions


class DeviceTimes(NamedTuple):
    """The samples of one device pass, where it fell short why (for the log), and its
    ops: per op name, [count, µs] per execution of the module (:func:`op_times`)."""

    samples: list[Sample]
    note: str | None
    ops: dict[str, list[float]] | None = None


#: the ops per case a record keeps (the most time first; the rest summed as OTHER_OPS)
OPS_KEPT = 40
OTHER_OPS = "(other ops)"


def op_times(runs: dict[int, list[Execution]], keep: int = OPS_KEPT
             ) -> dict[str, list[float]] | None:
    """Per op name, its count and device time (µs) per execution of the case's module,
    over every device's executions: the ``keep`` with the most time, the rest summed under
    :data:`OTHER_OPS` (None where there is no execution)."""
    from podscale.core.attribution import op_totals

    execs = [e.ops for found in runs.values() for e in found]
    if not execs:
        return None
    every = op_totals(execs, None)
    n = len(execs)
    out = {name: [round(c / n, 3), round(us / n, 3)]
           for name, (c, us) in list(every.items())[:keep]}
    rest = list(every.values())[keep:]
    if rest:
        out[OTHER_OPS] = [round(sum(c for c, _ in rest) / n, 3),
                          round(sum(us for _, us in rest) / n, 3)]
    return out


def pick(found: Iterable[Execution], module: str | None, devices: dict[int, int],
         length: int) -> tuple[dict[int, list[Execution]], str]:
    """The executions of the case's module per device id (``devices``: the trace's device
    ordinal -> JAX device id), the last ``length`` of each by start, and the module
    chosen: ``module`` where the trace has it, else the one with the most device time
    (a ``pmap``'s program has no ahead-of-time name)."""
    found = [e for e in found if e.ordinal in devices]
    spent: dict[str, int] = {}
    for e in found:
        spent[e.module] = spent.get(e.module, 0) + e.device_ns
    chosen = module if module in spent else max(spent, key=lambda m: spent[m], default="")
    out: dict[int, list[Execution]] = {}
    for e in sorted(found, key=lambda e: e.start):
        if e.module == chosen:
            out.setdefault(devices[e.ordinal], []).append(e)  # type: ignore[index]
    return {d: runs[-length:] for d, runs in out.items()}, chosen


def ordinals(device_ids: Iterable[int]) -> dict[int, int]:
    """This process's devices among ``device_ids``: each number a trace may name it by ->
    its id. The CPU client names a device by its id; a TPU or GPU plane by its number on
    the host (``local_hardware_id``, else its place among the local devices)."""
    import jax

    wanted = set(device_ids)
    mine = [(i, d) for i, d in enumerate(jax.local_devices()) if d.id in wanted]
    out = {i: d.id for i, d in mine}
    out.update({int(d.local_hardware_id): d.id for _, d in mine
                if getattr(d, "local_hardware_id", None) is not None})
    out.update({d.id: d.id for _, d in mine})
    return out


def in_order() -> bool:
    """Whether the devices run one execution after another (TPU, GPU streams), so calls
    can be launched back to back; the CPU client runs a step's executions concurrently on
    its threads (a back-to-back psum's executions overlap, each one waiting for the
    others'), so there every call is waited on and the processes meet before each."""
    import jax

    return jax.devices()[0].platform != "cpu"


def _trace(launch: Callable[[], Any], wait: Callable[[Any], Any],
           barrier: Callable[[], None], length: int, into: Path,
           depth: int | None) -> Path | None:
    """Run ``length`` calls under the profiler (back to back where the devices run them in
    order, else each waited on); the XSpace file written."""
    import jax

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.host_tracer_level = 1  # the CPU client's op events are host events: level 1 keeps them
    ordered = in_order()
    jax.profiler.start_trace(str(into), profiler_options=options)
    try:
        barrier()
        if ordered:
            back_to_back(launch, wait, length, depth)
        for i in range(0 if ordered else length):
            if i:
                barrier()
            wait(launch())
    finally:
        jax.profiler.stop_trace()
    return next(iter(xprof.session_files(into)), None)


def device_pass(case_id: str, process: int, launch: Callable[[], Any],
                wait: Callable[[Any], Any], barrier: Callable[[], None], length: int,
                device_ids: Iterable[int], module: str | None,
                round_: int = 0, depth: int | None = None) -> DeviceTimes:
    """``length`` back-to-back executions of the case's step under the profiler (at most
    ``depth`` in flight): one sample per execution and device (phase ``device``,
    ``iteration`` its order)."""
    tmp = Path(tempfile.mkdtemp(prefix="podscale-device-"))
    try:
        try:
            xplane = _trace(launch, wait, barrier, length, tmp, depth)
        except RuntimeError as exc:  # the profiler is held (a session of someone else's)
            return DeviceTimes([], f"no device time: the profiler would not start ({exc})")
        if xplane is None:
            return DeviceTimes([], "no device time: the profiler wrote no trace")
        found, _ = executions(xplane)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    runs, chosen = pick(found, module, ordinals(device_ids), length)
    samples = [Sample(case_id, process, "device", i, e.device_ns / 1e9, device, round_)
               for device, execs in sorted(runs.items()) for i, e in enumerate(execs)]
    short = {d: len(e) for d, e in runs.items() if len(e) < length}
    note = None
    if not runs:
        note = f"no device time: the trace holds no execution of {module or 'the step'}"
    elif short:
        note = (f"device time of {chosen}: {min(short.values())} of {length} executions in "
                "the trace on some device")
    elif module and chosen != module:
        note = f"device time of {chosen} (the trace has no module {module})"
    return DeviceTimes(samples, note, op_times(runs))
