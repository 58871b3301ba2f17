"""Every environment variable podscale sets or reads, named once (``tests/test_lint.py``
holds that no other module spells one). :data:`VARIABLES` says who sets each and what it
says; :data:`OWNED` are those podscale's launchers set for every process, which an A/B
arm or a user cannot change (:func:`podscale.core.environment.check_owned_env`)."""

from __future__ import annotations

#: simulate this many CPU devices per process, with gloo collectives
CPU_DEVICES = "PODSCALE_CPU_DEVICES"
#: the coordinator's ``host:port`` podscale's local launcher chose
COORDINATOR = "PODSCALE_COORDINATOR"
#: the job's process count and this process's index (podscale's local launcher)
NUM_PROCESSES = "PODSCALE_NUM_PROCESSES"
PROCESS_ID = "PODSCALE_PROCESS_ID"
#: ``auto``: join the cluster JAX detects (mpirun, srun, a TPU pod, Kubernetes)
CLUSTER = "PODSCALE_CLUSTER"
#: the launcher's pid: the process dies with it (the lifeline)
PARENT_PID = "PODSCALE_PARENT_PID"
#: a profiled process under ``podscale profile``'s supervisor (not a bare ``attach``)
PROFILE_SUPERVISED = "PODSCALE_PROFILE_SUPERVISED"
#: seconds ``jax.distributed.initialize`` waits for every process
INIT_TIMEOUT = "PODSCALE_INIT_TIMEOUT"
#: a traceback instead of the one-line error
DEBUG = "PODSCALE_DEBUG"
#: planted faults, for testing podscale itself: ``KIND[=ARG]@PROCESS:CASE``
FAULT = "PODSCALE_FAULT"
#: a planted variable on one process, for testing podscale itself: ``P:NAME=VALUE``
FAULT_ENV = "PODSCALE_FAULT_ENV"
#: planted clock offsets of profiled processes (tests): ``P:SECONDS,...``
CLOCK_SKEW = "PODSCALE_CLOCK_SKEW"
#: the automatic hang timeout's floor, seconds (tests plant a short one)
HANG_AUTO_MIN_S = "PODSCALE_HANG_AUTO_MIN_S"

#: name: (who sets it, what it says)
VARIABLES: dict[str, tuple[str, str]] = {
    CPU_DEVICES: ("local launcher", "CPU devices per simulated host (gloo collectives)"),
    COORDINATOR: ("local launcher", "the coordinator's host:port on loopback"),
    NUM_PROCESSES: ("local launcher", "the job's process count"),
    PROCESS_ID: ("local launcher", "this process's index"),
    CLUSTER: ("mpirun, srun, generated jobs", "auto: join the cluster JAX detects"),
    PARENT_PID: ("local launcher", "the launcher's pid: the process dies with it"),
    PROFILE_SUPERVISED: ("podscale profile", "a supervisor watches the profiled process"),
    INIT_TIMEOUT: ("the user", "seconds the join waits for every process"),
    DEBUG: ("the user", "print the traceback behind a one-line error"),
    FAULT: ("tests, bench-self", "a planted fault: KIND[=ARG]@PROCESS:CASE"),
    FAULT_ENV: ("tests", "a planted variable on one process: P:NAME=VALUE"),
    CLOCK_SKEW: ("tests", "planted clock offsets of profiled processes: P:SECONDS,..."),
    HANG_AUTO_MIN_S: ("tests", "the automatic hang timeout's floor, seconds"),
}

OWNED = (CLUSTER, COORDINATOR, CPU_DEVICES, NUM_PROCESSES, PARENT_PID, PROCESS_ID,
         PROFILE_SUPERVISED)
