"""Compiling a case's step: ahead of time where the API allows, timed, with the program's
collectives inventoried (:mod:`podscale.worker.program`) and, for replay, its optimized
HLO saved; a backend that does not implement an op makes a skip record, not a failure."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from podscale.core import lines
from podscale.core.case import Case
from podscale.core.records import SkipRecord
from podscale.core.workload import Context, Step, Workload
from podscale.startup import faults
from podscale.startup.artifacts import file_name, save_hlo

if TYPE_CHECKING:
    from podscale.startup.faults import Fault
    from podscale.startup.runtime import Runtime
    from podscale.worker.writers import Writer



class Compiled(NamedTuple):
    """A case's compiled step: ``run()`` executes it on its arguments (blocking),
    ``call(*args)`` on other arguments of the same shapes and placement; ``launch()``
    dispatches it on its arguments without waiting and ``wait(result)`` waits (the
    ``chain`` and ``device`` timing methods)."""

    run: Callable[[], Any]
    seconds: float  # compile time
    kind: str  # what those seconds are
    program: dict | None  # the compiled program's inventory (None: pmap's first call)
    call: Callable[..., Any]
    launch: Callable[[], Any]
    wait: Callable[[Any], Any]
    module: str | None = None  # its XLA module's name, as a trace names its executions


def compile_step(step: Step, hlo_to: Path | None = None,
                 on_dispatch: Callable[[bool], None] | None = None,
                 hlo_info: dict[str, Any] | None = None) -> Compiled:
    """Compile ``step`` (timed); with ``hlo_to``, the optimized HLO module and its logical
    device order are saved there, with ``hlo_info`` (not timed). ``on_dispatch``: called
    with True each time the step is dispatched, before waiting for its result, and with
    False once it is ready (the watchdog's host/device split)."""
    import jax

    start = time.perf_counter()
    if step.aot:
        compiled = step.fn.lower(*step.args).compile()  # type: ignore[attr-defined]
        kind = "lower+compile"
    else:  # pmap's AOT executables reject host-local arrays in multi-process runs
        jax.block_until_ready(step.fn(*step.args))
        compiled, kind = step.fn, "first call (incl. execution)"
    seconds = time.perf_counter() - start
    if hlo_to is not None:
        save_hlo(compiled if step.aot else
                 step.fn.lower(*step.args).compile(),  # type: ignore[attr-defined]
                 hlo_to, **(hlo_info or {}))
    from podscale.startup.jaxapi import text_module_name
    from podscale.worker.program import program

    text = compiled.as_text() if step.aot else None
    fp = program(text, compiled) if text is not None else None
    args = step.args

    def wait(out: Any) -> Any:
        if on_dispatch is None:
            return jax.block_until_ready(out)
        on_dispatch(True)
        out = jax.block_until_ready(out)
        on_dispatch(False)
        return out

    def call(*other: Any) -> Any:
        return wait(compiled(*other))

    return Compiled(lambda: call(*args), seconds, kind, fp, call, lambda: compiled(*args),
                    wait, text_module_name(text) if text is not None else None)


def compile_workload(wl: Workload, ctx: Context, args: tuple, hlo_to: Path | None = None,
                     on_dispatch: Callable[[bool], None] | None = None,
                     hlo_info: dict[str, Any] | None = None,
                     fault: Fault | None = None, index: int = 0) -> Compiled:
    """The workload's program compiled on its placed ``args`` (:func:`compile_step`); a
    planted ``heavier`` fault (case ``index``) makes it read more."""
    program = wl.program(ctx)
    fn = faults.heavier(fault, ctx.process, index, program.fn, program.aot,
                        ctx.case.workload)
    return compile_step(Step(fn, tuple(args), program.aot), hlo_to, on_dispatch, hlo_info)


def hlo_name(case: Case) -> str:
    """A file name for a case id."""
    return file_name(case.id)


def unimplemented(exc: Exception) -> str | None:
    """The backend's one-line reason when compiling failed because it does not implement
    an op (every process's backend says the same), else None."""
    text = str(exc).strip()
    if "UNIMPLEMENTED" not in text:
        return None
    return text[text.index("UNIMPLEMENTED"):].splitlines()[0]


def compile_case(case: Case, wl: Workload, ctx: Context, args: tuple, rt: Runtime,
                 writer: Writer, hlo_dir: Path | None, fault: Fault | None = None,
                 index: int = 0) -> Compiled | None:
    """Compile the case's program on its placed ``args`` (process 0 saves its HLO to
    ``hlo_dir``); None, after a skip record, when the backend does not implement it."""
    try:
        where = hlo_dir / hlo_name(case) if hlo_dir is not None and rt.process == 0 \
            else None
        return compile_workload(wl, ctx, args, where, rt.dispatched, hlo_info={
            "case_id": case.id, "case_devices": [d.id for d in ctx.devices]},
            fault=fault, index=index)
    except Exception as exc:
        reason = unimplemented(exc)
        if reason is None:
            raise
        writer.write(SkipRecord(case.id, rt.process, case.to_dict(), reason))
        lines.say(f"[podscale p{rt.process}] case {case.id}: skipped, {reason}", err=True)
        return None
