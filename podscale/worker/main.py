"""The worker: the program every process runs, locally or on a real cluster.

``python -m podscale.worker PLAN.json`` joins the distributed job (see
:mod:`podscale.startup.runtime`), runs each case of the plan and appends raw records to
``records/<layout>/process-<i>.jsonl`` under the run directory. It imports JAX, numpy
and podscale's core only (no pandas, scipy or plotting).
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podscale.core import lines
from podscale.core import runfolder as rf
from podscale.core.case import Case
from podscale.core.errors import EXIT_DISK, DiskFull, UsageError
from podscale.core.plan import LayoutPlan, Plan
from podscale.core.records import CaseRecord, LedgerRecord, Sample, pack
from podscale.core.registry import load_source
from podscale.core.workload import Workload
from podscale.startup import faults, jaxapi, ledger, runtime
from podscale.worker.checks import run_checks
from podscale.worker.compiling import compile_case
from podscale.worker.measuring import KeepLast, context, depth, measure_each, passes, say
from podscale.worker.writers import GatheringWriter, RecordWriter

if TYPE_CHECKING:
    from podscale.startup.faults import Fault
    from podscale.startup.runtime import Runtime
    from podscale.worker.writers import Writer


EXIT_USAGE = 2
#: a full disk, a quota, a read-only filesystem: the run's files cannot be written
DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def check_layout(rt: Runtime, plan: Plan) -> str | None:
    """Why this job cannot run the plan's layouts, or None."""
    hosts, dph = plan.launched.processes, plan.launched.devices_per_host
    if rt.process_count != hosts:
        return f"the plan needs {hosts} processes, the job has {rt.process_count}"
    if rt.local_device_count < dph:
        return (f"the plan needs {dph} devices per process, process {rt.process} has "
                f"{rt.local_device_count}")
    return None


def _same_program(rt: Runtime, index: int, case: Case, program: dict | None) -> None:
    """Before the first collective runs: every process compiled the same collectives
    (kinds, shapes, groups) for this case, or none goes on."""
    client = jaxapi.coordination_client() if rt.process_count > 1 else None
    if client is not None and program is not None:
        from podscale.worker import preflight
        from podscale.worker.program import collectives_hash

        preflight.check_program(rt, client, index, case.id, collectives_hash(program))


def _record(case: Case, wl: Workload, process: int, kind: str, round_: int,
            fields: dict[str, Any]) -> CaseRecord:
    work = wl.work(case)
    return CaseRecord(
        case_id=case.id, process=process, case=case.to_dict(),
        bytes_per_process=work.bytes_per_process, flops_per_process=work.flops_per_process,
        bytes_per_device=work.bytes_per_device, collective=wl.collective_of(case),
        participants=work.participants, compile_kind=kind, round=round_,
        hosts_per_group=work.hosts_per_group,
        units={p.name: p.unit for p in wl.params if p.unit} or None,
        takes_part=wl.takes_part(case, process), **fields)


def run_case(case: Case, index: int, rt: Runtime, writer: Writer, fault: Fault | None,
             round_: int = 0,
             hlo_dir: Path | None = None) -> Callable[[], Any] | None:
    """Prepare, compile, warm up, time and check one case; return its step (traced pass),
    or None when the backend does not implement it (a skip record says why). ``hlo_dir``:
    process 0 saves the case's optimized HLO there (with the case's device ids)."""
    wl = load_source(case.source)
    rt.mark(index, case.id, "prepare")
    say(rt, f"case {case.id}: prepare")
    with ledger.phase("prepare"):
        ctx = context(case, rt)
        local = wl.inputs(ctx)
        rt.mark(index, case.id, "reference")
        expected = wl.reference(ctx, local)
        args = wl.place(ctx, faults.lower(fault, rt.process, index, local, case.workload))
    rt.mark(index, case.id, "ready")
    with ledger.phase("barrier"):
        rt.barrier(f"compile {case.id}")  # every process starts compiling together
    rt.mark(index, case.id, "compile")
    with ledger.phase("compile"):
        compiled = compile_case(case, wl, ctx, args, rt, writer, hlo_dir, fault, index)
    if compiled is None:
        return None
    with ledger.phase("barrier"):
        _same_program(rt, index, case, compiled.program)
    step = faults.wrap_step(fault, rt.process, index, compiled.run, case.workload)
    launch = faults.wrap_launch(fault, rt.process, index, compiled.launch, compiled.wait,
                                case.workload)
    each = case.settings.iters if "each" in case.settings.methods else 0
    last = KeepLast(step, case.settings.warmup + each)
    timed = measure_each(case, index, last, rt, round_, each)
    passed, ops = passes(case, index, compiled, launch, rt, round_,
                         depth(wl.work(case).bytes_per_device, rt))
    samples = [Sample(case.id, rt.process, "compile", 0, compiled.seconds, round=round_),
               *timed, *passed]
    with ledger.phase("check"):
        fields = run_checks(case, index, wl, ctx, expected, compiled, rt, fault,
                            outputs=last.kept)
    fields["ops"] = ops
    with ledger.phase("write"):
        writer.write(_record(case, wl, rt.process, compiled.kind, round_, fields),
                     *pack(samples))
    say(rt, f"case {case.id}: done, {fields['wrong']} wrong of {fields['checked']}")
    return step


