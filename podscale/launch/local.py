"""Local launcher: one real OS process per simulated host, supervised.

Every process runs ``python -m podscale.worker PLAN`` with a coordinator on
127.0.0.1. The supervisor stops the whole layout as soon as one process fails or
no process makes progress for ``case_timeout`` seconds, kills every process group it
started (no orphans), and names the culprit with its last line of output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from podscale.core import envnames
from podscale.core import runfolder as rf
from podscale.core.case import Layout
from podscale.core.environment import SOURCE_ROOT
from podscale.core.errors import UsageError, WorkerFailed
from podscale.launch.exits import HANG, describe_exit, last_line, never_joined, timed_out
from podscale.launch.rankenv import RANK_ENVS

if TYPE_CHECKING:
    from podscale.launch.chips import Chips

TPU_PORT = 8476  # the TPU runtime's documented first port of its per-process addresses
_SOURCE_ROOT = str(SOURCE_ROOT)


def free_port(host: str = "127.0.0.1", wanted: int = 0) -> int:
    """``wanted`` if nothing uses it on ``host`` (0: any), else a free port no outgoing
    connection takes meanwhile (:func:`podscale.core.ports.listen_port`)."""
    from podscale.core.ports import bindable, listen_port

    if wanted and bindable(host, wanted):
        return wanted
    if wanted:
        print(f"podscale: coordinator port {wanted} is busy; choosing another",
              file=sys.stderr)
    return listen_port(host)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@dataclass
class Worker:
    """One supervised child: a worker process, or an external launcher (mpirun, srun)
    whose combined, rank-tagged output says which process failed."""

    index: int
    popen: subprocess.Popen
    log: Path

    def culprit(self) -> tuple[str, str]:
        """(who, their last meaningful line of output)."""
        return f"process {self.index}", last_line(self.log)

    def failure(self, code: int) -> str:
        return describe_exit(code)


def worker_env(layout: Layout, index: int, port: int, rank_env: str | None = None,
               extra: Mapping[str, str] | None = None, chips: Chips | None = None,
               chip_ports: Sequence[int] = ()) -> dict[str, str]:
    """Process ``index``'s environment: this one's, ``extra`` on it, then podscale's own
    variables (the layout, the coordinator, the lifeline) and, with ``chips``, its share
    of this machine's chips (:func:`podscale.launch.chips.process_env`; without them,
    ``--devices-per-host`` simulated CPU devices)."""
    env = {**os.environ, **(extra or {})}
    if rank_env is not None:
        env.update(RANK_ENVS[rank_env](index, layout.processes))
    if chips is not None:
        from podscale.launch.chips import process_env

        env.pop(envnames.CPU_DEVICES, None)
        env.update(process_env(chips, layout.processes, index, list(chip_ports)))
    else:
        env[envnames.CPU_DEVICES] = str(layout.devices_per_host)
    env.update({
        envnames.NUM_PROCESSES: str(layout.processes),
        envnames.PROCESS_ID: str(index),
        "PYTHONUNBUFFERED": "1",
        envnames.PARENT_PID: str(os.getpid()),  # the worker dies with this process
        "PYTHONPATH": os.pathsep.join(p for p in (_SOURCE_ROOT, env.get("PYTHONPATH")) if p),
    })
    if layout.slices > 1 and chips is None:  # as a multi-slice launcher (xpk) gives them
        env.update({"MEGASCALE_COORDINATOR_ADDRESS": "127.0.0.1",
                    "MEGASCALE_NUM_SLICES": str(layout.slices),
                    "MEGASCALE_SLICE_ID": str(layout.slice_of(index))})
    if layout.processes > 1:
        env[envnames.COORDINATOR] = f"127.0.0.1:{port}"
    else:
        env.pop(envnames.COORDINATOR, None)
    return env


def _env_of(env: dict[str, str], program: Program | None) -> dict[str, str]:
    """A simulated host's environment; a program keeping its own device count says so."""
    if program is not None and program.own_devices and envnames.CPU_DEVICES in env:
        env[envnames.CPU_DEVICES] = envnames.PROGRAMS_OWN
    return env


