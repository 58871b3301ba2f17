"""``podscale worker``: what every host of a cluster job runs (under mpirun, srun, on TPU
VMs or Kubernetes pods). It joins the job, runs every case of the grid whose host count is
the job's process count (each devices-per-host value on the same processes, as device
subsets), and process 0 keeps the manifest through the same lifecycle as ``podscale run``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from podscale.core import envnames, lines
from podscale.core.grid import Grid, expand_all, spec_of
from podscale.core.plan import Plan, launches
from podscale.core.records import Manifest, lifecycle
from podscale.startup import jaxapi, runtime
from podscale.worker.main import run_plan


def _own_layout(grid: Grid, processes: int) -> Grid:
    """The grid on this job's processes: in the slices ``--slices`` names, else those of
    a multi-slice job's ``MEGASCALE_NUM_SLICES`` (one slice where neither says), each of
    the job's processes divided among them."""
    from podscale.core.errors import UsageError

    slices = grid.slices if grid.slices != (1,) else (runtime.job_slices(),)
    if len(slices) > 1 or processes % slices[0]:
        raise UsageError(f"this job has {processes} process(es): podscale worker runs them "
                         f"as one slice count that divides them, not --slices "
                         f"{','.join(map(str, slices))}")
    return replace(grid, hosts=(processes // slices[0],), slices=slices)


def host_main(grids: list[Grid], run_dir: Path, *, gather: bool, cpu_devices: int | None,
              trace_dir: str | None = None, rounds: int = 1, print_run: bool = False,
              hosts: tuple[int, ...] | None = None, case_timeout: float | None = None,
              fit_devices: bool = False) -> int:
    """Run the grids on this job's processes; ``rounds`` repetitions run one after
    another in the same processes (a cluster job cannot relaunch itself). ``print_run``
    (with ``gather``): process 0 ends its output with the run as a text block
    (:mod:`podscale.core.runblock`), however the run ended, for ``podscale collect``.
    ``hosts``: the process counts the command line asked for (the job must have one).
    ``case_timeout``: every process ends (exit 5) when the job makes no progress for this
    long, naming the processes behind (:mod:`podscale.worker.watchdog`). ``fit_devices``
    (devices per host not given): the grid's values this job's processes have devices for
    (said where some are left out), else all of their devices."""
    from podscale.worker.preflight import plant_env

    plant_env()
    if cpu_devices:
        os.environ[envnames.CPU_DEVICES] = str(cpu_devices)
    if not os.environ.get(envnames.COORDINATOR):
        os.environ.setdefault(envnames.CLUSTER, "auto")
    rt = runtime.start()
    if hosts and rt.process_count not in hosts:
        from podscale.core.errors import UsageError

        raise UsageError(f"this job has {rt.process_count} process(es) but --hosts asks for "
                         f"{','.join(map(str, hosts))}: podscale worker runs the cases of "
                         "the job's own process count (leave --hosts out)")
    grids = [_own_layout(g, rt.process_count) for g in grids]
    if fit_devices:
        grids = _on_own_devices(grids, rt)
    ((launched, layouts),) = launches(expand_all(grids))
    plan = Plan(str(run_dir.resolve()), launched, tuple(layouts), gather=gather,
                trace_dir=trace_dir, rounds=rounds)
    lead = rt.process == 0
    if lead:
        run_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest.new(run_dir.name, {**spec_of(grids), "launcher": "podscale worker",
                                           "rounds": rounds, "gather": gather},
                            [lp.layout.key for lp in layouts])
    rt, unwatch, signalled = _watch(rt, run_dir, case_timeout, lead, grids[0].slices[0])
    _on_signals(signalled)
    try:
        with lifecycle(run_dir, manifest, write=lead):
            _run_unless_ending(plan, rt, signalled)
    finally:
        if print_run and lead:
            from podscale.core.runblock import encode

            lines.say("\n".join(encode(run_dir)))
    unwatch()  # no call of the watchdog's in flight when the client goes
    runtime.shutdown(rt)
    return 0


def _on_own_devices(grids: list[Grid], rt: runtime.Runtime) -> list[Grid]:
    have = rt.local_device_count
    kept = [replace(g, devices_per_host=tuple(d for d in g.devices_per_host if d <= have)
                    or (have,)) for g in grids]
    left = sorted({d for g in grids for d in g.devices_per_host if d > have})
    if left and rt.process == 0:
        lines.say(f"podscale: note: each process has {have} device(s): left out "
                  f"--devices-per-host {','.join(map(str, left))}", err=True)
    return kept


def _run_unless_ending(plan: Plan, rt: runtime.Runtime,
                       signalled: Callable[[], None]) -> None:
    """The plan; once the watchdog is ending the job, an error here is its consequence (a
    peer left a collective, or the launcher's SIGTERM once a peer left: mpirun's): not
    recorded over the watchdog's reason nor reported, the watchdog's exit comes first; a
    signal that comes before this process's watchdog has spoken, where a peer's has,
    records the peer's verdict (``signalled``)."""
    from podscale.worker import watchdog

    try:
        run_plan(plan, rt)
    except BaseException as exc:
        if watchdog.STOPPING.is_set():
            _wait_for_the_watchdog()
        if isinstance(exc, KeyboardInterrupt):
            signalled()
        raise


def _on_signals(signalled: Callable[[], None]) -> None:
    """The launcher's SIGTERM or SIGHUP, decided when it comes: ignored once the watchdog
    is ending the job (mpirun's, once a peer left: the watchdog's exit comes first); where
    a peer has reached a verdict, that verdict (``signalled`` records it and ends); else a
    stop as Ctrl-C's, recorded 'interrupted'."""
    import signal
    import threading

    from podscale.core.errors import Terminated
    from podscale.worker import watchdog

    def handle(signum: int, _frame: object) -> None:
        if watchdog.STOPPING.is_set():
            return
        signalled()
        for sig in (signal.SIGTERM, signal.SIGHUP):  # once: cleanup is not interrupted
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, handle)


def _wait_for_the_watchdog(most: float = 60) -> None:
    """Let the watchdog's exit come first: the launcher's signals (mpirun's SIGTERM, once
    a peer left) are ignored meanwhile; one that came during the wait had been recorded
    as 'interrupted' over the watchdog's verdict."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        try:
            time.sleep(0.5)
        except KeyboardInterrupt:  # a Ctrl-C, or a signal raised just before
            continue


def _watch(rt: runtime.Runtime, run_dir: Path, timeout: float | None, lead: bool,
           slices: int) -> tuple[runtime.Runtime, Callable[[], None], Callable[[], None]]:
    """Start the stuck-rank watchdog (a job of several processes, with a timeout); the
    runtime that marks its progress for it, the function that stops it, and the one a
    signal calls: where a peer has reached a verdict, record it and end as the watchdog
    does."""
    client = jaxapi.coordination_client()
    if not timeout or rt.process_count < 2 or client is None:
        return rt, lambda: None, lambda: None
    from podscale.core.records import now, read_manifest, write_manifest
    from podscale.worker import watchdog

    rt = replace(rt, progress=watchdog.Progress(rt.process))

    def record(message: str) -> None:  # process 0 keeps the manifest
        if lead:
            m = read_manifest(run_dir)
            write_manifest(run_dir, replace(m, status="failed", error=message,
                                            finished=now()))

    def signalled() -> None:
        told = watchdog.peers_verdict(client)
        if told:
            watchdog.STOPPING.set()
            record(told)
            lines.say(f"podscale: error: process {rt.process}: {told}", err=True)
            os._exit(watchdog.EXIT_STUCK)

    return rt, watchdog.start(rt.progress, client, rt.process_count, timeout, record,
                              slices), signalled
