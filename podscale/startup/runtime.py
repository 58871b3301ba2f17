"""Start JAX in a worker: CPU simulation settings, ``jax.distributed.initialize``, barriers.

Environment read here (set by podscale's local launcher; absent on a real cluster):

- ``PODSCALE_CPU_DEVICES``: simulate this many CPU devices per process, with gloo collectives.
- ``PODSCALE_COORDINATOR``, ``PODSCALE_NUM_PROCESSES``, ``PODSCALE_PROCESS_ID``: explicit
  coordinator on loopback. Without them and with ``PODSCALE_CLUSTER=auto`` (or any multi-host
  environment JAX recognises), ``jax.distributed.initialize()`` auto-detects the cluster.
"""

from __future__ import annotations

import itertools
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from podscale.core import defaults, envnames, lines
from podscale.core.environment import init_timeout
from podscale.core.records import EnvRecord
from podscale.startup.jaxapi import DEGRADED, coordination_client


@dataclass(frozen=True)
class Runtime:
    """What a worker knows about the JAX world it runs in."""

    process: int
    process_count: int
    local_device_count: int
    device_count: int
    #: where this process stands, for the stuck-rank watchdog (podscale worker); None
    #: where a supervisor watches instead
    progress: Any = None

    def mark(self, case: int, case_id: str, phase: str, iteration: int = 0) -> None:
        """Note progress (a few attribute writes: cheap enough for every iteration)."""
        if self.progress is not None:
            self.progress.mark(case, case_id, phase, iteration)

    def dispatched(self, waiting: bool) -> None:
        """Note that this process's step is dispatched and it waits for the result (the
        device, or a collective's peers), or (False) that the result came and it runs
        host-side again."""
        if self.progress is not None:
            self.progress.dispatched = waiting

    def barrier(self, name: str = "podscale") -> None:
        """All processes meet here. The coordination service's barrier (a gRPC round trip,
        ~0.7 ms for 4 local processes) where JAX exposes it; otherwise
        ``multihost_utils.sync_global_devices`` (an all-gather over every device, ~6 ms)."""
        if self.process_count <= 1:
            return
        client = coordination_client()
        if client is not None:
            client.wait_at_barrier(f"podscale-{next(_BARRIERS)}", BARRIER_TIMEOUT_MS)
            return
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


_BARRIERS = itertools.count()
BARRIER_TIMEOUT_MS = 24 * 3600 * 1000  # hangs are the supervisor's case timeout to catch


def first_line(exc: BaseException) -> str:
    """An exception's first non-blank line (its type's name where it says nothing)."""
    return next((s.strip() for s in str(exc).splitlines() if s.strip()), type(exc).__name__)


def join_failed(process: int, coordinator: str, timeout: int, exc: Exception,
                waited: float) -> Exception:
    """One line on a failed join: which process, where, after how long (of the timeout),
    and JAX's reason (which names the processes that never joined where the coordination
    service knows them)."""
    from podscale.core.errors import WorkerFailed

    reason = first_line(exc)
    when = f"within {timeout}s" if waited >= timeout - 1 else \
        f"after {waited:.1f}s (of a {timeout}s timeout)"
    return WorkerFailed(f"process {process} could not join the job at {coordinator} {when}: "
                        f"{reason[:300]}")


def join_detected(jax: Any) -> None:
    """Join the cluster JAX detects. Where it finds none (a ValueError), or finds signs of
    one it cannot describe (an OSError: a TPU VM whose metadata server is out of reach),
    this is a one-process job, said in one line; a cluster found whose join then fails is
    a UsageError naming the cause (exit 2)."""
    from podscale.core.errors import UsageError
    from podscale.startup.jaxapi import detected_join

    began = time.monotonic()
    timeout = init_timeout(defaults.JOIN_TIMEOUT_DETECTED)
    try:
        address, _, index = detected_join()
        if address and index:  # JAX ends a process whose coordinator never answers
            _reach(address, index, timeout)
        jax.distributed.initialize(initialization_timeout=timeout)
    except (ValueError, OSError) as exc:  # nothing to join
        reason = first_line(exc)
        if isinstance(exc, ValueError) and "coordinator_address" in reason:
            reason = ("no cluster environment found (mpirun, Slurm, TPU VM, Kubernetes, or "
                      "JAX_COORDINATOR_ADDRESS)")
        else:
            reason = (f"no cluster could be described ({type(exc).__name__}: "
                      f"{reason[:100]}{'...' if len(reason) > 100 else ''})")
        lines.say(f"podscale: {reason}: running as a one-process job", err=True)
    except UsageError:
        raise
    except Exception as exc:  # a cluster found, and its join failed
        reason = first_line(exc)
        raise UsageError(f"this job's cluster was found but joining it failed after "
                         f"{time.monotonic() - began:.1f}s: {reason[:300]}") from None


def _reach(address: str, index: int, timeout: int) -> None:
    """Wait (``timeout`` s at most) until the detected coordinator accepts a connection;
    UsageError naming it where it never does."""
    from podscale.core.errors import UsageError

    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
                return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise UsageError(f"process {index} could not reach this job's coordinator "
                                 f"at {address} within {timeout}s ({exc.strerror or exc}): "
                                 "is process 0 running, and is the port open between the "
                                 "hosts?") from None
        time.sleep(0.5)


