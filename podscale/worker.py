"""The worker: the program every process runs, locally or on a real cluster.

``python -m podscale.worker PLAN.json`` joins the distributed job (see
:mod:`podscale.runtime`), runs each case of the plan and appends raw records to
``records/<layout>/process-<i>.jsonl`` under the run directory.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from podscale import runtime
from podscale.cases import Case
from podscale.records import CaseRecord, GatheringWriter, RecordWriter, Sample
from podscale.timing import measure

EXIT_USAGE = 2


def say(rt, message: str) -> None:
    print(f"[podscale p{rt.process}] {message}", flush=True)


def inject_fault(rt, index: int) -> None:
    """Fault injection for testing the supervisor: ``PODSCALE_FAULT=KIND@PROCESS:CASE``
    with KIND one of raise, exit, hang, kill, triggered at the start of case CASE."""
    spec = os.environ.get("PODSCALE_FAULT", "")
    if not spec:
        return
    kind, _, where = spec.partition("@")
    process, _, case = where.partition(":")
    if int(process) != rt.process or int(case or 0) != index:
        return
    say(rt, f"injected fault: {kind}")
    if kind == "raise":
        raise RuntimeError(f"injected failure in process {rt.process}")
    if kind == "exit":
        os._exit(7)
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "hang":
        while True:
            time.sleep(3600)


def refuse_layout(rt, plan: dict) -> str | None:
    """Print why this job cannot run the plan (as the launcher expects it) and return it."""
    problem = check_layout(rt, plan)
    if problem:
        print(f"podscale: error: {problem}", flush=True)
    return problem


def check_layout(rt, plan: dict) -> str | None:
    """Why this job cannot run the plan's layouts, or None."""
    hosts, dph = plan.get("hosts"), plan.get("devices_per_host")
    if hosts is not None and rt.process_count != hosts:
        return f"the plan needs {hosts} processes, the job has {rt.process_count}"
    if dph is not None and rt.local_device_count < dph:
        return (f"the plan needs {dph} devices per process, process {rt.process} has "
                f"{rt.local_device_count}")
    return None


def run_layouts(plan: dict, rt) -> None:
    """Every layout of the plan, in order, on the same processes."""
    for sub in plan["layouts"]:
        run_plan({**plan, **sub}, rt)


def run_case(case: Case, plan: dict, rt, writer: RecordWriter):
    """Compile, warm up, time and check one case; return its step for a traced pass."""
    import suites

    say(rt, f"case {case.id}: prepare")
    prepared = suites.prepare(case, rt)
    step = prepared.compile()
    samples = [Sample(case.id, rt.process, "compile", 0, prepared.compile_seconds)]
    say(rt, f"case {case.id}: measure")
    for t in measure(
        step,
        clock=time.perf_counter,
        barrier=lambda: rt.barrier(f"case {case.id}"),
        warmup=plan["warmup"],
        iters=plan["iters"],
        sync_each=plan.get("sync_each", True),
    ):
        samples.append(Sample(case.id, rt.process, t.phase, t.iteration, t.seconds))
    check = prepared.check(step())
    record = CaseRecord(
        case_id=case.id,
        process=rt.process,
        params=case.to_dict(),
        bytes_per_process=prepared.bytes_per_process,
        flops_per_process=prepared.flops_per_process,
        bytes_per_device=prepared.bytes_per_device,
        checked=check.checked,
        wrong=check.wrong,
        max_error=check.max_error,
        result=check.result,
    )
    writer.write(record, *samples)
    say(rt, f"case {case.id}: done, {check.wrong} wrong of {check.checked}")
    return step


def run_plan(plan: dict, rt) -> None:
    """Run one layout's plan on an initialised runtime (all processes together)."""
    run_dir = Path(plan["run_dir"])
    records = run_dir / "records" / plan["layout"]
    if plan.get("gather"):
        writer = GatheringWriter(records, rt.process)
    else:
        writer = RecordWriter(records / f"process-{rt.process}.jsonl")
    writer.write(runtime.environment(rt, layout=plan["layout"]))
    writer.flush()
    say(rt, f"joined: {rt.process_count} processes, {rt.device_count} devices")
    traced_iters = int(plan.get("traced_iters", 0))
    steps = []
    for index, params in enumerate(plan["cases"]):
        case = Case(**params)
        inject_fault(rt, index)
        step = run_case(case, plan, rt, writer)
        writer.flush()
        if traced_iters:
            steps.append((case.id, step))
    if steps:
        from podscale.tracing import traced_pass

        say(rt, f"traced pass: {len(steps)} cases x {traced_iters} iterations")
        traced_pass(steps, rt, run_dir, plan["layout"], traced_iters, writer,
                    trace_root=plan.get("trace_dir"))
    writer.close()
    rt.barrier(f"podscale {plan['layout']} done")


def host_main(spec, run_dir: Path, *, gather: bool, cpu_devices: int | None) -> int:
    """``podscale worker``: what every host of a cluster job runs. Joins the job, then runs
    every case of ``spec`` whose host count is the job's process count, one layout per
    devices-per-host value on the same processes (device subsets). Process 0 writes the
    manifest; with ``gather`` it also writes every process's records."""
    from dataclasses import asdict, replace

    from podscale.cases import Layout, expand, group_by_layout
    from podscale.records import Manifest, write_manifest
    from podscale.runner import environment, make_plan, now

    if cpu_devices:
        os.environ["PODSCALE_CPU_DEVICES"] = str(cpu_devices)
    if not os.environ.get("PODSCALE_COORDINATOR"):
        os.environ.setdefault("PODSCALE_CLUSTER", "auto")
    rt = runtime.start()
    spec = replace(spec, hosts=[rt.process_count])
    layouts = group_by_layout(expand(spec))
    manifest = Manifest(run_id=run_dir.name, created=now(), command=list(sys.argv),
                        spec={**asdict(spec), "launcher": "podscale worker"},
                        layouts=[k.key for k in layouts], environment=environment())
    if rt.process == 0:
        run_dir.mkdir(parents=True, exist_ok=True)
        write_manifest(run_dir, manifest)
    status, error = "failed", None
    try:
        launched = Layout(rt.process_count, max(spec.devices_per_host))
        plan = make_plan(run_dir, launched, layouts, spec, gather=gather)
        error = refuse_layout(rt, plan)
        if error:
            return EXIT_USAGE
        run_layouts(plan, rt)
        status = "complete"
    finally:
        if rt.process == 0:
            write_manifest(run_dir, replace(manifest, status=status, error=error,
                                            finished=now()))
    runtime.shutdown(rt)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m podscale.worker PLAN.json``: join the job and run one layout's plan."""
    argv = sys.argv[1:] if argv is None else argv
    plan = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    rt = runtime.start()
    if refuse_layout(rt, plan):
        return EXIT_USAGE
    if plan.get("mode") == "seed":
        from suites import seed

        seed.main(rt, Path(plan["run_dir"]))
    else:
        run_layouts(plan, rt)
    runtime.shutdown(rt)
    return 0


def entry() -> None:
    """Run :func:`main`; on any exception print it and leave at once, without the exit
    handlers (JAX's distributed shutdown would wait for peers that will never come)."""
    try:
        code = main()
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    sys.exit(code)


if __name__ == "__main__":
    entry()