def run_layout(plan: Plan, lp: LayoutPlan, rt: Runtime, offset: int = 0,
               round_: int = 0) -> int:
    """Run one layout's cases on an initialised runtime (all processes together); the
    traced pass (``--profile``) runs in round 0 only."""
    run_dir = Path(plan.run_dir)
    records = run_dir / rf.RECORDS / lp.layout.key
    writer: Writer
    if plan.gather:
        writer = GatheringWriter(records, rt.process)
    else:
        writer = RecordWriter(records / rf.process_name(rt.process, ".jsonl"))
    if round_ == 0:
        from podscale.startup.peaks import device_peaks

        writer.write(runtime.env_record(rt, layout=lp.layout.key, peaks=device_peaks()))
    writer.flush()
    say(rt, f"joined: {rt.process_count} processes, {rt.device_count} devices, "
            f"round {round_}")
    fault = faults.from_env()
    steps = []
    for index, case in enumerate(lp.cases, offset):
        rt.mark(index, case.id, "prepare")
        faults.at_case_start(fault, rt.process, index, lambda m: say(rt, m), case.workload)
        hlo_dir = run_dir / rf.HLO / lp.layout.key if plan.hlo and round_ == 0 else None
        step = run_case(case, index, rt, writer, fault, round_, hlo_dir)
        with ledger.phase("write"):
            writer.flush()
        if case.settings.traced_iters and step is not None and round_ == 0:
            steps.append((case.id, step, case.settings.traced_iters))
    if steps:
        from podscale.worker.tracing import traced_pass

        say(rt, f"traced pass: {len(steps)} cases")
        with ledger.phase("traced"):
            traced_pass(steps, rt, run_dir, lp.layout.key, writer,
                        trace_root=plan.trace_dir)
    marks, phases = ledger.take(first=offset == 0 and round_ == plan.round)
    writer.write(LedgerRecord(rt.process, lp.layout.key, round_, phases, marks,
                              ledger.take_memory(), ledger.take_cpu()))
    writer.close()
    rt.barrier(f"podscale {lp.layout.key} done")
    return offset + len(lp.cases)


def run_plan(plan: Plan, rt: Runtime) -> None:
    problem = check_layout(rt, plan)
    if problem:
        raise UsageError(problem)
    client = jaxapi.coordination_client() if rt.process_count > 1 else None
    if client is not None:  # every process runs the same program, or none runs
        from podscale.worker import preflight

        # the plan but where each host keeps its files (no shared filesystem: they differ)
        same = {k: v for k, v in plan.to_dict().items() if k not in ("run_dir", "trace_dir")}
        preflight.check(rt, client, {**same, "round": 0})
    if plan.program:  # a whole program instead of cases (podscale seed's listing)
        import importlib

        module, _, function = plan.program.partition(":")
        getattr(importlib.import_module(module), function)(rt, Path(plan.run_dir))
        return
    for round_ in range(plan.round, plan.round + plan.rounds):
        index = 0
        for lp in plan.layouts:
            index = run_layout(plan, lp, rt, index, round_)


def main(argv: list[str] | None = None) -> int:
    """``python -m podscale.worker PLAN.json``: join the job and run the plan."""
    argv = sys.argv[1:] if argv is None else argv
    plan = Plan.read(Path(argv[0]))
    os.environ.update(plan.env)  # before JAX is imported: XLA_FLAGS etc. are read then
    rt = runtime.start()
    try:
        run_plan(plan, rt)
    except UsageError as exc:  # the launcher reports this line as a usage error (exit 2)
        lines.say(f"podscale: error: {exc}", err=True)
        return EXIT_USAGE
    except (DiskFull, OSError) as exc:  # a file of the run's it could not write
        if isinstance(exc, OSError) and exc.errno not in DISK_ERRNOS:
            raise
        said = exc if isinstance(exc, DiskFull) else DiskFull(exc.filename, exc)
        lines.say(f"podscale: error: process {rt.process}: {said}", err=True)
        return EXIT_DISK
    faults.at_end(faults.from_env(), rt.process)
    runtime.shutdown(rt)
    return 0


def entry() -> None:
    """Run :func:`main`; on any exception print it and leave at once, without the exit
    handlers (JAX's distributed shutdown would wait for peers that will never come)."""
    try:
        code = main()
    except BaseException:
        lines.say(traceback.format_exc(), err=True)
        os._exit(1)
    sys.stdout.flush()
    if code:  # peers may still wait for this process: no exit handlers
        os._exit(code)
    sys.exit(0)