def simulate_cpu(jax: Any) -> None:
    """``PODSCALE_CPU_DEVICES``: this many CPU devices per process, with gloo collectives
    (``program``: as many as the program asks for itself, its XLA_FLAGS'
    ``--xla_force_host_platform_device_count``, else JAX's one)."""
    cpu_devices = os.environ.get(envnames.CPU_DEVICES)
    if cpu_devices:
        jax.config.update("jax_platforms", "cpu")
        if cpu_devices != envnames.PROGRAMS_OWN:
            jax.config.update("jax_num_cpu_devices", int(cpu_devices))
        jax.config.update("jax_cpu_collectives_implementation", "gloo")


def local_join() -> dict[str, Any] | None:
    """``jax.distributed.initialize``'s arguments for the coordinator podscale's local
    launcher named (``PODSCALE_COORDINATOR`` and friends), or None where it named none:
    simulated hosts bind to loopback only, real hosts as JAX does by default."""
    coordinator = os.environ.get(envnames.COORDINATOR)
    if not coordinator:
        return None
    host = coordinator.rsplit(":", 1)[0]
    return {"coordinator_address": coordinator,
            "coordinator_bind_address": coordinator if host in ("127.0.0.1", "localhost")
            else None,
            "num_processes": int(os.environ[envnames.NUM_PROCESSES]),
            "process_id": int(os.environ[envnames.PROCESS_ID])}


def small_pages() -> None:
    """numpy's arrays in this process without transparent huge pages (what
    ``NUMPY_MADVISE_HUGEPAGE=0`` sets at import): a worker's inputs, references and checks
    are host buffers it writes once in a short-lived process, where the kernel's direct
    compaction on each first touch of a huge page cost more than the pages save (a
    128 MiB buffer with 128 elements set: 0.6 s against 2 ms, four processes at once). The
    device buffers the timed steps read are the runtime's own, not numpy's."""
    import numpy as np

    core = getattr(np, "_core", None) or np.core
    setter = getattr(core.multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)


#: JAX's own variable for its preemption service, which catches SIGTERM once a process
#: has joined (a worker then ran on, its run "complete"); podscale's workers reach no
#: preemption sync point, so they run without it unless the user sets this variable
PREEMPTION = "JAX_ENABLE_PREEMPTION_SERVICE"


def start() -> Runtime:
    """Configure JAX from the environment and join the distributed job (the ledger marks
    when JAX was imported, when joining began and when it ended)."""
    from podscale.startup import faults, ledger

    ledger.mark("worker")  # where no entry point marked it earlier
    import jax

    ledger.mark("imported")
    small_pages()
    faults.before_join(faults.from_env())
    ledger.mark("init_start")
    simulate_cpu(jax)
    if PREEMPTION not in os.environ:  # SIGTERM ends a worker, as it would without JAX
        jax.config.update("jax_enable_preemption_service", False)
    join = local_join()
    if join:
        timeout = init_timeout(defaults.JOIN_TIMEOUT_LOCAL)
        began = time.monotonic()
        try:
            jax.distributed.initialize(**join, initialization_timeout=timeout)
        except Exception as exc:  # a peer never came, or the coordinator is unreachable
            raise join_failed(join["process_id"], join["coordinator_address"], timeout, exc,
                              time.monotonic() - began) from None
    elif os.environ.get(envnames.CLUSTER) == "auto":
        join_detected(jax)
    ledger.mark("joined")
    return Runtime(
        process=jax.process_index(),
        process_count=jax.process_count(),
        local_device_count=jax.local_device_count(),
        device_count=jax.device_count(),
    )


def env_record(rt: Runtime, **extra: Any) -> EnvRecord:
    """The :class:`EnvRecord` of this process: its devices as JAX sees them (the run's
    launcher-side environment is :func:`podscale.core.environment.environment`)."""
    import jax
    import jaxlib

    dev = jax.local_devices()[0]
    return EnvRecord(
        process=rt.process,
        process_count=rt.process_count,
        local_device_count=rt.local_device_count,
        global_device_count=rt.device_count,
        platform=dev.platform,
        device_kind=dev.device_kind,
        jax=jax.__version__,
        jaxlib=jaxlib.__version__,
        hostname=socket.gethostname(),
        pid=os.getpid(),
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        # JAX hooks this release lacked so far (podscale.startup.jaxapi): what they cost
        extra={**extra, **({"degraded": dict(DEGRADED)} if DEGRADED else {}),
               **slice_of(dev)},
    )


def slice_of(dev: Any) -> dict[str, Any]:
    """This process's slice of a multi-slice job: the device's own (a TPU's
    ``slice_index``), else the ``MEGASCALE_SLICE_ID`` its launcher gave (the CPU's devices
    carry no slice: derived from the process, and said so); none in a one-slice job."""
    own = getattr(dev, "slice_index", None) if dev.platform != "cpu" else None  # CPU: 0
    given = os.environ.get("MEGASCALE_SLICE_ID", "")
    if own is not None and (given or int(own)):
        return {"slice": int(own), "slice_from": "the device"}
    if given.isdigit():
        return {"slice": int(given), "slice_from": "MEGASCALE_SLICE_ID (the launcher's: "
                "these devices carry no slice)"}
    return {}


def job_slices() -> int:
    """The slice count a multi-slice job's launcher gave (``MEGASCALE_NUM_SLICES``: a
    JobSet's, xpk's, the local launcher's), 1 where none did."""
    said = os.environ.get("MEGASCALE_NUM_SLICES", "")
    return int(said) if said.isdigit() and int(said) > 0 else 1


def shutdown(rt: Runtime) -> None:
    if rt.process_count > 1:
        import jax

        jax.distributed.shutdown()