def terminate(workers: Sequence[Worker], grace: float = 2.0) -> None:
    """SIGTERM every worker's process group, then SIGKILL what is left after ``grace``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for w in workers:
            try:
                os.killpg(w.popen.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        for w in workers:
            try:
                w.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        if all(w.popen.poll() is not None for w in workers):
            return


def _progress(workers: Sequence[Worker], watched: Sequence[Path]) -> int:
    total = 0
    for path in [w.log for w in workers] + list(watched):
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


def supervise(
    workers: Sequence[Worker], label: str, case_timeout: float, watched: Sequence[Path] = (),
    on_poll: Callable[[], None] | None = None, workers_ours: bool = True,
) -> None:
    """Wait for all workers; raise :class:`WorkerFailed` on the first failure or hang.
    ``on_poll`` is called on every round (progress display); ``workers_ours``: the
    processes run podscale's worker (not a program, whose exit codes are its own)."""
    seen, since = -1, time.monotonic()
    start = {p: p.stat().st_size if p.exists() else 0 for p in watched}
    while True:
        if on_poll is not None:
            on_poll()
        codes = [w.popen.poll() for w in workers]
        failed = [(w, c) for w, c in zip(workers, codes) if c not in (None, 0)]
        if failed:
            # the cause is a worker killed by a signal, else the one that failed first
            # (its last output predates the errors of peers that lost their connection)
            w, code = min(failed, key=lambda f: (f[1] > 0, _mtime(f[0].log), f[0].index))
            who, line = w.culprit()
            disk = _disk_failure(w, code if workers_ours else None, line, label)
            if disk is not None:
                raise disk
            if line.startswith(HANG):  # the attached program's roll-call names the process
                raise WorkerFailed(f"{label}: {line[len('podscale: '):]} (logs: "
                                   f"{w.log.parent})", code=code)
            if line.startswith("podscale: error: "):
                raise UsageError(f"{label}: {who}: {line[len('podscale: error: '):]}")
            missing = never_joined(watched)
            absent = f"; never joined the job: process(es) {','.join(map(str, missing))}" \
                if missing else ""
            raise WorkerFailed(
                f"{label}: {who} {w.failure(code)}; last output: {line}{absent} (log: {w.log})",
                code=code)
        if all(code == 0 for code in codes):
            return
        now, progress = time.monotonic(), _progress(workers, watched)
        if progress != seen:
            seen, since = progress, now
        elif now - since > case_timeout and (why := timed_out(now - since, case_timeout,
                                                                watched, start)):
            stuck = [w for w, code in zip(workers, codes) if code is None]
            lasts = "; ".join("{}: {}".format(*w.culprit()) for w in stuck)
            raise WorkerFailed(f"{label}: {why}, stopped {len(stuck)} running process(es); "
                               f"last output: {lasts} (logs: {stuck[0].log.parent})")
        time.sleep(0.05)


def _disk_failure(w: Worker, code: int | None, line: str, label: str
                  ) -> WorkerFailed | None:
    """A failure where the run's disk is full, or the worker said it could not write its
    files (its line may be missing: its log is on that disk), else None (``code`` None:
    the process runs a program whose exit codes are its own)."""
    from podscale.core.errors import EXIT_DISK
    from podscale.launch.room import full_disk

    full = full_disk(w.log.parents[1])  # RUN/logs/<layout>/process-<i>.log
    if code != EXIT_DISK and full is None:
        return None
    if code == EXIT_DISK and line.startswith("podscale: error: "):
        return WorkerFailed(f"{label}: {line.removeprefix('podscale: error: ')}", code=code)
    said = f"; {full}" if full else " (it could not write the run's files)"
    return WorkerFailed(f"{label}: process {w.index} {w.failure(w.popen.returncode)}{said}",
                        code=w.popen.returncode)


@dataclass(frozen=True)
class Program:
    """A program each local process runs instead of the worker (``podscale profile``):
    ``argv`` after the interpreter (``-m podscale attach ... SCRIPT``), process 0's
    standard input (as mpirun forwards it to rank 0; the others': none), and a launcher's
    rank variables each process also gets (:data:`RANK_ENVS`)."""

    argv: Sequence[str]
    stdin: int | IO[Any] | None = None
    rank_env: str | None = None
    #: variables each process gets on top of the launcher's environment (podscale's own
    #: variables still win)
    env: Mapping[str, str] = field(default_factory=dict)
    #: simulated hosts of the program's own CPU device count (no --devices-per-host)
    own_devices: bool = False


def run_local(
    layout: Layout,
    plan: Path,
    logs: Path,
    *,
    case_timeout: float,
    watched: Sequence[Path] = (),
    port: int = 0,
    label: str | None = None,
    on_poll: Callable[[], None] | None = None,
    program: Program | None = None,
    chips: Chips | None = None,
) -> list[Path]:
    """Run ``plan`` on ``layout.processes`` local processes; return their log files.
    ``program``: each process runs it instead of the worker on ``plan`` (``podscale
    profile``); ``chips``: this machine's chips, split among the processes (None: CPU
    devices simulated)."""
    argv = program.argv if program is not None else None
    stdin = program.stdin if program is not None else None
    rank_env = program.rank_env if program is not None else None
    extra = program.env if program is not None else {}
    logs.mkdir(parents=True, exist_ok=True)
    port = free_port(wanted=port) if layout.processes > 1 else 0
    chip_ports = [free_port(wanted=TPU_PORT + i) for i in range(layout.processes)] \
        if chips is not None and chips.platform == "tpu" and layout.processes > 1 else []
    workers: list[Worker] = []
    try:
        for i in range(layout.processes):
            log = logs / rf.process_name(i, ".log")
            with log.open("w", encoding="utf-8") as fh:
                popen = subprocess.Popen(
                    [sys.executable,
                     *(argv if argv is not None else ("-m", "podscale.worker", str(plan)))],
                    stdin=stdin if i == 0 and stdin is not None else subprocess.DEVNULL,
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    env=_env_of(worker_env(layout, i, port, rank_env, extra, chips,
                                           chip_ports), program),
                    start_new_session=True,
                )
            workers.append(Worker(i, popen, log))
        supervise(workers, label or f"layout {layout.key}", case_timeout, watched, on_poll,
                  workers_ours=program is None)
    except WorkerFailed as exc:
        if program is not None and exc.code is not None:  # a profiled program's peers end
            _let_end(workers, PEERS_END_S)  # by themselves on a failure, their records whole
        raise
    finally:
        terminate(workers)
    return [w.log for w in workers]


#: how long a profiled program's processes are given to end by themselves once one has
#: failed (each sees the failure at its next beat and writes its record's end) before
#: they are stopped; under load one had been stopped before writing it
PEERS_END_S = 5.0


def _let_end(workers: Sequence[Worker], within: float) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(w.popen.poll() is None for w in workers):
        time.sleep(0.05)
