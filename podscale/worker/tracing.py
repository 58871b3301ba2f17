"""The traced pass: a JAX profiler trace per process, separate from timed iterations.

Each process traces into a private directory, then moves its XSpace to
``traces/<layout>/plugins/profile/<run_id>/process-<i>.xplane.pb`` so that
``tensorboard --logdir traces`` / XProf shows one session with one host per process.
A ``process-<i>.sync.json`` sidecar holds the wall-clock time of a ``podscale_sync``
annotation taken right after a barrier; analysis aligns the processes' traces on it.
"""

from __future__ import annotations

import functools
import json
import shutil
import socket
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.core import runfolder as rf
from podscale.core import xprof
from podscale.core.records import SYNC_MARK, Sample, pack
from podscale.core.timing import measure
from podscale.startup.artifacts import stamp

if TYPE_CHECKING:
    from podscale.startup.runtime import Runtime
    from podscale.worker.writers import Writer



def _options(session_id: str | None) -> Any:
    """The traced pass's profiler options: no Python tracer, the host's XLA ops."""
    import jax

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    options.host_tracer_level = 2
    if session_id:
        options.session_id = session_id
    return options


def trace_dir(run_dir: Path, layout: str) -> Path:
    return run_dir / rf.TRACES / layout


def _annotation(case_id: str, i: int) -> Any:
    import jax

    return jax.profiler.StepTraceAnnotation(case_id, step_num=i)


def traced_pass(
    steps: Iterable[tuple[str, Callable[[], Any], int]],
    rt: Runtime,
    run_dir: Path,
    layout: str,
    writer: Writer,
    trace_root: str | None = None,
) -> str:
    """Run each (case id, step, iterations) under the profiler, every iteration annotated.

    With ``trace_root`` (a shared path or ``gs://...``; real hosts with distinct names),
    every host writes straight to ``<trace_root>/<layout>/plugins/profile/<run>/<host>.xplane.pb``
    through JAX's own filesystem layer; otherwise the trace lands in the run directory."""
    import jax

    base = trace_dir(run_dir, layout)
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / rf.temporary(rt.process)
    shutil.rmtree(tmp, ignore_errors=True)
    options = _options(run_dir.name if trace_root else None)
    target = f"{trace_root.rstrip('/')}/{layout}" if trace_root else str(tmp)
    rt.barrier("podscale trace start")
    jax.profiler.start_trace(target, profiler_options=options)
    try:
        stamp(run_dir.name, rt.process)
        rt.barrier("podscale trace sync")
        with jax.profiler.TraceAnnotation(SYNC_MARK):
            anchor_ns = time.time_ns()
        samples = [
            Sample(case_id, rt.process, t.phase, t.iteration, t.seconds)
            for case_id, step, iters in steps
            for t in measure(
                step,
                clock=time.perf_counter,
                barrier=functools.partial(rt.barrier, f"traced {case_id}"),
                warmup=0,
                iters=iters,
                phase="traced",
                around=functools.partial(_annotation, case_id),
            )
        ]
    finally:
        jax.profiler.stop_trace()
    writer.write(*pack(samples))  # after the session: no file I/O inside the trace
    host = socket.gethostname()
    (base / rf.process_name(rt.process, ".sync.json")).write_text(json.dumps(
        {"process": rt.process, "host": host, "mark": SYNC_MARK, "anchor_unix_us": anchor_ns / 1e3}
    ))
    if trace_root:
        return f"{target}/{'/'.join(xprof.SESSIONS)}/{run_dir.name}/{host}{xprof.SUFFIX}"
    dest = xprof.keep(tmp, base, run_dir.name, rt.process)
    if dest is None:
        raise RuntimeError(f"the profiler wrote no trace under {tmp}")
    return str(dest)
