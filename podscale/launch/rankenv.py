"""The rank variables of launchers podscale does not start, given to a profiled program
that reads its rank itself (``profile --rank-env``)."""

from __future__ import annotations

from collections.abc import Callable

#: the variables a launcher gives each process its rank in, for a program that reads them
#: itself (``profile --rank-env``); never those by which JAX detects that launcher
#: (``SLURM_JOB_ID``, ``OMPI_MCA_orte_hnp_uri``, Kubernetes' service host), so the job's
#: own coordinator stays the one podscale started
RANK_ENVS: dict[str, Callable[[int, int], dict[str, str]]] = {
    # a JobSet's (xpk's) pod of one job: its job's index, its pod's index in the job, the
    # job's pods, the processes, and the coordinator's host (the program picks the port:
    # MaxText's hardware=cpu binds 1234 there)
    "k8s": lambda i, n: {"JOB_INDEX": "0", "JOB_COMPLETION_INDEX": str(i),
                         "PROCESSES_IN_JOB": str(n), "JAX_PROCESS_COUNT": str(n),
                         "JAX_COORDINATOR_ADDRESS": "127.0.0.1"},
    "slurm": lambda i, n: {"SLURM_PROCID": str(i), "SLURM_NTASKS": str(n),
                           "SLURM_NODEID": str(i), "SLURM_LOCALID": "0"},
    "mpi": lambda i, n: {"OMPI_COMM_WORLD_RANK": str(i), "OMPI_COMM_WORLD_SIZE": str(n),
                         "OMPI_COMM_WORLD_LOCAL_RANK": "0", "PMI_RANK": str(i),
                         "PMI_SIZE": str(n)},
}
