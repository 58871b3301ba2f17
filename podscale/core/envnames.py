"""Every environment variable podscale sets or reads, named once (``tests/test_lint.py``
holds that no other module spells one). :data:`VARIABLES` says who sets each and what it
says; :data:`OWNED` are those podscale's launchers set for every process, which an A/B
arm or a user cannot change (:func:`podscale.core.environment.check_owned_env`)."""

from __future__ import annotations

CPU_DEVICES = "PODSCALE_CPU_DEVICES"
#: CPU_DEVICES' value for a profiled program's own device count (``profile`` without
#: ``--devices-per-host``)
PROGRAMS_OWN = "program"
COORDINATOR = "PODSCALE_COORDINATOR"
NUM_PROCESSES = "PODSCALE_NUM_PROCESSES"
PROCESS_ID = "PODSCALE_PROCESS_ID"
CLUSTER = "PODSCALE_CLUSTER"
PARENT_PID = "PODSCALE_PARENT_PID"
PROFILE_SUPERVISED = "PODSCALE_PROFILE_SUPERVISED"
INIT_TIMEOUT = "PODSCALE_INIT_TIMEOUT"
DEBUG = "PODSCALE_DEBUG"
FAULT = "PODSCALE_FAULT"
FAULT_ENV = "PODSCALE_FAULT_ENV"
CLOCK_SKEW = "PODSCALE_CLOCK_SKEW"
HANG_AUTO_MIN_S = "PODSCALE_HANG_AUTO_MIN_S"
ACCELERATORS = "PODSCALE_ACCELERATORS"
ASV_PLATFORM = "PODSCALE_ASV_PLATFORM"
ARM_VARS = "PODSCALE_ARM_VARS"
RAY_SHIP = "PODSCALE_RAY_SHIP"

#: name: (who sets it, what it says)
VARIABLES: dict[str, tuple[str, str]] = {
    CPU_DEVICES: ("local launcher", "simulate this many CPU devices per process, with gloo "
                  "collectives"),
    COORDINATOR: ("local launcher, ray", "the coordinator's host:port it chose"),
    NUM_PROCESSES: ("local launcher, ray", "the job's process count"),
    PROCESS_ID: ("local launcher, ray", "this process's index"),
    CLUSTER: ("mpirun, srun, generated jobs", "auto: join the cluster JAX detects (mpirun, "
              "srun, a TPU pod, Kubernetes)"),
    PARENT_PID: ("local launcher", "the launcher's pid: the process dies with it (the "
                 "lifeline)"),
    PROFILE_SUPERVISED: ("podscale profile", "a profiled process under its supervisor, not "
                         "a bare podscale attach"),
    INIT_TIMEOUT: ("the user", "seconds jax.distributed.initialize waits for every process: "
                   "a number > 0, at most 86,400; a fraction rounds up"),
    DEBUG: ("the user", "a traceback instead of the one-line error"),
    FAULT: ("tests, bench-self", "a planted fault: KIND[=ARG]@PROCESS:CASE"),
    FAULT_ENV: ("tests", "a planted variable on one process: P:NAME=VALUE"),
    CLOCK_SKEW: ("tests", "planted clock offsets of profiled processes: P:SECONDS,..."),
    HANG_AUTO_MIN_S: ("tests", "the automatic hang timeout's floor, seconds (tests plant a "
                      "short one)"),
    ACCELERATORS: ("tests", "this machine's chips, planted: PLATFORM:KIND:COUNT "
                   "(tpu:TPU v5 lite:4), or none"),
    ASV_PLATFORM: ("the user", "the platform asv's benchmarks measure: auto (the default: "
                   "the chips found, else the CPU) or cpu"),
    ARM_VARS: ("podscale profile's A/B", "the variables an arm sets, which a profiled "
               "process reports as it ran with them (a program may replace them)"),
    RAY_SHIP: ("tests", "1: under --launcher ray every actor runs in its own copy of the "
               "run folder, shipped through Ray's object store, as on a node that does not "
               "share it"),
}

OWNED = (CLUSTER, COORDINATOR, CPU_DEVICES, NUM_PROCESSES, PARENT_PID, PROCESS_ID,
         PROFILE_SUPERVISED)
